/* test_num.c: bounded decimal parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "sandboxd/common/err.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/common/banned.h"

static void ok(const char *s, int64_t min, int64_t max, int64_t want)
{
	int64_t v = 12345;

	if (num_parse(s, min, max, &v))
		fail_msg("'%s' refused in [%lld, %lld]", s, (long long)min, (long long)max);
	assert_true(v == want);
}

static void bad(const char *s, int64_t min, int64_t max)
{
	int64_t v = 12345;

	if (num_parse(s, min, max, &v) != ERR_INVALID)
		fail_msg("'%s' accepted in [%lld, %lld]", s ? s : "(null)", (long long)min,
			 (long long)max);
	assert_true(v == 12345);   /* out is untouched on failure */
}

static void test_bounds(void **state)
{
	ok("0", 0, 10, 0);
	ok("10", 0, 10, 10);
	ok("5", 5, 5, 5);
	bad("11", 0, 10);
	bad("4", 5, 5);
	bad("6", 5, 5);
	ok("1024", 1024, 65536, 1024);
	bad("1023", 1024, 65536);
	bad("65537", 1024, 65536);
}

static void test_sign(void **state)
{
	ok("-1", -5, 5, -1);
	ok("-5", -5, 5, -5);
	bad("-6", -5, 5);
	ok("-0", -1, 1, 0);
	/* a '-' only when min < 0 */
	bad("-0", 0, 10);
	bad("-1", 0, 10);
	bad("+1", -5, 5);
	bad("+1", 0, 5);
	bad("-", -5, 5);
	bad("--1", -5, 5);
	bad("-+1", -5, 5);
	bad("1-", -5, 5);
	bad("- 1", -5, 5);
}

static void test_empty_and_junk(void **state)
{
	bad("", 0, 10);
	bad(NULL, 0, 10);
	bad(" 1", 0, 10);
	bad("1 ", 0, 10);
	bad("1\n", 0, 10);
	bad("1a", 0, 10);
	bad("a1", 0, 10);
	bad("0x1", 0, 10);
	bad("1.0", 0, 10);
	bad("1e1", 0, 100);
	bad("1,000", 0, 10000);
	bad("\xd9\xa1", 0, 10);   /* ARABIC-INDIC DIGIT ONE */
}

static void test_leading_zeros(void **state)
{
	ok("007", 0, 10, 7);
	ok("-007", -10, 10, -7);
	ok("0000000000000000000000000000000000000001", 0, 10, 1);
	ok("00000000000000000000009223372036854775807", 0, INT64_MAX, INT64_MAX);
}

static void test_int64_limits(void **state)
{
	ok("9223372036854775807", INT64_MIN, INT64_MAX, INT64_MAX);
	ok("-9223372036854775808", INT64_MIN, INT64_MAX, INT64_MIN);
	ok("-9223372036854775807", INT64_MIN, INT64_MAX, INT64_MIN + 1);
	bad("9223372036854775808", INT64_MIN, INT64_MAX);
	bad("-9223372036854775809", INT64_MIN, INT64_MAX);
	bad("9223372036854775810", INT64_MIN, INT64_MAX);
	bad("18446744073709551615", INT64_MIN, INT64_MAX);
	/* 2^64 and 2^64 + 1 would wrap to 0 and 1 in unchecked arithmetic */
	bad("18446744073709551616", INT64_MIN, INT64_MAX);
	bad("18446744073709551617", 0, 10);
	bad("99999999999999999999", INT64_MIN, INT64_MAX);
	bad("-99999999999999999999", INT64_MIN, INT64_MAX);
	bad("999999999999999999999999999999999999999999999", 0, INT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_sign),
		cmocka_unit_test(test_empty_and_junk),
		cmocka_unit_test(test_leading_zeros),
		cmocka_unit_test(test_int64_limits),
	};

	return cmocka_run_group_tests_name("num", tests, NULL, NULL);
}
