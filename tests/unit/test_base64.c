/* test_base64.c: RFC 4648 vectors and strict decoding. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

/* RFC 4648 §10 */
static const struct {
	const char *plain;
	const char *enc;
} rfc[] = {
	{ "", "" },
	{ "f", "Zg==" },
	{ "fo", "Zm8=" },
	{ "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" },
	{ "fooba", "Zm9vYmE=" },
	{ "foobar", "Zm9vYmFy" },
};

static void test_encoded_size(void **state)
{
	assert_int_equal(base64_encoded_size(0), 1);
	assert_int_equal(base64_encoded_size(1), 5);
	assert_int_equal(base64_encoded_size(2), 5);
	assert_int_equal(base64_encoded_size(3), 5);
	assert_int_equal(base64_encoded_size(4), 9);
	assert_int_equal(base64_encoded_size(6), 9);
	assert_int_equal(base64_encoded_size(7), 13);
}

static void test_encode_rfc(void **state)
{
	for (size_t i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		size_t n = strlen(rfc[i].plain);
		char out[16];

		memset(out, 'X', sizeof(out));
		assert_int_equal(base64_encoded_size(n), strlen(rfc[i].enc) + 1);
		base64_encode((const unsigned char *)rfc[i].plain, n, out);
		assert_string_equal(out, rfc[i].enc);
		/* nothing written past the NUL */
		assert_int_equal(out[strlen(rfc[i].enc) + 1], 'X');
	}
}

static void test_decode_rfc(void **state)
{
	for (size_t i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		unsigned char out[16];
		size_t len = 99;

		memset(out, 'X', sizeof(out));
		assert_int_equal(base64_decode(rfc[i].enc, strlen(rfc[i].enc), out, &len), 0);
		assert_int_equal(len, strlen(rfc[i].plain));
		assert_memory_equal(out, rfc[i].plain, len);
		assert_int_equal(out[len], 'X');
	}
}

static void test_encode_high_bits(void **state)
{
	const unsigned char in[] = { 0xfb, 0xff, 0xbf, 0x00, 0xff };
	char out[16];

	base64_encode(in, 3, out);
	assert_string_equal(out, "+/+/");
	base64_encode(in, 5, out);
	assert_string_equal(out, "+/+/AP8=");
	base64_encode(in + 3, 1, out);
	assert_string_equal(out, "AA==");
}

static void check_invalid(const char *s)
{
	unsigned char out[64];
	size_t len;

	assert_int_equal(base64_decode(s, strlen(s), out, &len), ERR_INVALID);
}

static void test_decode_non_canonical(void **state)
{
	/* the bits that padding declares zero must be zero */
	check_invalid("Zh==");
	check_invalid("Zn==");
	check_invalid("Zv==");
	check_invalid("Zm9=");
	check_invalid("Zm+=");
	check_invalid("Zm9vYh==");
	check_invalid("Zm9vYmF=");
}

static void test_decode_bad_length(void **state)
{
	check_invalid("Z");
	check_invalid("Zg");
	check_invalid("Zg=");
	check_invalid("Zm9");
	check_invalid("Zm9vY");
	check_invalid("Zm9vYmFy=");
	check_invalid("Zm9vYmFyZ");
}

static void test_decode_padding_misplaced(void **state)
{
	check_invalid("Zg==Zm9v");
	check_invalid("Zm8=Zm9v");
	check_invalid("Zm=v");
	check_invalid("Z=9v");
	check_invalid("=m9v");
	check_invalid("====");
	check_invalid("Z===");
	check_invalid("Zm9v====");
	check_invalid("Zm9v=Zm9");
	check_invalid("Zg=A");
}

static void test_decode_not_alphabet(void **state)
{
	check_invalid("Zm9 ");
	check_invalid(" Zm9v");
	check_invalid("Zm9v\n");
	check_invalid("Zm9v\nYmFy");
	check_invalid("Zm\r\n9v");
	check_invalid("Zm\t9");
	check_invalid("Zm9-");   /* base64url is not base64 */
	check_invalid("Zm9_");
	check_invalid("Zm9.");
	check_invalid("Zm9\xc3");
	check_invalid("Zm9*");
}

static void test_decode_embedded_nul(void **state)
{
	unsigned char out[8];
	size_t len;

	assert_int_equal(base64_decode("Zm\0v", 4, out, &len), ERR_INVALID);
	assert_int_equal(base64_decode("Zg=\0", 4, out, &len), ERR_INVALID);
}

static void test_decode_bounded_by_n(void **state)
{
	unsigned char out[8];
	size_t len;

	/* only the first four characters count */
	assert_int_equal(base64_decode("Zm9v!!!!", 4, out, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(out, "foo", 3);
	assert_int_equal(base64_decode("Zm9v", 0, out, &len), 0);
	assert_int_equal(len, 0);
}

static void test_all_bytes_round_trip(void **state)
{
	unsigned char in[256], back[256];
	char enc[4 * 86 + 1];
	size_t len;

	for (int i = 0; i < 256; i++)
		in[i] = (unsigned char)i;
	assert_int_equal(base64_encoded_size(256), sizeof(enc));
	/* every length 0..256 and every offset of the last group */
	for (size_t n = 0; n <= 256; n++) {
		base64_encode(in, n, enc);
		assert_int_equal(strlen(enc), (n + 2) / 3 * 4);
		assert_int_equal(base64_decode(enc, strlen(enc), back, &len), 0);
		assert_int_equal(len, n);
		assert_memory_equal(back, in, n);
	}
	/* each byte value alone, in each position of a group */
	for (int b = 0; b < 256; b++)
		for (size_t pos = 0; pos < 3; pos++) {
			unsigned char g[3] = { 0x55, 0xaa, 0x0f };
			char e[5];

			g[pos] = (unsigned char)b;
			base64_encode(g, 3, e);
			assert_int_equal(base64_decode(e, 4, back, &len), 0);
			assert_int_equal(len, 3);
			assert_memory_equal(back, g, 3);
		}
}

static void test_every_character_classified(void **state)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (int c = 1; c < 256; c++) {
		char s[5] = { 'A', 'A', 'A', (char)c, 0 };
		unsigned char out[3];
		size_t len;
		int in_alphabet = strchr(alphabet, c) != NULL;

		if (c == '=')
			continue;
		assert_int_equal(base64_decode(s, 4, out, &len), in_alphabet ? 0 : ERR_INVALID);
		if (in_alphabet) {
			assert_int_equal(len, 3);
			assert_int_equal(out[2], (unsigned char)(strchr(alphabet, c) - alphabet));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encoded_size),
		cmocka_unit_test(test_encode_rfc),
		cmocka_unit_test(test_decode_rfc),
		cmocka_unit_test(test_encode_high_bits),
		cmocka_unit_test(test_decode_non_canonical),
		cmocka_unit_test(test_decode_bad_length),
		cmocka_unit_test(test_decode_padding_misplaced),
		cmocka_unit_test(test_decode_not_alphabet),
		cmocka_unit_test(test_decode_embedded_nul),
		cmocka_unit_test(test_decode_bounded_by_n),
		cmocka_unit_test(test_all_bytes_round_trip),
		cmocka_unit_test(test_every_character_classified),
	};

	return cmocka_run_group_tests_name("base64", tests, NULL, NULL);
}
