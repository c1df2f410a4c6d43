/* base64.c: strict base64 (RFC 4648 §4, padded) and base64url (§5, unpadded, as JOSE
 * uses it). One encoder and one decoder serve both; only the alphabet's last two
 * characters and the padding differ. */
#include <stdint.h>
#include <string.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

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

/* Each character's value (low 6 bits) for both alphabets at once: 0x40 marks '+' and '/'
 * (standard only), 0x80 '-' and '_' (URL only), and 255, both marks, the characters of
 * neither. */
#define STD_ONLY 0x40
#define URL_ONLY 0x80
static const unsigned char values[256] = {
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 126, 255, 190, 255, 127,
	 52,  53,  54,  55,  56,  57,  58,  59,  60,  61, 255, 255, 255, 255, 255, 255,
	255,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13,  14,
	 15,  16,  17,  18,  19,  20,  21,  22,  23,  24,  25, 255, 255, 255, 255, 191,
	255,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,  38,  39,  40,
	 41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
};

/* Decodes in[0..n) (no padding) with a tail of n % 4 characters; the bits past the last
 * whole byte must be zero, so every value has one encoding. Four characters at a time
 * through a table: a file of 32 MiB goes through here. */
static int decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *outlen,
		  int url)
{
	const unsigned char *p = (const unsigned char *)in, *t = values;
	unsigned bad = url ? STD_ONLY : URL_ONLY;
	size_t rem = n % 4, o = 0, full = n - rem;
	unsigned a, b, c, d;

	*outlen = 0;
	if (rem == 1 || n / 4 * 3 + (rem ? rem - 1 : 0) > cap)
		return ERR_INVALID;
	for (size_t i = 0; i < full; i += 4) {
		a = t[p[i]];
		b = t[p[i + 1]];
		c = t[p[i + 2]];
		d = t[p[i + 3]];
		if ((a | b | c | d) & bad)
			return ERR_INVALID;
		a &= 0x3f;
		b &= 0x3f;
		c &= 0x3f;
		d &= 0x3f;
		out[o] = (unsigned char)(a << 2 | b >> 4);
		out[o + 1] = (unsigned char)(b << 4 | c >> 2);
		out[o + 2] = (unsigned char)(c << 6 | d);
		o += 3;
	}
	p += full;
	if (rem >= 2) {
		a = t[p[0]];
		b = t[p[1]];
		c = rem == 3 ? t[p[2]] : 0;
		if ((a | b | c) & bad)
			return ERR_INVALID;
		a &= 0x3f;
		b &= 0x3f;
		c &= 0x3f;
		if (rem == 2 && (b & 0xf))
			return ERR_INVALID;
		if (rem == 3 && (c & 0x3))
			return ERR_INVALID;
		out[o++] = (unsigned char)(a << 2 | b >> 4);
		if (rem == 3)
			out[o++] = (unsigned char)(b << 4 | c >> 2);
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

void base64_run(const void *in, size_t n, size_t a, char *tmp, char *enc, size_t *start,
		size_t *len)
{
	/* Character j covers bits [6j, 6j + 6) of the input; those inside the value's bits
	 * [8a, 8(a + n)) depend on it alone: j from ceil(8a / 6) to floor(8(a + n) / 6) - 1. */
	size_t j0 = (8 * a + 5) / 6, j1 = 8 * (a + n) / 6;

	memset(tmp, 0, a);
	memcpy(tmp + a, in, n);
	base64_encode((const unsigned char *)tmp, a + n, enc);
	*start = j0;
	*len = j1 - j0;
}
