/* test_hex.c: hex_encode, hex_value, hex_is, hex_decode. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/common/hex.h"

static void test_encode(void **state)
{
	const unsigned char b[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	char out[2 * sizeof(b) + 1];

	memset(out, 'x', sizeof(out));
	hex_encode(out, b, sizeof(b));
	assert_string_equal(out, "00017f80abff");
	hex_encode(out, b, 0);
	assert_string_equal(out, "");
}

static void test_value_and_is(void **state)
{
	assert_int_equal(hex_value('0'), 0);
	assert_int_equal(hex_value('9'), 9);
	assert_int_equal(hex_value('a'), 10);
	assert_int_equal(hex_value('F'), 15);
	assert_int_equal(hex_value('g'), -1);
	assert_int_equal(hex_value(0), -1);
	assert_int_equal(hex_value(-1), -1);
	assert_int_equal(hex_is("0123456789abcdef", 16), 1);
	assert_int_equal(hex_is("0123456789abcdeF", 16), 0);   /* lower case only */
	assert_int_equal(hex_is("12 4", 4), 0);
	assert_int_equal(hex_is("ab\0c", 4), 0);               /* a NUL inside is no digit */
	assert_int_equal(hex_is("", 0), 0);
}

static void test_decode(void **state)
{
	unsigned char out[4];

	assert_int_equal(hex_decode(out, "00fF7a80", 4), 0);
	assert_memory_equal(out, "\x00\xff\x7a\x80", 4);
	assert_int_equal(hex_decode(out, "00fg", 2), -1);
	assert_int_equal(hex_decode(out, "0", 1), -1);        /* the NUL after one digit */
	assert_int_equal(hex_decode(out, "", 0), 0);
	/* Round trip of every byte. */
	unsigned char all[256], back[256];
	char text[513];
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	hex_encode(text, all, sizeof(all));
	assert_int_equal(hex_is(text, 512), 1);
	assert_int_equal(hex_decode(back, text, sizeof(back)), 0);
	assert_memory_equal(all, back, sizeof(all));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_value_and_is),
		cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
