/* base64.c: strict standard base64. */
#include <stdint.h>
#include "sandboxd/base64.h"
#include "sandboxd/err.h"
#include "sandboxd/banned.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_size(size_t n)
{
	return (n + 2) / 3 * 4 + 1;
}

void base64_encode(const unsigned char *in, size_t n, char *out)
{
	size_t i = 0;
	char *o = out;

	for (; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*o++ = alphabet[v >> 18 & 63];
		*o++ = alphabet[v >> 12 & 63];
		*o++ = alphabet[v >> 6 & 63];
		*o++ = alphabet[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
		*o++ = alphabet[v >> 18 & 63];
		*o++ = alphabet[v >> 12 & 63];
		*o++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = 0;
}

static int value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int base64_decode(const char *in, size_t n, unsigned char *out, size_t *outlen)
{
	size_t o = 0;

	if (n % 4)
		return ERR_INVALID;
	for (size_t i = 0; i < n; i += 4) {
		int a = value((unsigned char)in[i]), b = value((unsigned char)in[i + 1]);
		int c = value((unsigned char)in[i + 2]), d = value((unsigned char)in[i + 3]);
		int last = i + 4 == n;

		if (a < 0 || b < 0)
			return ERR_INVALID;
		if (last && in[i + 2] == '=' && in[i + 3] == '=') {
			if (b & 15) /* non-canonical: bits that padding says are zero */
				return ERR_INVALID;
			out[o++] = (unsigned char)(a << 2 | b >> 4);
			break;
		}
		if (c < 0)
			return ERR_INVALID;
		if (last && in[i + 3] == '=') {
			if (c & 3)
				return ERR_INVALID;
			out[o++] = (unsigned char)(a << 2 | b >> 4);
			out[o++] = (unsigned char)((b & 15) << 4 | c >> 2);
			break;
		}
		if (d < 0)
			return ERR_INVALID;
		out[o++] = (unsigned char)(a << 2 | b >> 4);
		out[o++] = (unsigned char)((b & 15) << 4 | c >> 2);
		out[o++] = (unsigned char)((c & 3) << 6 | d);
	}
	*outlen = o;
	return 0;
}
