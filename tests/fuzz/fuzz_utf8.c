/* fuzz_utf8.c: utf8_seq and utf8_text_ok against a reference that decodes loosely (any
 * lead byte's length, any code point) and then demands what RFC 3629 demands: the code
 * point's shortest encoding is exactly the bytes read, no surrogate, nothing past
 * U+10FFFF. Also: utf8_text_ok is "every sequence valid and no NUL", and mcp_text_ok is
 * utf8_text_ok.
 *
 * Input: any bytes. */
#include "fuzz.h"
#include "sandboxd/proto/mcp.h"
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

/* The canonical encoding of cp into out; its length. */
static size_t encode(unsigned long cp, unsigned char out[4])
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

static size_t reference(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned long cp;
	unsigned char enc[4];

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		len = 1, cp = s[0];
	else if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (encode(cp, enc) != len || memcmp(enc, s, len))
		return 0;  /* overlong */
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *s = (unsigned char *)fuzz_dup(data, size);
	int ok = 1;

	for (size_t i = 0; i < size; i++) {
		size_t got = utf8_seq(s + i, size - i), want = reference(s + i, size - i);
		FUZZ_CHECK(got == want);
	}
	for (size_t i = 0, k; ok && i < size; i += k)
		if (s[i] == 0 || !(k = reference(s + i, size - i)))
			ok = 0;
	FUZZ_CHECK(utf8_text_ok(s, size) == ok);
	FUZZ_CHECK(mcp_text_ok(s, size) == ok);
	free(s);
	return 0;
}
