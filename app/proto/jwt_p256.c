/* jwt_p256.c: git URL tokens' keys and signatures: EC P-256 keys (PEM in and out, new
 * pairs, the RFC 7638 JWK thumbprint that is their kid) and the ES256 primitives that sign
 * and verify with them (see jwt.h). The JWS tokens and their claims are in jwt.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/proto/jwt_internal.h"
#include "sandboxd/common/banned.h"

/* --- keys ---------------------------------------------------------------------------- */

int jwt_check_p256(EVP_PKEY *k, struct err *e)
{
	char group[80] = "";
	size_t len = 0;
	const char *type;

	if (!k)
		return err_set(e, ERR_INVALID, "no key");
	if (!EVP_PKEY_is_a(k, "EC")) {
		type = EVP_PKEY_get0_type_name(k);
		return err_set(e, ERR_INVALID, "key must be an EC P-256 key, not %s",
			       type ? type : "a key of unknown type");
	}
	if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
					   &len) != 1) {
		ERR_clear_error();
		return err_set(e, ERR_INVALID, "key must be on the named curve P-256");
	}
	if (strcmp(group, "prime256v1") != 0)
		return err_set(e, ERR_INVALID, "key must be on curve P-256, not %s", group);
	/* Explicit curve parameters that happen to equal P-256 are refused, as most JOSE and
	 * X.509 code does: keys name their curve. */
	if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_EC_ENCODING, group, sizeof(group),
					   &len) != 1)
		ERR_clear_error(); /* not reported: the group name said enough */
	else if (strcmp(group, OSSL_PKEY_EC_ENCODING_GROUP) != 0)
		return err_set(e, ERR_INVALID,
			       "key must use the named curve P-256, not explicit curve parameters");
	return 0;
}

static int has_private(EVP_PKEY *k)
{
	BIGNUM *d = NULL;
	int ok = EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_PRIV_KEY, &d) == 1 && d;

	BN_clear_free(d);
	if (!ok)
		ERR_clear_error();
	return ok;
}

/* Never prompt for a passphrase (the default callback reads the terminal). */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

/* The first needle in s[0..n), or NULL. */
static const char *find(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle);

	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(s + i, needle, m) == 0)
			return s + i;
	return NULL;
}

static int contains(const char *s, size_t n, const char *needle)
{
	return find(s, n, needle) != NULL;
}

/* SubjectPublicKeyInfo (RFC 5480) of an uncompressed P-256 point, up to the point:
 * SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING { 0x04 x y } }. */
static const unsigned char p256_spki[27] = {
	0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06,
	0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
};

/* The common case without OpenSSL's PEM decoders (about 20 us instead of 350): one
 * "PUBLIC KEY" block holding exactly p256_spki and a point. The point is handed to
 * EVP_PKEY_fromdata, which refuses one that is not on the curve. NULL for anything else:
 * the caller then asks OpenSSL, which accepts the other forms (compressed points) and
 * words the refusals. */
static EVP_PKEY *p256_public_fast(const char *pem, size_t n)
{
	static const char begin[] = "-----BEGIN PUBLIC KEY-----", end[] = "-----END PUBLIC KEY-----";
	const char *p = find(pem, n, begin), *lim = pem + n;
	char b64[128];
	unsigned char der[96];
	size_t bl = 0, dl = 0;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *k = NULL;
	OSSL_PARAM params[3];

	if (!p)
		return NULL;
	for (p += sizeof(begin) - 1; p < lim && *p != '-'; p++) {
		if (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')
			continue;
		if (bl == sizeof(b64))
			return NULL;
		b64[bl++] = *p;
	}
	if ((size_t)(lim - p) < sizeof(end) - 1 || memcmp(p, end, sizeof(end) - 1) != 0 ||
	    bl % 4 != 0 || base64_decode(b64, bl, der, &dl) != 0 ||
	    dl != sizeof(p256_spki) + 64 || memcmp(der, p256_spki, sizeof(p256_spki)) != 0)
		return NULL;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"P-256", 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
						      der + sizeof(p256_spki) - 1, 65);
	params[2] = OSSL_PARAM_construct_end();
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (!ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params) != 1)
		k = NULL;
	EVP_PKEY_CTX_free(ctx);
	ERR_clear_error();
	return k;
}

int jwt_key_load_pem(const char *pem, size_t n, enum jwt_key_kind kind, EVP_PKEY **out,
		     struct err *e)
{
	BIO *bio = NULL;
	EVP_PKEY *k = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	int rc = 0;

	*out = NULL;
	if (!pem || n == 0)
		return err_set(e, ERR_INVALID, "key is empty");
	if (n > JWT_PEM_MAX)
		return err_set(e, ERR_INVALID, "key is longer than %d bytes", JWT_PEM_MAX);
	if (memchr(pem, 0, n))
		return err_set(e, ERR_INVALID, "key must be PEM text: it contains a NUL byte");
	if (kind == JWT_KEY_PUBLIC && !contains(pem, n, "-----BEGIN PUBLIC KEY-----") &&
	    contains(pem, n, "PRIVATE KEY-----"))
		return err_set(e, ERR_INVALID,
			       "expected a public key (-----BEGIN PUBLIC KEY-----), not a private key");
	if (kind == JWT_KEY_PRIVATE && contains(pem, n, "-----BEGIN ENCRYPTED PRIVATE KEY-----"))
		return err_set(e, ERR_INVALID, "encrypted private keys are not supported");
	if (kind == JWT_KEY_PRIVATE && !contains(pem, n, "PRIVATE KEY-----") &&
	    contains(pem, n, "-----BEGIN PUBLIC KEY-----"))
		return err_set(e, ERR_INVALID, "expected a private key, not a public key");
	if (kind == JWT_KEY_PUBLIC)
		k = p256_public_fast(pem, n);
	if (!k) {
		bio = BIO_new_mem_buf(pem, (int)n);
		if (!bio)
			return ERR_NOMEM;
		if (kind == JWT_KEY_PUBLIC)
			k = PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
		else
			k = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	}
	if (!k) {
		rc = err_set(e, ERR_INVALID, kind == JWT_KEY_PUBLIC ?
			     "key is not a PEM public key (-----BEGIN PUBLIC KEY-----)" :
			     "key is not a PEM private key (PKCS#8 or SEC1)");
		goto out;
	}
	rc = jwt_check_p256(k, e);
	if (rc)
		goto out;
	if (kind == JWT_KEY_PRIVATE && !has_private(k)) {
		rc = err_set(e, ERR_INVALID, "expected a private key, not a public key");
		goto out;
	}
	/* A public key needs no more checks: every decoder refuses a point that is not on the
	 * curve, the point at infinity has no encoding here, and P-256 has cofactor 1, so any
	 * other point has the full order. A private key must match the public key it carries,
	 * or it would sign under another key's kid. */
	if (kind == JWT_KEY_PRIVATE) {
		ctx = EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL);
		if (!ctx) {
			rc = ERR_NOMEM;
			goto out;
		}
		if (EVP_PKEY_pairwise_check(ctx) != 1) {
			rc = err_set(e, ERR_INVALID, "private key does not match its public key");
			goto out;
		}
	}
	*out = k;
	k = NULL;
out:
	ERR_clear_error();
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(k);
	BIO_free(bio);
	return rc;
}

int jwt_key_generate(EVP_PKEY **out, struct err *e)
{
	*out = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!*out) {
		ERR_clear_error();
		return err_set(e, ERR_FAIL, "cannot generate a P-256 key");
	}
	return 0;
}

int jwt_key_pem(EVP_PKEY *k, enum jwt_key_kind kind, char **out, struct err *e)
{
	BIO *bio = NULL;
	char *data = NULL;
	long len;
	int rc = 0, ok;

	*out = NULL;
	rc = jwt_check_p256(k, e);
	if (rc)
		return rc;
	if (kind == JWT_KEY_PRIVATE && !has_private(k))
		return err_set(e, ERR_INVALID, "key has no private half");
	/* secmem: the private key's PEM is wiped when the BIO is freed. */
	bio = BIO_new(kind == JWT_KEY_PRIVATE ? BIO_s_secmem() : BIO_s_mem());
	if (!bio)
		return ERR_NOMEM;
	if (kind == JWT_KEY_PRIVATE)
		ok = PEM_write_bio_PrivateKey(bio, k, NULL, NULL, 0, NULL, NULL);
	else
		ok = PEM_write_bio_PUBKEY(bio, k);
	len = ok == 1 ? BIO_get_mem_data(bio, &data) : 0;
	if (len <= 0 || !data) {
		rc = err_set(e, ERR_FAIL, "cannot write the key as PEM");
		goto out;
	}
	*out = malloc((size_t)len + 1);
	if (!*out) {
		rc = ERR_NOMEM;
		goto out;
	}
	memcpy(*out, data, (size_t)len);
	(*out)[len] = 0;
out:
	ERR_clear_error();
	BIO_free(bio);
	return rc;
}

int jwt_kid(EVP_PKEY *k, char out[JWT_KID_MAX + 1], struct err *e)
{
	BIGNUM *x = NULL, *y = NULL;
	unsigned char xb[32], yb[32], md[32];
	char xs[44], ys[44], jwk[128];
	int rc, len;

	out[0] = 0;
	rc = jwt_check_p256(k, e);
	if (rc)
		return rc;
	if (EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, &x) != 1 ||
	    EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, &y) != 1 ||
	    BN_bn2binpad(x, xb, 32) != 32 || BN_bn2binpad(y, yb, 32) != 32) {
		rc = err_set(e, ERR_FAIL, "cannot read the public key");
		goto out;
	}
	base64url_encode(xb, 32, xs);
	base64url_encode(yb, 32, ys);
	/* RFC 7638 §3.2: the required members only, in lexicographic order, no whitespace. */
	len = snprintf(jwk, sizeof(jwk), "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}",
		       xs, ys);
	if (len < 0 || (size_t)len >= sizeof(jwk) ||
	    EVP_Digest(jwk, (size_t)len, md, NULL, EVP_sha256(), NULL) != 1) {
		rc = err_set(e, ERR_FAIL, "cannot hash the public key");
		goto out;
	}
	base64url_encode(md, sizeof(md), out);
out:
	ERR_clear_error();
	BN_free(x);
	BN_free(y);
	return rc;
}

/* --- ES256 ----------------------------------------------------------------------------- */

int jwt_es256_sign(EVP_PKEY *k, const void *msg, size_t n, unsigned char sig[64],
		   struct err *e)
{
	EVP_MD_CTX *ctx = NULL;
	ECDSA_SIG *s = NULL;
	const BIGNUM *r, *sv;
	unsigned char der[80]; /* a P-256 DER signature is at most 72 bytes */
	const unsigned char *p = der;
	size_t derlen = sizeof(der);
	int rc = 0;

	rc = jwt_check_p256(k, e);
	if (rc)
		return rc;
	if (!has_private(k))
		return err_set(e, ERR_INVALID, "key has no private half");
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return ERR_NOMEM;
	if (EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, k) != 1 ||
	    EVP_DigestSign(ctx, der, &derlen, msg, n) != 1) {
		rc = err_set(e, ERR_FAIL, "cannot sign");
		goto out;
	}
	/* OpenSSL writes DER (SEQUENCE of two INTEGERs); JOSE wants R and S as 32 bytes each. */
	s = d2i_ECDSA_SIG(NULL, &p, (long)derlen);
	if (!s) {
		rc = err_set(e, ERR_FAIL, "cannot decode the signature");
		goto out;
	}
	ECDSA_SIG_get0(s, &r, &sv);
	if (BN_bn2binpad(r, sig, 32) != 32 || BN_bn2binpad(sv, sig + 32, 32) != 32) {
		rc = err_set(e, ERR_FAIL, "cannot encode the signature");
		goto out;
	}
out:
	ERR_clear_error();
	ECDSA_SIG_free(s);
	EVP_MD_CTX_free(ctx);
	return rc;
}

/* The raw R||S signature as DER, which OpenSSL verifies: the length (*der then holds it,
 * OPENSSL_free it), or ERR_NOMEM. */
static int raw_to_der(const unsigned char *sig, unsigned char **der)
{
	ECDSA_SIG *s = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig, 32, NULL), *sv = BN_bin2bn(sig + 32, 32, NULL);
	int n;

	if (!s || !r || !sv || ECDSA_SIG_set0(s, r, sv) != 1) {
		ECDSA_SIG_free(s);
		BN_free(r);
		BN_free(sv);
		return ERR_NOMEM;
	}
	n = i2d_ECDSA_SIG(s, der); /* s owns r and sv now */
	ECDSA_SIG_free(s);
	return n > 0 ? n : ERR_NOMEM;
}

/* jwt_es256_verify for a key already known to be P-256. */
int jwt_es256_verify_p256(EVP_PKEY *k, const void *msg, size_t n, const unsigned char *sig,
			  size_t siglen, struct err *e)
{
	EVP_MD_CTX *ctx;
	unsigned char *der = NULL;
	int derlen, rc = 0;

	/* Only the raw form: a DER signature (70 to 72 bytes) or any other length is refused. */
	if (siglen != SIG_LEN)
		return err_set(e, ERR_INVALID, "signature must be 64 bytes (R||S), not %zu", siglen);
	if ((derlen = raw_to_der(sig, &der)) < 0)
		return err_set(e, derlen, "out of memory");
	if (!(ctx = EVP_MD_CTX_new()))
		rc = err_set(e, ERR_NOMEM, "out of memory");
	else if (EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k) != 1)
		rc = err_set(e, ERR_FAIL, "cannot verify");
	else if (EVP_DigestVerify(ctx, der, (size_t)derlen, msg, n) != 1)
		rc = err_set(e, ERR_INVALID, "signature does not verify");
	ERR_clear_error();
	EVP_MD_CTX_free(ctx);
	OPENSSL_free(der);
	return rc;
}

int jwt_es256_verify(EVP_PKEY *k, const void *msg, size_t n, const unsigned char *sig,
		     size_t siglen, struct err *e)
{
	int rc = jwt_check_p256(k, e);

	return rc ? rc : jwt_es256_verify_p256(k, msg, n, sig, siglen, e);
}
