/* test_auth.c: role names, both ways. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "sandboxd/forge/auth.h"
#include "sandboxd/common/banned.h"

static void test_role_name(void **state)
{
	assert_string_equal(role_name(ROLE_NONE), "none");
	assert_string_equal(role_name(ROLE_READ), "read");
	assert_string_equal(role_name(ROLE_WRITE), "write");
	assert_string_equal(role_name(ROLE_ADMIN), "admin");
}

static void test_role_order(void **state)
{
	/* auth caps roles by comparing them: none < read < write < admin */
	assert_true(ROLE_NONE < ROLE_READ);
	assert_true(ROLE_READ < ROLE_WRITE);
	assert_true(ROLE_WRITE < ROLE_ADMIN);
	assert_int_equal(ROLE_NONE, 0);
}

static void test_role_parse(void **state)
{
	assert_int_equal(role_parse("read"), ROLE_READ);
	assert_int_equal(role_parse("write"), ROLE_WRITE);
	assert_int_equal(role_parse("admin"), ROLE_ADMIN);
}

static void test_role_parse_anything_else(void **state)
{
	static const char *v[] = {
		"none", "", "READ", "Read", "Write", "ADMIN", "read ", " read", "rea", "reader",
		"write\n", "maintain", "triage", "owner", "pull", "push", "1",
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (role_parse(v[i]) != ROLE_NONE)
			fail_msg("role_parse(\"%s\") is not ROLE_NONE", v[i]);
	assert_int_equal(role_parse(NULL), ROLE_NONE);
}

static void test_round_trip(void **state)
{
	for (enum role r = ROLE_READ; r <= ROLE_ADMIN; r++)
		assert_int_equal(role_parse(role_name(r)), r);
	assert_int_equal(role_parse(role_name(ROLE_NONE)), ROLE_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_role_name),
		cmocka_unit_test(test_role_order),
		cmocka_unit_test(test_role_parse),
		cmocka_unit_test(test_role_parse_anything_else),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
