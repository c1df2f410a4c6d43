/* test_boxuser.c: root inside only when the engine keeps it from the host's (userns-remap or
 * gVisor), with Docker's default capabilities less NET_RAW and MKNOD; else the fallback uid
 * with every capability dropped. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/common/banned.h"

static void test_remapped_root(void **state)
{
	struct config cfg = { .sandbox_uid = 61000 };
	struct boxuser bu;
	const char *iso[] = { "userns", "runsc" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		boxuser_for(&cfg, iso[i], &bu);
		assert_int_equal(bu.root, 1);
		assert_string_equal(bu.mode, iso[i]);
		assert_int_equal(bu.uid, 0);
		assert_string_equal(bu.user, "0:0");
		assert_string_equal(bu.home, "/root");
		assert_non_null(bu.cap_drop);
		assert_string_equal(bu.cap_drop[0], "NET_RAW");
		assert_string_equal(bu.cap_drop[1], "MKNOD");
		assert_null(bu.cap_drop[2]);
	}
}

static void test_fallback(void **state)
{
	struct config cfg = { .sandbox_uid = 61000 };
	struct boxuser bu;
	const char *iso[] = { "", "seccomp", "user", "usernsx", NULL };

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		boxuser_for(&cfg, iso[i], &bu);
		assert_int_equal(bu.root, 0);
		assert_string_equal(bu.mode, "fallback");
		assert_int_equal(bu.uid, 61000);
		assert_string_equal(bu.user, "61000:61000");
		assert_string_equal(bu.home, "/home/sandbox");
		assert_null(bu.cap_drop);   /* docker_container.c: CapDrop ALL */
	}
	cfg.sandbox_uid = 4242;
	boxuser_for(&cfg, "", &bu);
	assert_string_equal(bu.user, "4242:4242");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remapped_root),
		cmocka_unit_test(test_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
