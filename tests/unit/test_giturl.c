/* test_giturl.c: the proof of possession that POST /user/keys asks for (giturl.h): made by
 * giturl_key_proof_make, checked by giturl_key_proof_check, and every way a proof made for
 * someone else, by another key, or out of time is refused. Crafted proofs are signed with
 * jwt_es256_sign over hand-written JSON, so the checker is not only tested against its maker. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/common/banned.h"

#define NOW INT64_C(1800000000)

static EVP_PKEY *key_a, *key_b;
static char kid_a[JWT_KID_MAX + 1];

static int setup(void **state)
{
	struct err e;

	if (jwt_key_generate(&key_a, &e) || jwt_key_generate(&key_b, &e) ||
	    jwt_kid(key_a, kid_a, &e))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	EVP_PKEY_free(key_a);
	EVP_PKEY_free(key_b);
	return 0;
}

/* header and payload JSON, signed by k: a compact JWS in out (malloc'd). */
static char *craft(EVP_PKEY *k, const char *header, const char *payload)
{
	size_t hn = base64url_encoded_size(strlen(header));
	size_t pn = base64url_encoded_size(strlen(payload));
	size_t n = hn + pn + 100;
	unsigned char sig[64];
	char *tok = malloc(n), sig64[100];
	struct err e;

	assert_non_null(tok);
	base64url_encode((const unsigned char *)header, strlen(header), tok);
	tok[hn - 1] = '.';
	base64url_encode((const unsigned char *)payload, strlen(payload), tok + hn);
	assert_int_equal(jwt_es256_sign(k, tok, strlen(tok), sig, &e), 0);
	base64url_encode(sig, sizeof(sig), sig64);
	snprintf(tok + strlen(tok), n - strlen(tok), ".%s", sig64);
	return tok;
}

/* The check's answer for proof against key_a, login alice, at NOW; msg gets its reason. */
static int check(const char *proof, char msg[512])
{
	struct err e = { .msg = "" };
	int rc = giturl_key_proof_check(key_a, proof, strlen(proof), "alice", NOW, &e);

	snprintf(msg, 512, "%s", e.msg);
	return rc;
}

static void test_round_trip(void **state)
{
	char *proof = NULL, msg[512];
	struct err e;

	assert_int_equal(giturl_key_proof_make(key_a, "alice", NOW, &proof, &e), 0);
	assert_int_equal(check(proof, msg), 0);
	/* Logins are case-insensitive, as everywhere. */
	assert_int_equal(giturl_key_proof_check(key_a, proof, strlen(proof), "ALICE", NOW, &e), 0);
	/* Still good within its life and the skew; not after. */
	assert_int_equal(giturl_key_proof_check(key_a, proof, strlen(proof), "alice",
						NOW + GITURL_PROOF_TTL + JWT_SKEW - 1, &e), 0);
	assert_int_equal(giturl_key_proof_check(key_a, proof, strlen(proof), "alice",
						NOW + GITURL_PROOF_TTL + JWT_SKEW, &e), ERR_INVALID);
	assert_string_equal(e.msg, "it expired");
	free(proof);
}

static void test_other_account_or_key(void **state)
{
	char *proof = NULL, msg[512];
	struct err e;

	/* Made for bob: alice cannot register the key with it. */
	assert_int_equal(giturl_key_proof_make(key_a, "bob", NOW, &proof, &e), 0);
	assert_int_equal(check(proof, msg), ERR_INVALID);
	assert_string_equal(msg, "it was made for another account");
	free(proof);
	/* Made by another key: the public key being registered did not sign it. */
	assert_int_equal(giturl_key_proof_make(key_b, "alice", NOW, &proof, &e), 0);
	assert_int_equal(check(proof, msg), ERR_INVALID);
	assert_string_equal(msg, "signed by another key");
	free(proof);
}

static void test_crafted(void **state)
{
	char hdr[256], msg[512], *p;

	snprintf(hdr, sizeof(hdr), "{\"alg\":\"ES256\",\"typ\":\"JWT\",\"kid\":\"%s\"}", kid_a);
	p = craft(key_a, hdr, "{\"aud\":\"sandboxd:key-registration\",\"sub\":\"alice\","
			      "\"iat\":1800000000,\"exp\":1800000300}");
	assert_int_equal(check(p, msg), 0);
	free(p);
	/* A git URL's audience is no proof (and a proof's audience no git URL). */
	p = craft(key_a, hdr, "{\"aud\":\"sandboxd\",\"sub\":\"alice\","
			      "\"iat\":1800000000,\"exp\":1800000300}");
	assert_int_equal(check(p, msg), ERR_INVALID);
	assert_string_equal(msg, "aud must be 'sandboxd:key-registration'");
	free(p);
	p = craft(key_a, hdr, "{\"aud\":\"sandboxd:key-registration\",\"sub\":\"alice\","
			      "\"iat\":1800000000,\"exp\":1800003600}");
	assert_int_equal(check(p, msg), ERR_INVALID);
	assert_string_equal(msg, "it may live at most 300 s");
	free(p);
	p = craft(key_a, hdr, "{\"aud\":\"sandboxd:key-registration\",\"sub\":\"alice\","
			      "\"iat\":1800001000,\"exp\":1800001100}");
	assert_int_equal(check(p, msg), ERR_INVALID);
	assert_string_equal(msg, "it was issued in the future");
	free(p);
	p = craft(key_a, hdr, "{\"aud\":\"sandboxd:key-registration\",\"sub\":\"alice\"}");
	assert_int_equal(check(p, msg), ERR_INVALID);
	assert_string_equal(msg, "iat and exp are required, exp after iat");
	free(p);
	/* The algorithm is ES256 or nothing; the kid must be the key's. */
	snprintf(hdr, sizeof(hdr), "{\"alg\":\"none\",\"kid\":\"%s\"}", kid_a);
	p = craft(key_a, hdr, "{}");
	assert_int_equal(check(p, msg), ERR_INVALID);
	assert_string_equal(msg, "alg must be ES256");
	free(p);
	p = craft(key_a, "{\"alg\":\"ES256\",\"kid\":\"someone-else\"}",
		  "{\"aud\":\"sandboxd:key-registration\",\"sub\":\"alice\","
		  "\"iat\":1800000000,\"exp\":1800000300}");
	assert_int_equal(check(p, msg), ERR_INVALID);
	assert_string_equal(msg, "signed by another key");
	free(p);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"", ".", "..", "a.b", "a.b.c.d", "e30.e30.", "!!!.e30.AAAA", "e30.e30.AAAA",
	};
	char *proof = NULL, msg[512];
	struct err e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(check(bad[i], msg), ERR_INVALID);
	/* A valid proof with its signature changed, or cut short, fails. */
	assert_int_equal(giturl_key_proof_make(key_a, "alice", NOW, &proof, &e), 0);
	size_t n = strlen(proof);
	proof[n - 2] = proof[n - 2] == 'A' ? 'B' : 'A';
	assert_int_equal(check(proof, msg), ERR_INVALID);
	assert_int_equal(giturl_key_proof_check(key_a, proof, n - 5, "alice", NOW, &e),
			 ERR_INVALID);
	free(proof);
}

/* giturl_sign, the one signing path of git URL tokens (the service's and sandboxctl's):
 * the audience and kid are set whatever the caller left in them, and the token verifies
 * with that key only. */
static void test_sign(void **state)
{
	struct jwt_claims c, out;
	struct err e;
	char *tok = NULL;

	memset(&c, 0, sizeof(c));
	snprintf(c.aud, sizeof(c.aud), "elsewhere");
	snprintf(c.iss, sizeof(c.iss), "alice");
	snprintf(c.sub, sizeof(c.sub), "alice");
	snprintf(c.owner, sizeof(c.owner), "alice");
	snprintf(c.name, sizeof(c.name), "r");
	c.scopes = JWT_SCOPE_READ;
	c.iat = NOW;
	c.exp = NOW + 60;
	assert_int_equal(giturl_sign(key_a, &c, &tok, &e), 0);
	assert_string_equal(c.aud, GITURL_AUDIENCE);
	assert_int_equal(jwt_verify(tok, strlen(tok), key_a, GITURL_AUDIENCE, NOW, &out, &e), 0);
	assert_string_equal(out.kid, kid_a);
	assert_string_equal(out.owner, "alice");
	assert_int_not_equal(jwt_verify(tok, strlen(tok), key_b, GITURL_AUDIENCE, NOW, &out, &e), 0);
	free(tok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_other_account_or_key),
		cmocka_unit_test(test_crafted),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
