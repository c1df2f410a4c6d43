/* test_strv.c: bounded argv and environment lists: NULL-terminated at every step, copies in
 * the pool, ERR_TOOBIG at the bound with the list unchanged, the first error kept. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/common/err.h"
#include "sandboxd/lib/pool.h"
#include "sandboxd/lib/strv.h"
#include "sandboxd/common/banned.h"

static struct pool pool;

static int setup(void **state)
{
	(void)state;
	pool_init(&pool, 1 << 16);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pool_release(&pool);
	return 0;
}

static void test_add_copies_and_terminates(void **state)
{
	struct strv s;
	char name[] = "git";

	(void)state;
	assert_int_equal(strv_init(&s, &pool, 4), 0);
	assert_int_equal(s.n, 0);
	assert_null(s.v[0]);
	assert_int_equal(strv_add(&s, name), 0);
	name[0] = 'X';  /* a copy was kept */
	assert_int_equal(strv_addf(&s, "%s-%d", "http", 2), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.v[0], "git");
	assert_string_equal(s.v[1], "http-2");
	assert_null(s.v[2]);
	assert_int_equal(s.err, 0);
}

static void test_bound_is_toobig_never_a_cut(void **state)
{
	struct strv s;

	(void)state;
	assert_int_equal(strv_init(&s, &pool, 2), 0);
	assert_int_equal(strv_add(&s, "a"), 0);
	assert_int_equal(strv_setenv(&s, "B", "2"), 0);
	assert_int_equal(strv_add(&s, "c"), ERR_TOOBIG);
	assert_int_equal(strv_addf(&s, "%s", "d"), ERR_TOOBIG);
	assert_int_equal(strv_setenv(&s, "E", "5"), ERR_TOOBIG);
	/* the list is as it was before the first failure, and still terminated */
	assert_int_equal(s.n, 2);
	assert_string_equal(s.v[0], "a");
	assert_string_equal(s.v[1], "B=2");
	assert_null(s.v[2]);
	assert_int_equal(s.err, ERR_TOOBIG);
}

static void test_first_error_is_kept(void **state)
{
	struct strv s;

	(void)state;
	assert_int_equal(strv_init(&s, &pool, 8), 0);
	assert_int_equal(strv_add(&s, NULL), ERR_INVALID);
	/* every later add fails the same way and adds nothing, even one that would fit */
	assert_int_equal(strv_add(&s, "a"), ERR_INVALID);
	assert_int_equal(s.n, 0);
	assert_null(s.v[0]);
	assert_int_equal(s.err, ERR_INVALID);
}

static void test_setenv(void **state)
{
	struct strv s;

	(void)state;
	assert_int_equal(strv_init(&s, &pool, 8), 0);
	assert_int_equal(strv_setenv(&s, "PATH", "/bin"), 0);
	assert_int_equal(strv_setenv(&s, "EMPTY", ""), 0);
	/* a NULL value leaves the variable out on purpose: no error, nothing added */
	assert_int_equal(strv_setenv(&s, "ABSENT", NULL), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.v[0], "PATH=/bin");
	assert_string_equal(s.v[1], "EMPTY=");
	assert_null(s.v[2]);
	assert_int_equal(s.err, 0);
}

static void test_setenv_bad_names(void **state)
{
	const char *bad[] = { NULL, "", "A=B" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct strv s;

		assert_int_equal(strv_init(&s, &pool, 8), 0);
		assert_int_equal(strv_setenv(&s, bad[i], "x"), ERR_INVALID);
		assert_int_equal(s.n, 0);
	}
}

static void test_pool_exhausted(void **state)
{
	struct pool small;
	struct strv s;
	char big[512];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	pool_init(&small, 1024);
	assert_int_equal(strv_init(&s, &small, 4), 0);
	assert_int_equal(strv_add(&s, big), 0);
	assert_int_equal(strv_add(&s, big), ERR_NOMEM);
	assert_int_equal(s.n, 1);
	assert_null(s.v[1]);
	/* slots themselves past the pool's maximum */
	assert_int_equal(strv_init(&s, &small, 1000), ERR_NOMEM);
	assert_int_equal(strv_add(&s, "a"), ERR_NOMEM);
	assert_int_equal(strv_init(&s, &small, (size_t)-1), ERR_NOMEM);
	pool_release(&small);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_add_copies_and_terminates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound_is_toobig_never_a_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_error_is_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setenv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setenv_bad_names, setup, teardown),
		cmocka_unit_test(test_pool_exhausted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
