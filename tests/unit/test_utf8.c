/* test_utf8.c: the strict UTF-8 decoder, with known vectors (RFC 3629's edges). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

#define U(s) ((const unsigned char *)(s))

static void test_seq_lengths(void **state)
{
	assert_int_equal(utf8_seq(U("a"), 1), 1);
	assert_int_equal(utf8_seq(U(""), 1), 1);                 /* NUL is a sequence */
	assert_int_equal(utf8_seq(U("\xc3\xa9"), 2), 2);         /* é */
	assert_int_equal(utf8_seq(U("\xe2\x9c\x93"), 3), 3);     /* ✓ */
	assert_int_equal(utf8_seq(U("\xf0\x9f\x98\x80"), 4), 4); /* 😀 */
	assert_int_equal(utf8_seq(U("\xf4\x8f\xbf\xbf"), 4), 4); /* U+10FFFF */
	assert_int_equal(utf8_seq(U("\xef\xbf\xbd"), 3), 3);     /* U+FFFD */
	assert_int_equal(utf8_seq(U("ab"), 0), 0);
}

static void test_seq_refused(void **state)
{
	static const char *const bad[] = {
		"\x80", "\xbf", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf",
		"\xed\xa0\x80", "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff",
		"\xc3\x28", "\xe2\x9c\x28", "\xe9",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (utf8_seq(U(bad[i]), strlen(bad[i])))
			fail_msg("vector %zu accepted", i);
	/* a sequence cut by n */
	assert_int_equal(utf8_seq(U("\xe2\x9c\x93"), 2), 0);
	assert_int_equal(utf8_seq(U("\xf0\x9f\x98\x80"), 3), 0);
}

static void test_text_ok(void **state)
{
	assert_true(utf8_text_ok(U(""), 0));
	assert_true(utf8_text_ok(U("h\xc3\xa9 \xe2\x9c\x93"), 7));
	assert_false(utf8_text_ok(U("a\0b"), 3));
	assert_false(utf8_text_ok(U("caf\xe9"), 4));  /* Latin-1 */
	assert_false(utf8_text_ok(U("ok\xc3"), 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seq_lengths),
		cmocka_unit_test(test_seq_refused),
		cmocka_unit_test(test_text_ok),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
