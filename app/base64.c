/* base64.c: strict base64 (RFC 4648 §4, padded) and base64url (§5, unpadded, as JOSE
 * uses it). One encoder and one decoder serve both; only the alphabet's last two
 * characters and the padding differ. */
#include <stdint.h>
#include "sandboxd/base64.h"
#include "sandboxd/err.h"
#include "sandboxd/banned.h"

static const char std_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t base64_encoded_size(size_t n)
{
	return (n + 2) / 3 * 4 + 1;
}

size_t base64url_encoded_size(size_t n)
{
	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0) + 1;
}

static void encode(const unsigned char *in, size_t n, char *out, const char *alphabet, int pad)
{
	size_t i = 0;

	for (; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = alphabet[v >> 6 & 63];
		*out++ = alphabet[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		if (i + 1 < n)
			*out++ = alphabet[v >> 6 & 63];
		else if (pad)
			*out++ = '=';
		if (pad)
			*out++ = '=';
	}
	*out = 0;
}

void base64_encode(const unsigned char *in, size_t n, char *out)
{
	encode(in, n, out, std_alphabet, 1);
}

void base64url_encode(const unsigned char *in, size_t n, char *out)
{
	encode(in, n, out, url_alphabet, 0);
}

static int value(unsigned char c, int url)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (url ? '-' : '+'))
		return 62;
	if (c == (url ? '_' : '/'))
		return 63;
	return -1;
}

/* Decodes in[0..n) (no padding) with a tail of n % 4 characters; the bits past the last
 * whole byte must be zero, so every value has one encoding. */
static int decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *outlen,
		  int url)
{
	size_t rem = n % 4, o = 0;
	uint32_t acc = 0;

	*outlen = 0;
	if (rem == 1 || n / 4 * 3 + (rem ? rem - 1 : 0) > cap)
		return ERR_INVALID;
	for (size_t i = 0; i < n; i++) {
		int v = value((unsigned char)in[i], url);

		if (v < 0)
			return ERR_INVALID;
		acc = acc << 6 | (uint32_t)v;
		if (i % 4 == 3) {
			out[o++] = (unsigned char)(acc >> 16);
			out[o++] = (unsigned char)(acc >> 8);
			out[o++] = (unsigned char)acc;
			acc = 0;
		}
	}
	if (rem == 2) {
		if (acc & 0xf)
			return ERR_INVALID;
		out[o++] = (unsigned char)(acc >> 4);
	} else if (rem == 3) {
		if (acc & 0x3)
			return ERR_INVALID;
		out[o++] = (unsigned char)(acc >> 10);
		out[o++] = (unsigned char)(acc >> 2);
	}
	*outlen = o;
	return 0;
}

int base64_decode(const char *in, size_t n, unsigned char *out, size_t *outlen)
{
	size_t body = n;

	/* Padded: a multiple of 4, with at most two '=' and only at the end. */
	if (n % 4)
		return ERR_INVALID;
	if (body && in[body - 1] == '=')
		body--;
	if (body && in[body - 1] == '=')
		body--;
	if (n - body && body % 4 < 2)
		return ERR_INVALID;
	return decode(in, body, out, n / 4 * 3, outlen, 0);
}

int base64url_decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *outlen)
{
	return decode(in, n, out, cap, outlen, 1);
}
