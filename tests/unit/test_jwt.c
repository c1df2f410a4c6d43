/* test_jwt.c: git URL tokens: keys, kid vectors, ES256 round trips and every refusal. Crafted
 * tokens are signed by the test's own ES256 (OpenSSL's DER converted here) and encoded with
 * base64.c, so that jwt.c is checked against code it does not share. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/common/banned.h"

#define NOW INT64_C(1700000000)
#define AUD "https://git.example.test"

/* --- fixtures -------------------------------------------------------------------------- */

/* One P-256 key (openssl genpkey) in every form, and its RFC 7638 thumbprint computed with
 * `openssl dgst -sha256` over {"crv":"P-256","kty":"EC","x":…,"y":…}. */
static const char p256_pkcs8[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqz7hBdyvczSVAE4e\n"
	"IXgciKU/aG+Q+3+a9uen+htRU2uhRANCAAShcvc7WhikV0RxOjhlVu2V2A1hPpW7\n"
	"djGzDQOHCYzi44vTHnByQPce+qROFl8jJBEuDxCTGyzDLIXH67FhQTkR\n"
	"-----END PRIVATE KEY-----\n";
static const char p256_sec1[] =
	"-----BEGIN EC PRIVATE KEY-----\n"
	"MHcCAQEEIKs+4QXcr3M0lQBOHiF4HIilP2hvkPt/mvbnp/obUVNroAoGCCqGSM49\n"
	"AwEHoUQDQgAEoXL3O1oYpFdEcTo4ZVbtldgNYT6Vu3Yxsw0DhwmM4uOL0x5wckD3\n"
	"HvqkThZfIyQRLg8QkxsswyyFx+uxYUE5EQ==\n"
	"-----END EC PRIVATE KEY-----\n";
static const char p256_pub[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEoXL3O1oYpFdEcTo4ZVbtldgNYT6V\n"
	"u3Yxsw0DhwmM4uOL0x5wckD3HvqkThZfIyQRLg8QkxsswyyFx+uxYUE5EQ==\n"
	"-----END PUBLIC KEY-----\n";
static const char p256_pub_der_b64[] =
	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEoXL3O1oYpFdEcTo4ZVbtldgNYT6V"
	"u3Yxsw0DhwmM4uOL0x5wckD3HvqkThZfIyQRLg8QkxsswyyFx+uxYUE5EQ==";
static const char p256_sec1_der_b64[] =
	"MHcCAQEEIKs+4QXcr3M0lQBOHiF4HIilP2hvkPt/mvbnp/obUVNroAoGCCqGSM49"
	"AwEHoUQDQgAEoXL3O1oYpFdEcTo4ZVbtldgNYT6Vu3Yxsw0DhwmM4uOL0x5wckD3"
	"HvqkThZfIyQRLg8QkxsswyyFx+uxYUE5EQ==";
static const char p256_pub_compressed[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgADoXL3O1oYpFdEcTo4ZVbtldgNYT6V\n"
	"u3Yxsw0DhwmM4uM=\n"
	"-----END PUBLIC KEY-----\n";
static const char p256_kid[] = "fXek0xiFsaLQYcINaLCQqWizmEoQR8y9pg2bXuyciHY";

/* The same key with its curve spelled out as explicit parameters. */
static const char p256_explicit[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MIIBSzCCAQMGByqGSM49AgEwgfcCAQEwLAYHKoZIzj0BAQIhAP////8AAAABAAAA\n"
	"AAAAAAAAAAAA////////////////MFsEIP////8AAAABAAAAAAAAAAAAAAAA////\n"
	"///////////8BCBaxjXYqjqT57PrvVV2mIa8ZR0GsMxTsPY7zjw+J9JgSwMVAMSd\n"
	"NgiG5wSTamZ44ROdJreBn36QBEEEaxfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5\n"
	"RdiYwpZP40Li/hp/m47n60p8D54WK84zV2sxXs7LtkBoN79R9QIhAP////8AAAAA\n"
	"//////////+85vqtpxeehPO5ysL8YyVRAgEBA0IABKFy9ztaGKRXRHE6OGVW7ZXY\n"
	"DWE+lbt2MbMNA4cJjOLji9MecHJA9x76pE4WXyMkES4PEJMbLMMshcfrsWFBORE=\n"
	"-----END PUBLIC KEY-----\n";

static const char p256_encrypted[] =
	"-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
	"MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAgI4xtUHuMkpgICCAAw\n"
	"DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEENqdjvmZ8i+F2Z1XCVM1tFYEgZCJ\n"
	"b16HyR5/q6iun51onWN/rPEvT6ZkE33CyE+5cmLUXwsxeUx9+px0K2sYo/6V2nph\n"
	"+mLmcw9lDpjTSU+JW7SyR/hBHFpzghQ8Ti6CbADCXp/t4nrEjbJMTl4+QO/uoUhK\n"
	"Pv/JHNJwbtCsuJ17jUbFS6dNCRxVjXoQK2f7huJzfkDEfZFv5eNpjKDq2ssNIZY=\n"
	"-----END ENCRYPTED PRIVATE KEY-----\n";

static const char rsa_pub[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDQwhOmxKyqJws56oGhM4mXjmMb\n"
	"PnJC7OOq16i5L6/NL9dYYTs3ywD2lBMwegVV5Ojxrn3LfwNZnaR+X7eIsBkDzmG/\n"
	"t5LlFnXH3eQn3VBzgr6BYzmLvmkU2PjFq7Dvj7gO25yOLps4quQU2XTawz5hXhhH\n"
	"cMtFbqd144+datyh9wIDAQAB\n"
	"-----END PUBLIC KEY-----\n";
static const char p384_pub[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEW7sR1dLM9qca8hwLdAKmzAgLtDRgFi8k\n"
	"8mlxxHPVSZwMlWNqYXQVmQkmI1niE98uU7TmBSLiKalWLGmiRo4qBc/dChJA/BEQ\n"
	"EUJnI0L5ltxKJHjz2Wn0BmhlYmt12VjK\n"
	"-----END PUBLIC KEY-----\n";
static const char p384_pkcs8[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDCUL6HKUXOsIiOmraU/\n"
	"DJ749SkSmTZOeFm6tqKSZn7fKfyGZNZMJxX2FvdSzUnGI4yhZANiAARbuxHV0sz2\n"
	"pxryHAt0AqbMCAu0NGAWLyTyaXHEc9VJnAyVY2phdBWZCSYjWeIT3y5TtOYFIuIp\n"
	"qVYsaaJGjioFz90KEkD8ERARQmcjQvmW3EokePPZafQGaGVia3XZWMo=\n"
	"-----END PRIVATE KEY-----\n";
static const char ed25519_pub[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MCowBQYDK2VwAyEAXKVWGJMBDA13XuuuYyxgrfS5KRMLXHTqLteyHaIIrA0=\n"
	"-----END PUBLIC KEY-----\n";
static const char secp256k1_pub[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAETYYlz7MZL0RG1Uvj1ldh0y94FxlOk+qD\n"
	"bHZoGrhFVkPDT0HQ4DZ0LQmxnUTP4VwcS2/xbGU6zrDs5T7olkqsCQ==\n"
	"-----END PUBLIC KEY-----\n";

/* RFC 9449 §4.1 (figure 3): a DPoP proof signed with ES256 by another implementation, its
 * key (the JWK of the header, as SubjectPublicKeyInfo) and the key's thumbprint (§6.1). */
static const char rfc9449_pub[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEl8tFrhx+34tV3hRICRDY9zCkDlpB\n"
	"hF42UQUfWVAWBFv1UTiN/86T+jrjNtNOVy40lqMea3q/1MNWtTQJ28ZEMA==\n"
	"-----END PUBLIC KEY-----\n";
static const char rfc9449_pub_der_b64[] =
	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEl8tFrhx+34tV3hRICRDY9zCkDlpB"
	"hF42UQUfWVAWBFv1UTiN/86T+jrjNtNOVy40lqMea3q/1MNWtTQJ28ZEMA==";
static const char rfc9449_kid[] = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";
static const char rfc9449_proof[] =
	"eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgt"
	"MzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VO"
	"SmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19"
	".eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4"
	"YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ"
	".2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg";

static EVP_PKEY *key1, *key2;
static char kid1[JWT_KID_MAX + 1], kid2[JWT_KID_MAX + 1];

static int setup(void **state)
{
	struct err e = { .msg = "" };

	if (jwt_key_generate(&key1, &e) || jwt_key_generate(&key2, &e) ||
	    jwt_kid(key1, kid1, &e) || jwt_kid(key2, kid2, &e)) {
		fprintf(stderr, "setup: %s\n", e.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	EVP_PKEY_free(key1);
	EVP_PKEY_free(key2);
	return 0;
}

/* --- the test's own encoders and signer --------------------------------------------------- */

/* base64url without padding, from base64.c's standard alphabet. The caller frees. */
static char *b64u(const void *in, size_t n)
{
	char *s = malloc(base64_encoded_size(n));

	assert_non_null(s);
	base64_encode(in, n, s);
	for (char *p = s; *p; p++) {
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
		else if (*p == '=') {
			*p = 0;
			break;
		}
	}
	return s;
}

/* der as PEM with 64-character lines. The caller frees. */
static char *pem_wrap(const char *label, const unsigned char *der, size_t n)
{
	char *b64 = malloc(base64_encoded_size(n)), *pem = malloc(2 * base64_encoded_size(n) + 128);
	size_t len, o = 0;

	assert_non_null(b64);
	assert_non_null(pem);
	base64_encode(der, n, b64);
	len = strlen(b64);
	o += (size_t)snprintf(pem + o, 128, "-----BEGIN %s-----\n", label);
	for (size_t i = 0; i < len; i += 64)
		o += (size_t)snprintf(pem + o, 80, "%.64s\n", b64 + i);
	snprintf(pem + o, 128, "-----END %s-----\n", label);
	free(b64);
	return pem;
}

/* The DER inside a one-line base64 fixture. */
static size_t unbase64(const char *b64, unsigned char *der)
{
	size_t n = 0;

	assert_int_equal(base64_decode(b64, strlen(b64), der, &n), 0);
	return n;
}

/* A few short-lived formatted strings (rotating buffers: fine in a test). */
static const char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *f, ...)
{
	static char bufs[4][12000];
	static int next;
	char *b = bufs[next++ % 4];
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(b, sizeof(bufs[0]), f, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(bufs[0]));
	return b;
}

static char *concat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 1);

	assert_non_null(s);
	memcpy(s, a, la);
	memcpy(s + la, b, lb);
	memcpy(s + la + lb, c, lc + 1);
	return s;
}

/* OpenSSL's DER ECDSA signature over msg. */
static size_t der_sign(EVP_PKEY *k, const char *msg, unsigned char der[80])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t n = 80;

	assert_non_null(ctx);
	assert_int_equal(EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, k), 1);
	assert_int_equal(EVP_DigestSign(ctx, der, &n, (const unsigned char *)msg, strlen(msg)), 1);
	EVP_MD_CTX_free(ctx);
	return n;
}

/* ES256 as JOSE wants it, converted here: DER -> (r, s) -> 32 + 32 big-endian bytes. */
static void raw_sign(EVP_PKEY *k, const char *msg, unsigned char sig[64])
{
	unsigned char der[80];
	const unsigned char *p = der;
	size_t n = der_sign(k, msg, der);
	ECDSA_SIG *s = d2i_ECDSA_SIG(NULL, &p, (long)n);
	const BIGNUM *r, *sv;

	assert_non_null(s);
	ECDSA_SIG_get0(s, &r, &sv);
	assert_int_equal(BN_bn2binpad(r, sig, 32), 32);
	assert_int_equal(BN_bn2binpad(sv, sig + 32, 32), 32);
	ECDSA_SIG_free(s);
}

/* b64u(header) "." b64u(payload): the signing input. The caller frees. */
static char *signing_input(const char *header, const char *payload)
{
	char *h = b64u(header, strlen(header)), *p = b64u(payload, strlen(payload));
	char *s = concat3(h, ".", p);

	free(h);
	free(p);
	return s;
}

/* The token made of header, payload and any signature bytes. The caller frees. */
static char *assemble(const char *header, const char *payload, const unsigned char *sig,
		      size_t siglen)
{
	char *in = signing_input(header, payload), *s = b64u(sig, siglen);
	char *tok = concat3(in, ".", s);

	free(in);
	free(s);
	return tok;
}

/* header and payload, signed with k by the test's own ES256. The caller frees. */
static char *craft(EVP_PKEY *k, const char *header, const char *payload)
{
	char *in = signing_input(header, payload), *s, *tok;
	unsigned char sig[64];

	raw_sign(k, in, sig);
	s = b64u(sig, sizeof(sig));
	tok = concat3(in, ".", s);
	free(in);
	free(s);
	return tok;
}

static const char *hdr(const char *kid)
{
	return fmt("{\"alg\":\"ES256\",\"typ\":\"JWT\",\"kid\":\"%s\"}", kid);
}

/* Every required claim; extra is appended inside the object. */
static const char *payload_at(int64_t iat, int64_t exp, const char *extra)
{
	return fmt("{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\","
		   "\"scopes\":[\"git:read\"],\"iat\":%lld,\"exp\":%lld%s}",
		   (long long)iat, (long long)exp, extra);
}

static const char *payload_extra(const char *extra)
{
	return payload_at(NOW, NOW + 900, extra);
}

static void base_claims(struct jwt_claims *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->iss, sizeof(c->iss), "acme");
	snprintf(c->sub, sizeof(c->sub), "acct_1");
	snprintf(c->aud, sizeof(c->aud), AUD);
	snprintf(c->owner, sizeof(c->owner), "acme");
	snprintf(c->name, sizeof(c->name), "website");
	c->scopes = JWT_SCOPE_READ | JWT_SCOPE_WRITE;
	c->iat = NOW;
	c->exp = NOW + JWT_DEFAULT_TTL;
	snprintf(c->jti, sizeof(c->jti), "j-1");
}

static char *sign_ok(EVP_PKEY *k, const char *kid, const struct jwt_claims *c)
{
	char *tok = NULL;
	struct err e = { .msg = "" };

	if (jwt_sign(k, kid, c, &tok, &e))
		fail_msg("jwt_sign: %s", e.msg);
	assert_non_null(tok);
	return tok;
}

/* --- verdicts --------------------------------------------------------------------------- */

static void accepted_at(const char *tok, EVP_PKEY *k, int64_t now, struct jwt_claims *c)
{
	struct err e = { .msg = "" };

	if (jwt_verify(tok, strlen(tok), k, AUD, now, c, &e))
		fail_msg("refused: %s", e.msg);
}

static void accepted(const char *tok)
{
	struct jwt_claims c;

	accepted_at(tok, key1, NOW, &c);
}

/* Refused with exactly msg (or, when msg ends in '*', a message starting with the rest);
 * the claims are left zeroed. */
static void refused_by(const char *tok, size_t n, EVP_PKEY *k, int64_t now, const char *msg)
{
	static const struct jwt_claims zero;
	struct jwt_claims c;
	struct err e = { .msg = "" };
	size_t ml = strlen(msg);

	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(jwt_verify(tok, n, k, AUD, now, &c, &e), ERR_INVALID);
	if (ml && msg[ml - 1] == '*') {
		if (strncmp(e.msg, msg, ml - 1) != 0)
			fail_msg("message '%s' does not start with '%.*s'", e.msg, (int)ml - 1, msg);
	} else {
		assert_string_equal(e.msg, msg);
	}
	assert_memory_equal(&c, &zero, sizeof(c));
	assert_int_equal(ERR_peek_error(), 0); /* nothing left for the next request */
}

static void refused(const char *tok, const char *msg)
{
	refused_by(tok, strlen(tok), key1, NOW, msg);
}

/* A token signed by key1 with the standard header and this payload: accepted or refused. */
static void payload_accepted(const char *payload)
{
	char *tok = craft(key1, hdr(kid1), payload);

	accepted(tok);
	free(tok);
}

static void payload_refused(const char *payload, const char *msg)
{
	char *tok = craft(key1, hdr(kid1), payload);

	refused(tok, msg);
	free(tok);
}

static void header_refused(const char *header, const char *msg)
{
	char *tok = craft(key1, header, payload_extra(""));

	refused(tok, msg);
	free(tok);
}

/* --- base64url ------------------------------------------------------------------------ */

static void test_b64url_vectors(void **state)
{
	/* RFC 4648 §10, without the padding, and the two characters that differ from §4. */
	static const struct { const char *in, *out; } v[] = {
		{ "", "" }, { "f", "Zg" }, { "fo", "Zm8" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg" }, { "fooba", "Zm9vYmE" }, { "foobar", "Zm9vYmFy" },
		{ "\xfb\xff", "-_8" }, { "\xff\xff\xfe", "___-" },
	};
	char out[32];
	unsigned char back[32];
	size_t n;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t len = strlen(v[i].in);

		assert_int_equal(base64url_encoded_size(len), strlen(v[i].out) + 1);
		base64url_encode((const unsigned char *)v[i].in, len, out);
		assert_string_equal(out, v[i].out);
		assert_int_equal(base64url_decode(v[i].out, strlen(v[i].out), back, sizeof(back),
						   &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(back, v[i].in, len);
	}
}

static void test_b64url_strict(void **state)
{
	static const char *bad[] = {
		"Zg==", "Zg=", "Zm8=", "Z",    /* padding; a length of 4k + 1 */
		"Zh", "Zm9", "Zm-",             /* non-canonical: unused bits set */
		"Zm+v", "Zm/v", "Zm9v\n", "Zm 9", "Zm.v", "Zm9\xc3\xa9",
	};
	unsigned char out[32];
	size_t n = 99;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(base64url_decode(bad[i], strlen(bad[i]), out, sizeof(out), &n),
				 ERR_INVALID);
		assert_int_equal(n, 0);
	}
	/* An embedded NUL, and the length (not a NUL) bounds the input. */
	assert_int_equal(base64url_decode("Zm\0v", 4, out, sizeof(out), &n), ERR_INVALID);
	assert_int_equal(base64url_decode("Zm9v!!!", 4, out, sizeof(out), &n), 0);
	assert_int_equal(n, 3);
	/* The output bound: "Zm9vYmFy" is 6 bytes. */
	assert_int_equal(base64url_decode("Zm9vYmFy", 8, out, 5, &n), ERR_INVALID);
	assert_int_equal(base64url_decode("Zm9vYmFy", 8, out, 6, &n), 0);
	assert_int_equal(base64url_decode("Zm9vYmE", 7, out, 4, &n), ERR_INVALID);
	assert_int_equal(base64url_decode("Zm9vYmE", 7, out, 5, &n), 0);
	assert_int_equal(n, 5);
}

/* --- keys ----------------------------------------------------------------------------- */

static EVP_PKEY *load(const char *pem, enum jwt_key_kind kind)
{
	EVP_PKEY *k = NULL;
	struct err e = { .msg = "" };

	if (jwt_key_load_pem(pem, strlen(pem), kind, &k, &e))
		fail_msg("load: %s", e.msg);
	assert_non_null(k);
	return k;
}

static void load_refused(const char *pem, size_t n, enum jwt_key_kind kind, const char *msg)
{
	EVP_PKEY *k = (EVP_PKEY *)1;
	struct err e = { .msg = "" };

	assert_int_equal(jwt_key_load_pem(pem, n, kind, &k, &e), ERR_INVALID);
	assert_null(k);
	assert_string_equal(e.msg, msg);
	assert_int_equal(ERR_peek_error(), 0);
}

static void check_kid(EVP_PKEY *k, const char *want)
{
	char kid[JWT_KID_MAX + 1];
	struct err e = { .msg = "" };

	assert_int_equal(jwt_kid(k, kid, &e), 0);
	assert_string_equal(kid, want);
}

static void test_kid_known_vectors(void **state)
{
	static const char *forms[] = { p256_pkcs8, p256_sec1 };
	EVP_PKEY *k;

	k = load(rfc9449_pub, JWT_KEY_PUBLIC);
	check_kid(k, rfc9449_kid);
	EVP_PKEY_free(k);
	k = load(p256_pub, JWT_KEY_PUBLIC);
	check_kid(k, p256_kid);
	EVP_PKEY_free(k);
	/* CRLF line ends and text around the block */
	{
		static const char crlf[] =
			"my key:\r\n-----BEGIN PUBLIC KEY-----\r\n"
			"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEoXL3O1oYpFdEcTo4ZVbtldgNYT6V\r\n"
			"u3Yxsw0DhwmM4uOL0x5wckD3HvqkThZfIyQRLg8QkxsswyyFx+uxYUE5EQ==\r\n"
			"-----END PUBLIC KEY-----\r\nthanks\r\n";
		char *pem = NULL;

		k = load(crlf, JWT_KEY_PUBLIC);
		check_kid(k, p256_kid);
		/* written back in the canonical form */
		assert_int_equal(jwt_key_pem(k, JWT_KEY_PUBLIC, &pem, NULL), 0);
		assert_string_equal(pem, p256_pub);
		free(pem);
		EVP_PKEY_free(k);
	}
	/* compressed point: the thumbprint uses the coordinates, not the encoding */
	k = load(p256_pub_compressed, JWT_KEY_PUBLIC);
	check_kid(k, p256_kid);
	EVP_PKEY_free(k);
	for (size_t i = 0; i < 2; i++) {
		k = load(forms[i], JWT_KEY_PRIVATE);
		check_kid(k, p256_kid);
		EVP_PKEY_free(k);
	}
}

static void test_kid_stable_and_distinct(void **state)
{
	char a[JWT_KID_MAX + 1], b[JWT_KID_MAX + 1];

	assert_int_equal(jwt_kid(key1, a, NULL), 0);
	assert_int_equal(jwt_kid(key1, b, NULL), 0);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), JWT_KID_LEN);
	assert_string_not_equal(kid1, kid2);
}

static void test_key_pem_round_trip(void **state)
{
	char *priv = NULL, *pub = NULL, *tok;
	EVP_PKEY *kpriv, *kpub;
	struct jwt_claims c, out;
	struct err e = { .msg = "" };

	assert_int_equal(jwt_key_pem(key1, JWT_KEY_PRIVATE, &priv, &e), 0);
	assert_int_equal(jwt_key_pem(key1, JWT_KEY_PUBLIC, &pub, &e), 0);
	assert_true(strncmp(priv, "-----BEGIN PRIVATE KEY-----\n", 28) == 0);
	assert_true(strncmp(pub, "-----BEGIN PUBLIC KEY-----\n", 27) == 0);
	assert_non_null(strstr(pub, "-----END PUBLIC KEY-----\n"));
	kpriv = load(priv, JWT_KEY_PRIVATE);
	kpub = load(pub, JWT_KEY_PUBLIC);
	check_kid(kpriv, kid1);
	check_kid(kpub, kid1);
	/* a token signed with the reloaded private key verifies with the reloaded public one */
	base_claims(&c);
	tok = sign_ok(kpriv, kid1, &c);
	accepted_at(tok, kpub, NOW, &out);
	accepted_at(tok, key1, NOW, &out);
	/* a public key cannot sign, nor be written as a private one */
	free(priv);
	priv = NULL;
	assert_int_equal(jwt_key_pem(kpub, JWT_KEY_PRIVATE, &priv, &e), ERR_INVALID);
	assert_null(priv);
	assert_string_equal(e.msg, "key has no private half");
	free(tok);
	tok = NULL;
	assert_int_equal(jwt_sign(kpub, kid1, &c, &tok, &e), ERR_INVALID);
	assert_null(tok);
	assert_string_equal(e.msg, "key has no private half");
	free(pub);
	EVP_PKEY_free(kpriv);
	EVP_PKEY_free(kpub);
}

static void test_key_other_types_refused(void **state)
{
	load_refused(rsa_pub, strlen(rsa_pub), JWT_KEY_PUBLIC,
		     "key must be an EC P-256 key, not RSA");
	load_refused(ed25519_pub, strlen(ed25519_pub), JWT_KEY_PUBLIC,
		     "key must be an EC P-256 key, not ED25519");
	load_refused(p384_pub, strlen(p384_pub), JWT_KEY_PUBLIC,
		     "key must be on curve P-256, not secp384r1");
	load_refused(p384_pkcs8, strlen(p384_pkcs8), JWT_KEY_PRIVATE,
		     "key must be on curve P-256, not secp384r1");
	load_refused(secp256k1_pub, strlen(secp256k1_pub), JWT_KEY_PUBLIC,
		     "key must be on curve P-256, not secp256k1");
	load_refused(p256_explicit, strlen(p256_explicit), JWT_KEY_PUBLIC,
		     "key must use the named curve P-256, not explicit curve parameters");
}

static void test_key_wrong_kind_refused(void **state)
{
	load_refused(p256_pkcs8, strlen(p256_pkcs8), JWT_KEY_PUBLIC,
		     "expected a public key (-----BEGIN PUBLIC KEY-----), not a private key");
	load_refused(p256_sec1, strlen(p256_sec1), JWT_KEY_PUBLIC,
		     "expected a public key (-----BEGIN PUBLIC KEY-----), not a private key");
	load_refused(p256_pub, strlen(p256_pub), JWT_KEY_PRIVATE,
		     "expected a private key, not a public key");
	/* never a passphrase prompt */
	load_refused(p256_encrypted, strlen(p256_encrypted), JWT_KEY_PRIVATE,
		     "encrypted private keys are not supported");
}

/* The fixture public key with one byte of its point changed: no longer on the curve. */
static void test_key_garbage_refused(void **state)
{
	static const char notpub[] = "key is not a PEM public key (-----BEGIN PUBLIC KEY-----)";
	static const char notpriv[] = "key is not a PEM private key (PKCS#8 or SEC1)";
	static const char short_pub[] = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n";
	static const char short_priv[] =
		"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
	unsigned char der[160], other[160];
	size_t n;
	char *pem, *big;
	const char *cut;

	load_refused("", 0, JWT_KEY_PUBLIC, "key is empty");
	load_refused("hello", 5, JWT_KEY_PUBLIC, notpub);
	load_refused("hello", 5, JWT_KEY_PRIVATE, notpriv);
	load_refused(short_pub, strlen(short_pub), JWT_KEY_PUBLIC, notpub);
	load_refused(short_priv, strlen(short_priv), JWT_KEY_PRIVATE, notpriv);
	/* cut short (n, not the NUL, bounds the input) */
	cut = strstr(p256_pub, "-----END");
	load_refused(p256_pub, (size_t)(cut - p256_pub), JWT_KEY_PUBLIC, notpub);
	load_refused(p256_pub, 40, JWT_KEY_PUBLIC, notpub);
	load_refused("-----BEGIN PUBLIC KEY-----\0", 27, JWT_KEY_PUBLIC,
		     "key must be PEM text: it contains a NUL byte");
	big = malloc(JWT_PEM_MAX + 1);
	assert_non_null(big);
	memset(big, 'A', JWT_PEM_MAX + 1);
	load_refused(big, JWT_PEM_MAX + 1, JWT_KEY_PUBLIC, "key is longer than 16384 bytes");
	free(big);

	n = unbase64(p256_pub_der_b64, der);
	assert_int_equal(n, 91);
	der[n - 1] ^= 1;
	pem = pem_wrap("PUBLIC KEY", der, n);
	load_refused(pem, strlen(pem), JWT_KEY_PUBLIC, notpub);
	free(pem);
	der[n - 1] ^= 1;
	pem = pem_wrap("PUBLIC KEY", der, n);
	assert_string_equal(pem, p256_pub);
	EVP_PKEY_free(load(pem, JWT_KEY_PUBLIC));
	free(pem);
	/* another curve's OID in front of a P-256 point */
	der[20] ^= 1;
	pem = pem_wrap("PUBLIC KEY", der, n);
	load_refused(pem, strlen(pem), JWT_KEY_PUBLIC, notpub);
	free(pem);

	/* a private key whose embedded public key is another key's */
	n = unbase64(p256_sec1_der_b64, der);
	assert_int_equal(n, 121);
	assert_int_equal(unbase64(rfc9449_pub_der_b64, other), 91);
	memcpy(der + n - 64, other + 91 - 64, 64);
	pem = pem_wrap("EC PRIVATE KEY", der, n);
	load_refused(pem, strlen(pem), JWT_KEY_PRIVATE, "private key does not match its public key");
	free(pem);
}

/* --- signing and verifying --------------------------------------------------------------- */

static void test_round_trip(void **state)
{
	struct jwt_claims c, out;
	char *tok, *want;
	const char *payload;

	base_claims(&c);
	c.ephemeral = 1;
	c.has_nbf = 1;
	c.nbf = NOW + 10;
	c.n_ref_policies = 2;
	snprintf(c.ref_policies[0].pattern, sizeof(c.ref_policies[0].pattern), "refs/heads/main");
	c.ref_policies[0].ops = JWT_OP_NO_PUSH;
	snprintf(c.ref_policies[1].pattern, sizeof(c.ref_policies[1].pattern), "refs/tags/*");
	c.ref_policies[1].ops = JWT_OP_NO_PUSH | JWT_OP_NO_FORCE_PUSH;
	tok = sign_ok(key1, kid1, &c);

	/* the exact header and payload, as the test encodes them */
	payload = fmt("{\"iss\":\"acme\",\"sub\":\"acct_1\",\"aud\":\"" AUD "\","
		      "\"repo\":\"acme/website\",\"scopes\":[\"git:read\",\"git:write\"],"
		      "\"kind\":\"ephemeral\",\"ref_policies\":["
		      "{\"pattern\":\"refs/heads/main\",\"ops\":[\"no-push\"]},"
		      "{\"pattern\":\"refs/tags/*\",\"ops\":[\"no-push\",\"no-force-push\"]}],"
		      "\"iat\":%lld,\"nbf\":%lld,\"exp\":%lld,\"jti\":\"j-1\"}",
		      (long long)NOW, (long long)NOW + 10, (long long)NOW + 900);
	want = signing_input(hdr(kid1), payload);
	assert_true(strncmp(tok, want, strlen(want)) == 0);
	assert_int_equal(tok[strlen(want)], '.');
	assert_int_equal(strlen(tok), strlen(want) + 1 + 86);
	free(want);

	accepted_at(tok, key1, NOW + 10, &out);
	assert_string_equal(out.iss, "acme");
	assert_string_equal(out.sub, "acct_1");
	assert_string_equal(out.aud, AUD);
	assert_string_equal(out.owner, "acme");
	assert_string_equal(out.name, "website");
	assert_int_equal(out.scopes, JWT_SCOPE_READ | JWT_SCOPE_WRITE);
	assert_int_equal(out.ephemeral, 1);
	assert_int_equal(out.iat, NOW);
	assert_int_equal(out.exp, NOW + 900);
	assert_int_equal(out.has_nbf, 1);
	assert_int_equal(out.nbf, NOW + 10);
	assert_string_equal(out.jti, "j-1");
	assert_string_equal(out.kid, kid1);
	assert_int_equal(out.n_ref_policies, 2);
	assert_string_equal(out.ref_policies[0].pattern, "refs/heads/main");
	assert_int_equal(out.ref_policies[0].ops, JWT_OP_NO_PUSH);
	assert_string_equal(out.ref_policies[1].pattern, "refs/tags/*");
	assert_int_equal(out.ref_policies[1].ops, JWT_OP_NO_PUSH | JWT_OP_NO_FORCE_PUSH);
	free(tok);
}

static void test_minimal_claims_and_defaults(void **state)
{
	struct jwt_claims c, out;
	char *tok;

	base_claims(&c);
	c.sub[0] = c.jti[0] = 0;
	c.scopes = JWT_SCOPE_WRITE;
	tok = sign_ok(key1, kid1, &c);
	accepted_at(tok, key1, NOW, &out);
	assert_string_equal(out.sub, "");
	assert_string_equal(out.jti, "");
	assert_int_equal(out.has_nbf, 0);
	assert_int_equal(out.ephemeral, 0);
	assert_int_equal(out.n_ref_policies, 0);
	/* write does not imply read here: that is the caller's rule */
	assert_int_equal(out.scopes, JWT_SCOPE_WRITE);
	free(tok);

	/* kind absent is normal; null optional claims are absent; unknown claims are ignored */
	tok = craft(key1, hdr(kid1),
		    payload_extra(",\"sub\":null,\"nbf\":null,\"ref_policies\":null,\"x-extra\":[1]"));
	accepted_at(tok, key1, NOW, &out);
	assert_int_equal(out.ephemeral, 0);
	assert_int_equal(out.has_nbf, 0);
	assert_int_equal(out.scopes, JWT_SCOPE_READ);
	free(tok);
	payload_accepted(payload_extra(",\"kind\":\"normal\""));
}

/* jwt.c's R||S checked by the test's own conversion, and the other way round. */
static void test_signature_interop(void **state)
{
	struct jwt_claims c;
	char *tok, *in;
	const char *dot;
	unsigned char raw[64], *der = NULL;
	size_t n;
	ECDSA_SIG *s;
	EVP_MD_CTX *ctx;
	int derlen;
	struct err e = { .msg = "" };

	base_claims(&c);
	tok = sign_ok(key1, kid1, &c);
	dot = strrchr(tok, '.');
	assert_int_equal(base64url_decode(dot + 1, strlen(dot + 1), raw, sizeof(raw), &n), 0);
	assert_int_equal(n, 64);
	s = ECDSA_SIG_new();
	assert_int_equal(ECDSA_SIG_set0(s, BN_bin2bn(raw, 32, NULL), BN_bin2bn(raw + 32, 32, NULL)),
			 1);
	derlen = i2d_ECDSA_SIG(s, &der);
	assert_true(derlen > 0);
	ctx = EVP_MD_CTX_new();
	assert_int_equal(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, key1), 1);
	assert_int_equal(EVP_DigestVerify(ctx, der, (size_t)derlen, (const unsigned char *)tok,
					  (size_t)(dot - tok)), 1);
	EVP_MD_CTX_free(ctx);
	OPENSSL_free(der);
	ECDSA_SIG_free(s);
	free(tok);

	/* the test's signer, through jwt_verify and jwt_es256_verify */
	payload_accepted(payload_extra(""));
	in = signing_input(hdr(kid1), payload_extra(""));
	raw_sign(key2, in, raw);
	assert_int_equal(jwt_es256_verify(key2, in, strlen(in), raw, 64, &e), 0);
	assert_int_equal(jwt_es256_sign(key2, in, strlen(in), raw, &e), 0);
	assert_int_equal(jwt_es256_verify(key2, in, strlen(in), raw, 64, &e), 0);
	assert_int_equal(jwt_es256_verify(key1, in, strlen(in), raw, 64, &e), ERR_INVALID);
	assert_string_equal(e.msg, "signature does not verify");
	free(in);
}

/* A signature made by another implementation (RFC 9449's example) verifies. */
static void test_rfc9449_signature(void **state)
{
	EVP_PKEY *k = load(rfc9449_pub, JWT_KEY_PUBLIC);
	const char *dot = strrchr(rfc9449_proof, '.');
	unsigned char sig[64];
	size_t n;
	struct err e = { .msg = "" };

	assert_int_equal(base64url_decode(dot + 1, strlen(dot + 1), sig, sizeof(sig), &n), 0);
	assert_int_equal(n, 64);
	assert_int_equal(jwt_es256_verify(k, rfc9449_proof, (size_t)(dot - rfc9449_proof), sig, n,
					  &e), 0);
	sig[10] ^= 0x01;
	assert_int_equal(jwt_es256_verify(k, rfc9449_proof, (size_t)(dot - rfc9449_proof), sig, n,
					  &e), ERR_INVALID);
	assert_string_equal(e.msg, "signature does not verify");
	/* a DPoP proof is not a git URL token, whoever signed it */
	refused_by(rfc9449_proof, strlen(rfc9449_proof), k, NOW, "typ must be JWT");
	EVP_PKEY_free(k);
}

static void test_wrong_key(void **state)
{
	struct jwt_claims c;
	char *tok;
	EVP_PKEY *rsa, *p384;
	BIO *bio;

	base_claims(&c);
	tok = sign_ok(key1, kid1, &c);
	refused_by(tok, strlen(tok), key2, NOW, "signature does not verify");
	/* the algorithm comes from the key: an RSA or P-384 key verifies nothing */
	bio = BIO_new_mem_buf(rsa_pub, -1);
	rsa = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	BIO_free(bio);
	bio = BIO_new_mem_buf(p384_pub, -1);
	p384 = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	BIO_free(bio);
	assert_non_null(rsa);
	assert_non_null(p384);
	refused_by(tok, strlen(tok), rsa, NOW, "key must be an EC P-256 key, not RSA");
	refused_by(tok, strlen(tok), p384, NOW, "key must be on curve P-256, not secp384r1");
	refused_by(tok, strlen(tok), NULL, NOW, "no key");
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(p384);
	free(tok);
}

/* --- time ------------------------------------------------------------------------------ */

static void test_expiry_and_skew(void **state)
{
	struct jwt_claims c;
	char *tok;

	payload_refused(payload_at(NOW - 961, NOW - 61, ""), "token expired");
	payload_refused(payload_at(NOW - 960, NOW - 60, ""), "token expired");
	payload_accepted(payload_at(NOW - 959, NOW - 59, ""));   /* within the skew */
	payload_accepted(payload_at(NOW - 900, NOW, ""));

	/* the same token, as the clock moves */
	base_claims(&c);
	tok = sign_ok(key1, kid1, &c);
	accepted_at(tok, key1, NOW + 900 + 59, &c);
	refused_by(tok, strlen(tok), key1, NOW + 900 + 60, "token expired");
	refused_by(tok, strlen(tok), key1, NOW - 61, "token issued in the future (iat)");
	accepted_at(tok, key1, NOW - 60, &c);
	refused_by(tok, strlen(tok), key1, -1, "the clock is out of range");
	free(tok);
}

static void test_iat_and_nbf_in_the_future(void **state)
{
	payload_refused(payload_at(NOW + 61, NOW + 961, ""), "token issued in the future (iat)");
	payload_accepted(payload_at(NOW + 60, NOW + 960, ""));
	payload_refused(payload_extra(",\"nbf\":" "1700000061"), "token not valid yet (nbf)");
	payload_accepted(payload_extra(",\"nbf\":" "1700000060"));
	payload_refused(payload_extra(",\"nbf\":" "1700000900"), "nbf must be before exp");
}

static void test_ttl(void **state)
{
	struct jwt_claims c;
	char *tok = NULL;
	struct err e = { .msg = "" };

	payload_refused(payload_at(NOW, NOW + 3601, ""), "ttl over 3600 s");
	payload_accepted(payload_at(NOW, NOW + 3600, ""));
	payload_refused(payload_at(NOW, NOW, ""), "exp must be after iat");
	payload_refused(payload_at(NOW, NOW - 1, ""), "exp must be after iat");
	/* jwt_sign will not make one either */
	base_claims(&c);
	c.exp = c.iat + 3601;
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_null(tok);
	assert_string_equal(e.msg, "ttl over 3600 s");
}

static void test_time_claims_malformed(void **state)
{
	payload_refused("{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\","
			"\"scopes\":[\"git:read\"],\"iat\":1700000000}",
			"claim 'exp' is required");
	payload_refused("{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\","
			"\"scopes\":[\"git:read\"],\"exp\":1700000000}",
			"claim 'iat' is required");
	payload_refused("{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\","
			"\"scopes\":[\"git:read\"],\"iat\":1700000000,\"exp\":null}",
			"claim 'exp' is required");
	payload_refused("{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\","
			"\"scopes\":[\"git:read\"],\"iat\":1700000000,\"exp\":\"1700000900\"}",
			"claim 'exp' must be an integer");
	payload_refused("{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\","
			"\"scopes\":[\"git:read\"],\"iat\":1700000000,\"exp\":1700000900.5}",
			"claim 'exp' must be an integer");
	payload_refused("{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\","
			"\"scopes\":[\"git:read\"],\"iat\":1700000000,\"exp\":99999999999999999999}",
			"claim 'exp' is out of range");
	payload_refused("{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\","
			"\"scopes\":[\"git:read\"],\"iat\":-1,\"exp\":100}",
			"claim 'iat' is out of range");
	payload_refused(payload_extra(",\"nbf\":true"), "claim 'nbf' must be an integer");
}

/* --- claims ---------------------------------------------------------------------------- */

static void test_audience(void **state)
{
	static const char *body =
		"{\"iss\":\"acme\",\"aud\":%s,\"repo\":\"acme/website\",\"scopes\":[\"git:read\"],"
		"\"iat\":1700000000,\"exp\":1700000900}";
	struct jwt_claims c;
	char *tok;
	struct err e = { .msg = "" };

	payload_refused(fmt(body, "\"https://other.example\""), "token is for another audience");
	payload_refused(fmt(body, "\"" AUD "/\""), "token is for another audience");
	payload_refused(fmt(body, "\"https://git.example.tes\""), "token is for another audience");
	payload_accepted(fmt(body, "[\"https://other.example\",\"" AUD "\"]"));
	payload_refused(fmt(body, "[\"https://other.example\"]"), "token is for another audience");
	payload_refused(fmt(body, "[]"), "token is for another audience");
	payload_refused(fmt(body, "[\"" AUD "\",1]"),
			"claim 'aud' must be a string or an array of strings");
	payload_refused(fmt(body, "1"), "claim 'aud' must be a string or an array of strings");
	payload_refused(fmt(body, "null"), "claim 'aud' is required");
	payload_refused("{\"iss\":\"acme\",\"repo\":\"acme/website\",\"scopes\":[\"git:read\"],"
			"\"iat\":1700000000,\"exp\":1700000900}", "claim 'aud' is required");
	/* the caller's audience must be sane too */
	tok = craft(key1, hdr(kid1), payload_extra(""));
	assert_int_equal(jwt_verify(tok, strlen(tok), key1, "", NOW, &c, &e), ERR_INVALID);
	assert_int_equal(jwt_verify(tok, strlen(tok), key1, NULL, NOW, &c, &e), ERR_INVALID);
	assert_string_equal(e.msg, "audience must be 1 to 256 printable characters");
	free(tok);
}

static void test_issuer_subject_jti(void **state)
{
	static const char *body =
		"{%s\"aud\":\"" AUD "\",\"repo\":\"acme/website\",\"scopes\":[\"git:read\"],"
		"\"iat\":1700000000,\"exp\":1700000900}";
	char long_jti[JWT_JTI_MAX + 2];

	payload_refused(fmt(body, ""), "claim 'iss' is required");
	payload_refused(fmt(body, "\"iss\":\"\","), "claim 'iss' must be 1 to 128 characters");
	payload_refused(fmt(body, "\"iss\":7,"), "claim 'iss' must be a string");
	payload_refused(fmt(body, "\"iss\":\"ac me\","),
			"claim 'iss' has a character that is not allowed");
	payload_refused(fmt(body, "\"iss\":\"ac\\u0000me\","),
			"claim 'iss' has a character that is not allowed");
	payload_refused(fmt(body, "\"iss\":\"acme\",\"sub\":[],"), "claim 'sub' must be a string");
	memset(long_jti, 'j', sizeof(long_jti) - 1);
	long_jti[sizeof(long_jti) - 1] = 0;
	payload_refused(fmt(body, fmt("\"iss\":\"acme\",\"jti\":\"%s\",", long_jti)),
			"claim 'jti' must be 1 to 128 characters");
	long_jti[JWT_JTI_MAX] = 0;
	payload_accepted(fmt(body, fmt("\"iss\":\"acme\",\"jti\":\"%s\",", long_jti)));
}

/* The repository is exposed for the caller to compare; a malformed one is refused. */
static void test_repository(void **state)
{
	static const char *body =
		"{\"iss\":\"acme\",\"aud\":\"" AUD "\",%s\"scopes\":[\"git:read\"],"
		"\"iat\":1700000000,\"exp\":1700000900}";
	static const char *bad[] = {
		"\"acme\"", "\"acme/\"", "\"/website\"", "\"acme/web/site\"", "\"ac me/website\"",
		"\"acme/web site\"", "\"ac.me/website\"", "\"acme/../x\"", "\"acme/w\\u0000x\"",
		"\"acme/..\"", "\"acme/.git\"",
		"[\"acme/website\"]", "\"\"",
	};
	struct jwt_claims c;
	char *tok;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		payload_refused(fmt(body, fmt("\"repo\":%s,", bad[i])),
				"claim 'repo' must be 'owner/name'");
	payload_refused(fmt(body, ""), "claim 'repo' is required");
	payload_accepted(fmt(body, "\"repo\":\"a-1/x.y_z-2\","));

	/* a token for acme/website, presented for acme/other: the caller sees the difference */
	tok = craft(key1, hdr(kid1), payload_extra(""));
	accepted_at(tok, key1, NOW, &c);
	assert_string_equal(c.owner, "acme");
	assert_string_equal(c.name, "website");
	assert_true(strcmp(c.name, "other") != 0);
	free(tok);
}

static void test_scopes_and_kind(void **state)
{
	static const char *body =
		"{\"iss\":\"acme\",\"aud\":\"" AUD "\",\"repo\":\"acme/website\",%s"
		"\"iat\":1700000000,\"exp\":1700000900}";
	static const char scopes_msg[] = "claim 'scopes' may only hold 'git:read' and 'git:write'";
	static const char empty_msg[] = "claim 'scopes' must be a non-empty array";
	struct jwt_claims c;
	char *tok;

	payload_refused(fmt(body, ""), "claim 'scopes' is required");
	payload_refused(fmt(body, "\"scopes\":[],"), empty_msg);
	payload_refused(fmt(body, "\"scopes\":\"git:read\","), empty_msg);
	payload_refused(fmt(body, "\"scopes\":[\"git:admin\"],"), scopes_msg);
	payload_refused(fmt(body, "\"scopes\":[\"git:read\",\"read\"],"), scopes_msg);
	payload_refused(fmt(body, "\"scopes\":[\"GIT:READ\"],"), scopes_msg);
	payload_refused(fmt(body, "\"scopes\":[\"git:read\\u0000x\"],"), scopes_msg);
	payload_refused(fmt(body, "\"scopes\":[1],"), scopes_msg);
	payload_refused(fmt(body, "\"scopes\":[\"git:read\"],\"kind\":\"weird\","),
			"claim 'kind' must be 'normal' or 'ephemeral'");
	payload_refused(fmt(body, "\"scopes\":[\"git:read\"],\"kind\":1,"),
			"claim 'kind' must be 'normal' or 'ephemeral'");
	tok = craft(key1, hdr(kid1),
		    fmt(body, "\"scopes\":[\"git:write\",\"git:read\"],\"kind\":\"ephemeral\","));
	accepted_at(tok, key1, NOW, &c);
	assert_int_equal(c.scopes, JWT_SCOPE_READ | JWT_SCOPE_WRITE);
	assert_int_equal(c.ephemeral, 1);
	free(tok);
}

static void test_ref_policies(void **state)
{
	char pattern[JWT_PATTERN_MAX + 2], *list;
	struct jwt_claims c;
	char *tok;
	json_object *j;
	size_t l = 0;

	payload_refused(payload_extra(",\"ref_policies\":{}"), "claim 'ref_policies' must be an array");
	payload_refused(payload_extra(",\"ref_policies\":[1]"), "ref_policies[0] must be an object");
	payload_refused(payload_extra(",\"ref_policies\":[{\"pattern\":\"a\"}]"),
			"ref_policies[0] must have exactly the members pattern and ops");
	payload_refused(payload_extra(",\"ref_policies\":[{\"pattern\":\"a\",\"ops\":[\"no-push\"],"
				      "\"x\":1}]"),
			"ref_policies[0] must have exactly the members pattern and ops");
	payload_refused(payload_extra(",\"ref_policies\":[{\"pattern\":\"a\",\"ops\":[\"no-push\"]},"
				      "{\"pattern\":\"\",\"ops\":[\"no-push\"]}]"),
			"ref_policies[1].pattern must be 1 to 256 printable characters");
	payload_refused(payload_extra(",\"ref_policies\":[{\"pattern\":\"a b\",\"ops\":[\"no-push\"]}]"),
			"ref_policies[0].pattern must be 1 to 256 printable characters");
	payload_refused(payload_extra(",\"ref_policies\":[{\"pattern\":1,\"ops\":[\"no-push\"]}]"),
			"ref_policies[0].pattern must be a string");
	payload_refused(payload_extra(",\"ref_policies\":[{\"pattern\":\"a\",\"ops\":[]}]"),
			"ref_policies[0].ops must be a non-empty array");
	payload_refused(payload_extra(",\"ref_policies\":[{\"pattern\":\"a\",\"ops\":\"no-push\"}]"),
			"ref_policies[0].ops must be a non-empty array");
	payload_refused(payload_extra(",\"ref_policies\":[{\"pattern\":\"a\",\"ops\":[\"push\"]}]"),
			"ref_policies[0].ops may only hold 'no-push' and 'no-force-push'");

	memset(pattern, 'p', sizeof(pattern) - 1);
	pattern[sizeof(pattern) - 1] = 0;
	payload_refused(payload_extra(fmt(",\"ref_policies\":[{\"pattern\":\"%s\",\"ops\":[\"no-push\"]}]",
					  pattern)),
			"ref_policies[0].pattern must be 1 to 256 printable characters");
	pattern[JWT_PATTERN_MAX] = 0;
	payload_accepted(payload_extra(fmt(",\"ref_policies\":[{\"pattern\":\"%s\",\"ops\":[\"no-push\"]}]",
					   pattern)));

	/* at most 32 */
	list = malloc(40 * 48);
	assert_non_null(list);
	for (int i = 0; i < 33; i++)
		l += (size_t)snprintf(list + l, 40 * 48 - l, "%s{\"pattern\":\"r%d\",\"ops\":[\"no-push\"]}",
				      i ? "," : "", i);
	payload_refused(payload_extra(fmt(",\"ref_policies\":[%s]", list)),
			"claim 'ref_policies' has more than 32 policies");
	strrchr(list, '{')[-1] = 0; /* drop the 33rd */
	tok = craft(key1, hdr(kid1), payload_extra(fmt(",\"ref_policies\":[%s]", list)));
	accepted_at(tok, key1, NOW, &c);
	assert_int_equal(c.n_ref_policies, 32);
	assert_string_equal(c.ref_policies[31].pattern, "r31");
	free(tok);
	free(list);

	/* handed on as JSON, as written in a token */
	c.n_ref_policies = 2;
	c.ref_policies[1].ops = JWT_OP_NO_PUSH | JWT_OP_NO_FORCE_PUSH;
	snprintf(c.ref_policies[1].pattern, sizeof(c.ref_policies[1].pattern), "refs/heads/*");
	j = jwt_ref_policies_json(&c);
	assert_non_null(j);
	assert_string_equal(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE),
			    "[{\"pattern\":\"r0\",\"ops\":[\"no-push\"]},"
			    "{\"pattern\":\"refs/heads/*\",\"ops\":[\"no-push\",\"no-force-push\"]}]");
	json_object_put(j);
}

/* --- header ---------------------------------------------------------------------------- */

static void test_alg_none_and_others(void **state)
{
	static const char *algs[] = {
		"\"none\"", "\"None\"", "\"HS256\"", "\"RS256\"", "\"ES384\"", "\"es256\"",
		"\"ES256 \"", "\"ES256\\u0000\"", "1", "null", "[\"ES256\"]",
	};
	unsigned char zero[64] = { 0 };
	char *tok, *in;

	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		header_refused(fmt("{\"alg\":%s,\"typ\":\"JWT\",\"kid\":\"%s\"}", algs[i], kid1),
			       "alg must be ES256");
	header_refused(fmt("{\"typ\":\"JWT\",\"kid\":\"%s\"}", kid1), "alg must be ES256");
	/* the classic unsigned token: an empty signature */
	in = signing_input(fmt("{\"alg\":\"none\",\"typ\":\"JWT\",\"kid\":\"%s\"}", kid1),
			   payload_extra(""));
	tok = concat3(in, ".", "");
	refused(tok, "token has an empty part");
	free(tok);
	/* and with some signature bytes: refused on alg before they are looked at */
	tok = assemble(fmt("{\"alg\":\"none\",\"kid\":\"%s\"}", kid1), payload_extra(""), zero, 64);
	refused(tok, "alg must be ES256");
	free(tok);
	free(in);
}

/* HS256 with the public key's PEM as the HMAC secret: the algorithm-confusion attack. */
static void test_hs256_with_public_pem(void **state)
{
	char *pem = NULL, *in, *tok, *s;
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	struct err e = { .msg = "" };

	assert_int_equal(jwt_key_pem(key1, JWT_KEY_PUBLIC, &pem, &e), 0);
	in = signing_input(fmt("{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"%s\"}", kid1),
			   payload_extra(""));
	assert_non_null(HMAC(EVP_sha256(), pem, (int)strlen(pem), (const unsigned char *)in,
			     strlen(in), mac, &maclen));
	assert_int_equal(maclen, 32);
	s = b64u(mac, maclen);
	tok = concat3(in, ".", s);
	refused(tok, "alg must be ES256");
	free(tok);
	free(in);
	/* the same MAC under a header that claims ES256: not a 64-byte signature */
	in = signing_input(hdr(kid1), payload_extra(""));
	assert_non_null(HMAC(EVP_sha256(), pem, (int)strlen(pem), (const unsigned char *)in,
			     strlen(in), mac, &maclen));
	free(s);
	s = b64u(mac, maclen);
	tok = concat3(in, ".", s);
	refused(tok, "signature must be 64 bytes (R||S), not 32");
	free(tok);
	free(in);
	free(s);
	free(pem);
}

static void test_header_checks(void **state)
{
	char long_kid[JWT_KID_MAX + 2];
	struct jwt_claims c;
	char *tok;

	header_refused(fmt("{\"alg\":\"ES256\",\"typ\":\"JWS\",\"kid\":\"%s\"}", kid1),
		       "typ must be JWT");
	header_refused(fmt("{\"alg\":\"ES256\",\"typ\":null,\"kid\":\"%s\"}", kid1),
		       "typ must be JWT");
	header_refused("{\"alg\":\"ES256\",\"typ\":\"JWT\"}", "header 'kid' is required");
	header_refused("{\"alg\":\"ES256\",\"kid\":\"\"}", "header 'kid' must be 1 to 64 characters");
	header_refused("{\"alg\":\"ES256\",\"kid\":\"a/b\"}",
		       "header 'kid' has a character that is not allowed");
	header_refused("{\"alg\":\"ES256\",\"kid\":3}", "header 'kid' must be a string");
	memset(long_kid, 'k', sizeof(long_kid) - 1);
	long_kid[sizeof(long_kid) - 1] = 0;
	header_refused(fmt("{\"alg\":\"ES256\",\"kid\":\"%s\"}", long_kid),
		       "header 'kid' must be 1 to 64 characters");
	header_refused(fmt("{\"alg\":\"ES256\",\"kid\":\"%s\",\"crit\":[\"b64\"],\"b64\":false}",
			   kid1), "header 'crit' is not supported");
	header_refused("[]", "header is not a JSON object");
	header_refused("\"ES256\"", "header is not a JSON object");
	header_refused("{\"alg\":\"ES256\"", "header is not a JSON object");
	header_refused(fmt("{\"alg\":\"ES256\",\"kid\":\"%s\"}{}", kid1), "header is not a JSON object");
	header_refused("{'alg':'ES256'}", "header is not a JSON object");
	header_refused("{\"alg\":\"ES256\",\"kid\":\"\xff\"}", "header is not a JSON object");

	/* whitespace around the object is JSON; typ may be absent; a jwk in the header is
	 * ignored: the key is the caller's */
	tok = craft(key1, fmt(" {\"alg\":\"ES256\",\"kid\":\"%s\"}\n", kid1), payload_extra(""));
	accepted(tok);
	free(tok);
	tok = craft(key1, fmt("{\"kid\":\"%s\",\"alg\":\"ES256\"}", kid1), payload_extra(""));
	accepted_at(tok, key1, NOW, &c);
	assert_string_equal(c.kid, kid1);
	free(tok);
	tok = craft(key2, fmt("{\"alg\":\"ES256\",\"kid\":\"%s\",\"jwk\":{\"kty\":\"EC\"}}", kid1),
		    payload_extra(""));
	refused(tok, "signature does not verify");
	free(tok);
}

static void test_payload_not_an_object(void **state)
{
	payload_refused("[]", "payload is not a JSON object");
	payload_refused("null", "payload is not a JSON object");
	payload_refused("{\"iss\":", "payload is not a JSON object");
	payload_refused(payload_extra(",\"deep\":[[[[[[[[[[[[1]]]]]]]]]]]]"),
			"payload is not a JSON object");
	payload_accepted(payload_extra(",\"deep\":[[[[1]]]]"));
}

/* --- the signature, and the token's shape ----------------------------------------------- */

static void test_tampering(void **state)
{
	char *a, *b, *spliced, *mid, was;
	struct jwt_claims c;
	size_t alen;

	base_claims(&c);
	a = sign_ok(key1, kid1, &c);
	snprintf(c.name, sizeof(c.name), "other");
	b = sign_ok(key1, kid1, &c);
	/* b's header and payload under a's signature */
	spliced = strdup(b);
	assert_non_null(spliced);
	alen = strlen(a);
	memcpy(strrchr(spliced, '.') + 1, strrchr(a, '.') + 1, 86);
	refused(spliced, "signature does not verify");
	free(spliced);

	/* one character of the payload changed */
	mid = strchr(a, '.') + 10;
	was = *mid;
	*mid = was == 'A' ? 'B' : 'A';
	refused(a, "signature does not verify");
	*mid = was;
	/* another well-formed header over the same payload and signature */
	{
		char *h = b64u(fmt("{\"alg\":\"ES256\",\"kid\":\"%s\"}", kid1),
			       strlen(fmt("{\"alg\":\"ES256\",\"kid\":\"%s\"}", kid1)));

		spliced = concat3(h, strchr(a, '.'), "");
		refused(spliced, "signature does not verify");
		free(spliced);
		free(h);
	}
	/* one character of the signature (not the last, whose low bits must be zero) */
	was = a[alen - 20];
	a[alen - 20] = was == 'A' ? 'B' : 'A';
	refused(a, "signature does not verify");
	a[alen - 20] = was;
	accepted(a);
	free(a);
	free(b);
}

static void test_signature_forms(void **state)
{
	/* the order n of P-256: r = n is out of range */
	static const unsigned char order[32] = {
		0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84,
		0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
	};
	const char *h = hdr(kid1), *p = payload_extra("");
	unsigned char sig[80], der[80], swapped[64];
	char *in = signing_input(h, p), *tok;
	size_t derlen;

	raw_sign(key1, in, sig);
	/* 63 and 65 bytes */
	tok = assemble(h, p, sig, 63);
	refused(tok, "signature must be 64 bytes (R||S), not 63");
	free(tok);
	sig[64] = 0;
	tok = assemble(h, p, sig, 65);
	refused(tok, "signature must be 64 bytes (R||S), not 65");
	free(tok);
	/* S||R */
	memcpy(swapped, sig + 32, 32);
	memcpy(swapped + 32, sig, 32);
	tok = assemble(h, p, swapped, 64);
	refused(tok, "signature does not verify");
	free(tok);
	/* zeros, and r = n */
	memset(swapped, 0, sizeof(swapped));
	tok = assemble(h, p, swapped, 64);
	refused(tok, "signature does not verify");
	free(tok);
	memcpy(swapped, order, 32);
	memcpy(swapped + 32, sig + 32, 32);
	tok = assemble(h, p, swapped, 64);
	refused(tok, "signature does not verify");
	free(tok);
	/* a valid DER signature of the same input is not a JOSE signature */
	derlen = der_sign(key1, in, der);
	assert_true(derlen >= 8 && derlen <= 72);
	tok = assemble(h, p, der, derlen);
	refused(tok, "signature must be 64 bytes (R||S), not *");
	free(tok);
	/* far too long to be one */
	{
		unsigned char big[200] = { 0 };

		tok = assemble(h, p, big, sizeof(big));
		refused(tok, "signature must be 64 bytes (R||S)");
		free(tok);
	}
	/* and the right one */
	tok = assemble(h, p, sig, 64);
	accepted(tok);
	free(tok);
	free(in);
}

static void test_parts(void **state)
{
	char *tok, *t;
	struct jwt_claims c;

	base_claims(&c);
	tok = sign_ok(key1, kid1, &c);
	refused_by(tok, (size_t)(strrchr(tok, '.') - tok), key1, NOW,
		   "token must have 3 parts, not 2");
	t = concat3(tok, ".", "AAAA");
	refused(t, "token must have 3 parts, not 4");
	free(t);
	t = concat3(tok, ".", "");
	refused(t, "token must have 3 parts, not 4");
	free(t);
	refused("abc", "token must have 3 parts, not 1");
	refused("", "token is empty");
	refused_by(NULL, 0, key1, NOW, "token is empty");
	refused("..", "token has an empty part");
	refused(".a.b", "token has an empty part");
	refused("a..b", "token has an empty part");
	refused("a.b.", "token has an empty part");
	refused("a.b.c", "header is not base64url without padding");
	free(tok);
}

static void test_padding_and_alphabet(void **state)
{
	const char *p = payload_extra(""), *h = hdr(kid1);
	char *in, *enc, *tok, *s, *t;
	unsigned char sig[64];

	/* a header whose encoding needs padding */
	if (strlen(h) % 3 == 0)
		h = fmt("{\"alg\":\"ES256\",\"typ\":\"JWT\",\"kid\":\"%s\" }", kid1);
	in = signing_input(h, p);
	raw_sign(key1, in, sig);
	s = b64u(sig, 64);
	tok = concat3(in, ".", s);
	accepted(tok);
	/* the same header in standard base64, with its '=' */
	enc = malloc(base64_encoded_size(strlen(h)));
	assert_non_null(enc);
	base64_encode((const unsigned char *)h, strlen(h), enc);
	assert_int_equal(enc[strlen(enc) - 1], '=');
	t = concat3(enc, strchr(tok, '.'), "");
	refused(t, "header is not base64url without padding");
	free(t);
	/* the signature with padding */
	t = concat3(tok, "==", "");
	refused(t, "signature is not base64url without padding");
	free(t);
	/* characters of the standard alphabet */
	t = strdup(tok);
	assert_non_null(t);
	t[3] = '+';
	refused(t, "header is not base64url without padding");
	t[3] = tok[3];
	t[strlen(t) - 5] = '/';
	refused(t, "signature is not base64url without padding");
	free(t);
	free(tok);
	free(enc);
	free(in);
	free(s);
}

static void test_length_bounds(void **state)
{
	struct jwt_claims c;
	char *pad, *tok = NULL, *exact;
	size_t lo = 0, n;
	struct err e = { .msg = "" };

	/* the largest token (unknown claims are ignored) is accepted, one longer is not */
	pad = malloc(JWT_MAX_LEN);
	assert_non_null(pad);
	for (size_t len = 6200; len > 5000; len--) {
		char *in;

		memset(pad, 'x', len);
		pad[len] = 0;
		in = signing_input(hdr(kid1), payload_extra(fmt(",\"pad\":\"%s\"", pad)));
		n = strlen(in) + 1 + 86;
		free(in);
		if (n <= JWT_MAX_LEN) {
			lo = len;
			break;
		}
	}
	assert_true(lo > 0);
	memset(pad, 'x', lo);
	pad[lo] = 0;
	tok = craft(key1, hdr(kid1), payload_extra(fmt(",\"pad\":\"%s\"", pad)));
	assert_true(strlen(tok) >= JWT_MAX_LEN - 2 && strlen(tok) <= JWT_MAX_LEN);
	accepted(tok);
	/* exactly n bytes are read: a copy with no NUL after it */
	exact = malloc(strlen(tok));
	assert_non_null(exact);
	memcpy(exact, tok, strlen(tok));
	{
		struct jwt_claims out;

		assert_int_equal(jwt_verify(exact, strlen(tok), key1, AUD, NOW, &out, &e), 0);
	}
	free(exact);
	free(tok);
	memset(pad, 'x', lo + 3);
	pad[lo + 3] = 0;
	tok = craft(key1, hdr(kid1), payload_extra(fmt(",\"pad\":\"%s\"", pad)));
	assert_true(strlen(tok) > JWT_MAX_LEN);
	refused(tok, "token is longer than 8192 bytes");
	free(tok);
	free(pad);

	/* jwt_sign will not make a token that long: 32 policies of 256 characters */
	base_claims(&c);
	c.n_ref_policies = JWT_MAX_REF_POLICIES;
	for (size_t i = 0; i < JWT_MAX_REF_POLICIES; i++) {
		memset(c.ref_policies[i].pattern, 'r', JWT_PATTERN_MAX);
		c.ref_policies[i].pattern[JWT_PATTERN_MAX] = 0;
		c.ref_policies[i].ops = JWT_OP_NO_PUSH;
	}
	tok = NULL;
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_null(tok);
	assert_string_equal(e.msg, "token would be longer than 8192 bytes");
}

static void test_sign_refuses_bad_claims(void **state)
{
	struct jwt_claims c;
	char *tok = NULL;
	struct err e = { .msg = "" };

	base_claims(&c);
	c.scopes = 0;
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "claim 'scopes' must hold 'git:read', 'git:write' or both");
	base_claims(&c);
	c.scopes = 4;
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	base_claims(&c);
	memset(c.iss, 'a', sizeof(c.iss)); /* no NUL */
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "claim 'iss' is too long");
	base_claims(&c);
	c.iss[0] = 0;
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "claim 'iss' is required");
	base_claims(&c);
	c.aud[0] = 0;
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "claim 'aud' is required");
	base_claims(&c);
	snprintf(c.owner, sizeof(c.owner), "ac me");
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "claim 'repo' must be 'owner/name'");
	base_claims(&c);
	c.n_ref_policies = 1;
	snprintf(c.ref_policies[0].pattern, sizeof(c.ref_policies[0].pattern), "refs/heads/*");
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "ref_policies[0].ops must hold 'no-push', 'no-force-push' or both");
	base_claims(&c);
	c.has_nbf = 1;
	c.nbf = c.exp;
	assert_int_equal(jwt_sign(key1, kid1, &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "nbf must be before exp");
	base_claims(&c);
	assert_int_equal(jwt_sign(key1, "bad kid", &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "kid must be 1 to 64 of [A-Za-z0-9._:-]");
	assert_int_equal(jwt_sign(key1, "", &c, &tok, &e), ERR_INVALID);
	assert_int_equal(jwt_sign(key1, NULL, &c, &tok, &e), ERR_INVALID);
	assert_null(tok);
}

static void test_sign_refuses_other_keys(void **state)
{
	struct jwt_claims c;
	char *tok = NULL;
	struct err e = { .msg = "" };
	EVP_PKEY *p384;
	BIO *bio = BIO_new_mem_buf(p384_pkcs8, -1);

	p384 = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	BIO_free(bio);
	assert_non_null(p384);
	base_claims(&c);
	assert_int_equal(jwt_sign(p384, kid1, &c, &tok, &e), ERR_INVALID);
	assert_string_equal(e.msg, "key must be on curve P-256, not secp384r1");
	assert_null(tok);
	assert_int_equal(jwt_kid(p384, c.kid, &e), ERR_INVALID);
	assert_string_equal(c.kid, "");
	EVP_PKEY_free(p384);
}

/* --- jwt_peek ---------------------------------------------------------------------------- */

static void test_peek(void **state)
{
	struct jwt_unverified u;
	struct jwt_claims c;
	struct err e = { .msg = "" };
	char *tok, *t;
	size_t n;

	base_claims(&c);
	tok = sign_ok(key2, kid2, &c);
	assert_int_equal(jwt_peek(tok, strlen(tok), &u, &e), 0);
	assert_string_equal(u.kid, kid2);
	assert_string_equal(u.iss, "acme");
	assert_string_equal(u.owner, "acme");
	assert_string_equal(u.name, "website");
	/* nothing is verified: a broken signature still peeks (jwt_verify refuses it) */
	n = strlen(tok);
	tok[n - 20] = tok[n - 20] == 'A' ? 'B' : 'A';
	assert_int_equal(jwt_peek(tok, n, &u, &e), 0);
	free(tok);

	t = craft(key1, fmt("{\"alg\":\"none\",\"kid\":\"%s\"}", kid1), payload_extra(""));
	assert_int_equal(jwt_peek(t, strlen(t), &u, &e), ERR_INVALID);
	assert_string_equal(e.msg, "alg must be ES256");
	assert_string_equal(u.kid, "");
	free(t);
	t = craft(key1, hdr(kid1), "{\"iss\":\"acme\"}");
	assert_int_equal(jwt_peek(t, strlen(t), &u, &e), ERR_INVALID);
	assert_string_equal(e.msg, "claim 'repo' is required");
	free(t);
	t = craft(key1, hdr(kid1), "{\"repo\":\"acme/website\"}");
	assert_int_equal(jwt_peek(t, strlen(t), &u, &e), ERR_INVALID);
	assert_string_equal(e.msg, "claim 'iss' is required");
	free(t);
	assert_int_equal(jwt_peek("a.b", 3, &u, &e), ERR_INVALID);
	assert_string_equal(e.msg, "token must have 3 parts, not 2");
}

/* --- any input ----------------------------------------------------------------------------- */

/* Deterministic mutations of a valid token: every one is refused, none reads out of bounds
 * (each copy is exactly n bytes long, with no NUL after it, for the sanitizers). */
static void test_mutations_refused(void **state)
{
	static const char alphabet[] = "AZaz09-_.=+/ \0\xff{}\"";
	struct jwt_claims c;
	struct jwt_unverified u;
	char *tok;
	size_t len;
	uint32_t seed = 12345;

	base_claims(&c);
	c.n_ref_policies = 1;
	snprintf(c.ref_policies[0].pattern, sizeof(c.ref_policies[0].pattern), "refs/heads/main");
	c.ref_policies[0].ops = JWT_OP_NO_FORCE_PUSH;
	tok = sign_ok(key1, kid1, &c);
	len = strlen(tok);
	for (int round = 0; round < 600; round++) {
		char *m = malloc(len + 1);
		size_t n = len;
		int kind;

		assert_non_null(m);
		memcpy(m, tok, len);
		for (int k = 0; k < 1 + round % 3; k++) {
			seed = seed * 1103515245u + 12345u;
			kind = (int)(seed >> 16) % 4;
			seed = seed * 1103515245u + 12345u;
			size_t at = n ? (seed >> 8) % n : 0;

			if (kind == 0 && n) {
				m[at] = alphabet[(seed >> 3) % (sizeof(alphabet) - 1)];
			} else if (kind == 1 && n) {
				n = at; /* truncate */
			} else if (kind == 2 && n) {
				memmove(m + at, m + at + 1, n - at - 1);
				n--;
			} else if (n) {
				m[at] ^= (char)(1u << ((seed >> 4) % 8));
			}
		}
		{
			char *exact = malloc(n ? n : 1);
			struct err e = { .msg = "" };
			int rc;

			assert_non_null(exact);
			memcpy(exact, m, n);
			rc = jwt_verify(exact, n, key1, AUD, NOW, &c, &e);
			if (n == len && memcmp(exact, tok, len) == 0)
				assert_int_equal(rc, 0);
			else if (rc != ERR_INVALID)
				fail_msg("round %d: mutated token not refused (%d)", round, rc);
			/* Any answer will do; it must not crash (ASan watches). */
			if (jwt_peek(exact, n, &u, &e) != 0)
				assert_true(e.msg[0] != 0);
			free(exact);
		}
		free(m);
	}
	free(tok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b64url_vectors),
		cmocka_unit_test(test_b64url_strict),
		cmocka_unit_test(test_kid_known_vectors),
		cmocka_unit_test(test_kid_stable_and_distinct),
		cmocka_unit_test(test_key_pem_round_trip),
		cmocka_unit_test(test_key_other_types_refused),
		cmocka_unit_test(test_key_wrong_kind_refused),
		cmocka_unit_test(test_key_garbage_refused),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_minimal_claims_and_defaults),
		cmocka_unit_test(test_signature_interop),
		cmocka_unit_test(test_rfc9449_signature),
		cmocka_unit_test(test_wrong_key),
		cmocka_unit_test(test_expiry_and_skew),
		cmocka_unit_test(test_iat_and_nbf_in_the_future),
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_time_claims_malformed),
		cmocka_unit_test(test_audience),
		cmocka_unit_test(test_issuer_subject_jti),
		cmocka_unit_test(test_repository),
		cmocka_unit_test(test_scopes_and_kind),
		cmocka_unit_test(test_ref_policies),
		cmocka_unit_test(test_alg_none_and_others),
		cmocka_unit_test(test_hs256_with_public_pem),
		cmocka_unit_test(test_header_checks),
		cmocka_unit_test(test_payload_not_an_object),
		cmocka_unit_test(test_tampering),
		cmocka_unit_test(test_signature_forms),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_padding_and_alphabet),
		cmocka_unit_test(test_length_bounds),
		cmocka_unit_test(test_sign_refuses_bad_claims),
		cmocka_unit_test(test_sign_refuses_other_keys),
		cmocka_unit_test(test_peek),
		cmocka_unit_test(test_mutations_refused),
	};

	return cmocka_run_group_tests_name("jwt", tests, setup, teardown);
}
