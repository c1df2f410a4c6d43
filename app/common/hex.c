/* hex.c: hexadecimal text of bytes (hex.h). */
#include "sandboxd/common/hex.h"

void hex_encode(char *out, const void *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = bytes;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
}

int hex_value(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int hex_is(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return n > 0;
}

int hex_decode(unsigned char *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hex_value(s[2 * i]), lo = hi < 0 ? -1 : hex_value(s[2 * i + 1]);
		if (lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}
