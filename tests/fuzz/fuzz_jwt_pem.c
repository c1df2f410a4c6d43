/* fuzz_jwt_pem.c: jwt_key_load_pem on an owner's uploaded key. The first input byte picks
 * the mode: bit 0 the kind asked for (public, private); bit 1 whether the rest is the PEM
 * text itself or DER that the harness wraps in PEM armour, bits 2-3 then picking the label
 * (PUBLIC KEY, PRIVATE KEY, EC PRIVATE KEY, ENCRYPTED PRIVATE KEY). The DER form lets the
 * fuzzer work on OpenSSL's decoders directly, and keeps private test keys out of the corpus
 * as text that secret scanners flag.
 *
 * Invariants: the OpenSSL error queue is empty after every call; failure leaves *out NULL
 * with a message; a loaded key has a kid, writes itself back as PEM that loads to the same
 * kid, and a private one signs what its public half verifies. */
#include <openssl/err.h>
#include "fuzz.h"
#include "sandboxd/lib/base64.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/common/banned.h"

static const char *const labels[] = { "PUBLIC KEY", "PRIVATE KEY", "EC PRIVATE KEY",
				      "ENCRYPTED PRIVATE KEY" };

/* DER der[0..n) as PEM text with label, in 64-character lines; *len without the NUL. */
static char *armour(const uint8_t *der, size_t n, const char *label, size_t *len)
{
	size_t blen = base64_encoded_size(n), cap = blen + blen / 64 + 2 * strlen(label) + 64;
	char *b64 = malloc(blen), *pem = malloc(cap);
	size_t o;

	FUZZ_CHECK(b64 && pem);
	base64_encode(der, n, b64);
	o = (size_t)snprintf(pem, cap, "-----BEGIN %s-----\n", label);
	for (size_t i = 0; i < blen - 1; i += 64) {
		size_t l = blen - 1 - i < 64 ? blen - 1 - i : 64;
		memcpy(pem + o, b64 + i, l);
		o += l;
		pem[o++] = '\n';
	}
	o += (size_t)snprintf(pem + o, cap - o, "-----END %s-----\n", label);
	FUZZ_CHECK(o < cap);
	free(b64);
	*len = o;
	return pem;
}

static void reload(EVP_PKEY *k, enum jwt_key_kind kind, const char *kid)
{
	char *pem = NULL, kid2[JWT_KID_MAX + 1];
	EVP_PKEY *k2 = NULL;
	struct err e;

	FUZZ_CHECK(jwt_key_pem(k, kind, &pem, &e) == 0);
	FUZZ_CHECK(jwt_key_load_pem(pem, strlen(pem), kind, &k2, &e) == 0);
	FUZZ_CHECK(jwt_kid(k2, kid2, &e) == 0 && strcmp(kid, kid2) == 0);
	FUZZ_CHECK(ERR_peek_error() == 0);
	EVP_PKEY_free(k2);
	free(pem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum jwt_key_kind kind;
	EVP_PKEY *k = (EVP_PKEY *)1;
	char *pem, kid[JWT_KID_MAX + 1];
	size_t len;
	struct err e;
	int rc;

	if (size < 1)
		return 0;
	kind = data[0] & 1 ? JWT_KEY_PRIVATE : JWT_KEY_PUBLIC;
	if (data[0] & 2) {
		char *armoured = armour(data + 1, size - 1, labels[data[0] >> 2 & 3], &len);
		pem = fuzz_dup(armoured, len);
		free(armoured);
	} else {
		len = size - 1;
		pem = fuzz_dup(data + 1, len);
	}
	e.msg[0] = 0;
	rc = jwt_key_load_pem(pem, len, kind, &k, &e);
	FUZZ_CHECK(ERR_peek_error() == 0);
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID || rc == ERR_NOMEM);
		FUZZ_CHECK(k == NULL && e.msg[0]);
		free(pem);
		return 0;
	}
	FUZZ_CHECK(k);
	FUZZ_CHECK(jwt_kid(k, kid, &e) == 0 && strlen(kid) == JWT_KID_LEN);
	reload(k, JWT_KEY_PUBLIC, kid);
	if (kind == JWT_KEY_PRIVATE) {
		unsigned char sig[64];

		reload(k, JWT_KEY_PRIVATE, kid);
		FUZZ_CHECK(jwt_es256_sign(k, pem, len, sig, &e) == 0);
		FUZZ_CHECK(jwt_es256_verify(k, pem, len, sig, sizeof(sig), &e) == 0);
		sig[0] ^= 1;
		FUZZ_CHECK(jwt_es256_verify(k, pem, len, sig, sizeof(sig), &e) == ERR_INVALID);
	}
	FUZZ_CHECK(ERR_peek_error() == 0);
	EVP_PKEY_free(k);
	free(pem);
	return 0;
}
