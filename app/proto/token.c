/* token.c: minting, checksums, hashing and Authorization header parsing. */
#include <string.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <zlib.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static const char *prefix(enum token_kind kind)
{
	switch (kind) {
	case TOKEN_PERSONAL: return "dfy_";
	case TOKEN_JOB: return "djt_";
	case TOKEN_SANDBOX: return "dst_";
	default: return NULL;
	}
}

const char *token_kind_name(enum token_kind kind)
{
	switch (kind) {
	case TOKEN_PERSONAL: return "personal";
	case TOKEN_JOB: return "job";
	case TOKEN_SANDBOX: return "sandbox";
	case TOKEN_JWT: return "git-url";
	default: return "invalid";
	}
}

/* Six base62 digits, most significant first: 62^6 > 2^32, so every CRC fits. */
static void checksum(const char *s, size_t n, char out[TOKEN_CHECK_LEN])
{
	uLong crc = crc32(0L, (const Bytef *)s, (uInt)n);

	for (int i = TOKEN_CHECK_LEN - 1; i >= 0; i--) {
		out[i] = b62[crc % 62];
		crc /= 62;
	}
}

int token_mint(enum token_kind kind, char out[TOKEN_LEN + 1])
{
	const char *p = prefix(kind);
	unsigned char rnd[64];
	size_t got = 0;

	if (!p)
		return ERR_INVALID;
	memcpy(out, p, 4);
	/* Rejection sampling: bytes >= 248 would bias the modulo. */
	while (got < TOKEN_RANDOM_LEN) {
		if (RAND_bytes(rnd, sizeof(rnd)) != 1)
			return ERR_FAIL;
		for (size_t i = 0; i < sizeof(rnd) && got < TOKEN_RANDOM_LEN; i++)
			if (rnd[i] < 248)
				out[4 + got++] = b62[rnd[i] % 62];
	}
	checksum(out, 4 + TOKEN_RANDOM_LEN, out + 4 + TOKEN_RANDOM_LEN);
	out[TOKEN_LEN] = 0;
	OPENSSL_cleanse(rnd, sizeof(rnd));
	return 0;
}

static int is_b62(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int is_b64url(char c)
{
	return is_b62(c) || c == '-' || c == '_';
}

enum token_kind token_classify(const char *s, size_t n)
{
	static const enum token_kind kinds[] = { TOKEN_PERSONAL, TOKEN_JOB, TOKEN_SANDBOX };
	char sum[TOKEN_CHECK_LEN];

	if (n == TOKEN_LEN) {
		for (size_t k = 0; k < 3; k++) {
			if (memcmp(s, prefix(kinds[k]), 4))
				continue;
			for (size_t i = 4; i < n; i++)
				if (!is_b62(s[i]))
					return TOKEN_INVALID;
			checksum(s, 4 + TOKEN_RANDOM_LEN, sum);
			if (memcmp(sum, s + 4 + TOKEN_RANDOM_LEN, TOKEN_CHECK_LEN))
				return TOKEN_INVALID;
			return kinds[k];
		}
	}
	/* header.payload.signature, each non-empty base64url */
	int dots = 0;
	size_t run = 0;
	if (n > TOKEN_MAX)
		return TOKEN_INVALID;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (run == 0 || ++dots > 2)
				return TOKEN_INVALID;
			run = 0;
		} else if (is_b64url(s[i])) {
			run++;
		} else {
			return TOKEN_INVALID;
		}
	}
	return dots == 2 && run > 0 ? TOKEN_JWT : TOKEN_INVALID;
}

void token_hash(const char *s, size_t n, char out[TOKEN_HASH_LEN + 1])
{
	unsigned char md[32];
	unsigned int len = 0;

	EVP_Digest(s, n, md, &len, EVP_sha256(), NULL);
	hex_encode(out, md, sizeof(md));
}

static int scheme_is(const char *h, const char *name, size_t n)
{
	return strncasecmp(h, name, n) == 0 && h[n] == ' ';
}

int token_parse_authorization(const char *header, enum auth_scheme *scheme, char *out,
			      size_t outsz)
{
	const char *v;
	size_t n;

	*scheme = AUTH_NONE;
	out[0] = 0;
	if (!header || !*header)
		return 0;
	if (scheme_is(header, "Bearer", 6)) {
		*scheme = AUTH_BEARER;
		v = header + 7;
	} else if (scheme_is(header, "Basic", 5)) {
		*scheme = AUTH_BASIC;
		v = header + 6;
	} else {
		return ERR_INVALID;
	}
	while (*v == ' ')
		v++;
	n = strlen(v);
	while (n > 0 && v[n - 1] == ' ')
		n--;
	if (n == 0)
		return ERR_INVALID;
	if (*scheme == AUTH_BEARER) {
		if (n >= outsz)
			return ERR_INVALID;
		memcpy(out, v, n);
		out[n] = 0;
		return 0;
	}
	/* Basic: base64 of "user:password"; the password is the token. */
	unsigned char dec[TOKEN_MAX + 512];
	size_t dlen;
	if (n > (sizeof(dec) / 3) * 4 || base64_decode(v, n, dec, &dlen)) {
		OPENSSL_cleanse(dec, sizeof(dec));
		*scheme = AUTH_NONE;
		return ERR_INVALID;
	}
	unsigned char *colon = memchr(dec, ':', dlen);
	if (!colon) {
		OPENSSL_cleanse(dec, dlen);
		*scheme = AUTH_NONE;
		return ERR_INVALID;
	}
	size_t plen = dlen - (size_t)(colon + 1 - dec);
	if (plen == 0 || plen >= outsz || memchr(colon + 1, 0, plen)) {
		OPENSSL_cleanse(dec, dlen);
		*scheme = AUTH_NONE;
		return ERR_INVALID;
	}
	memcpy(out, colon + 1, plen);
	out[plen] = 0;
	OPENSSL_cleanse(dec, dlen);
	return 0;
}
