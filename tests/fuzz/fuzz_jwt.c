/* fuzz_jwt.c: jwt_peek and jwt_verify on a git URL token. A key pair is generated once, when
 * the harness starts. Each input is verified as it is (shape, header and signature checks),
 * then re-signed with the harness's key over its own "header.payload" and verified again, so
 * that the fuzzer reaches the claims, which only a valid signature lets jwt_verify read.
 *
 * An input is a compact token, or, when it starts with '{', the header JSON, a line feed,
 * the payload JSON, and optionally a line feed and the signature's bytes, which the harness
 * encodes and joins: the fuzzer then mutates the JSON itself, and the seed corpus holds no
 * text shaped like a JWT, which secret scanners flag.
 *
 * Invariants: the OpenSSL error queue is empty after every call; failure zeroes the result
 * and never quotes the signature; a verified token peeks to the same kid, iss and repo; its
 * claims pass jwt.h's bounds; and jwt_sign of those claims verifies to the same claims. */
#include <openssl/err.h>
#include "fuzz.h"
#include "sandboxd/lib/base64.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/common/banned.h"

#define NOW INT64_C(1700000000)
#define AUD "https://git.example.test"

static EVP_PKEY *key;
static char kid[JWT_KID_MAX + 1];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct err e;

	FUZZ_CHECK(jwt_key_generate(&key, &e) == 0);
	FUZZ_CHECK(jwt_kid(key, kid, &e) == 0 && strlen(kid) == JWT_KID_LEN);
	return 0;
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static void check_claims(const struct jwt_claims *c)
{
	FUZZ_CHECK(c->iss[0] && strnlen(c->iss, sizeof(c->iss)) < sizeof(c->iss));
	FUZZ_CHECK(strcmp(c->aud, AUD) == 0);
	FUZZ_CHECK(c->owner[0] && strnlen(c->owner, sizeof(c->owner)) < sizeof(c->owner));
	FUZZ_CHECK(c->name[0] && c->name[0] != '.' &&
		   strnlen(c->name, sizeof(c->name)) < sizeof(c->name));
	FUZZ_CHECK(c->scopes && !(c->scopes & ~3u));
	FUZZ_CHECK(c->ephemeral == 0 || c->ephemeral == 1);
	FUZZ_CHECK(c->iat >= 0 && c->iat < c->exp && c->exp - c->iat <= JWT_MAX_TTL);
	FUZZ_CHECK(c->exp <= JWT_TIME_MAX);
	FUZZ_CHECK(c->iat <= NOW + JWT_SKEW && c->exp > NOW - JWT_SKEW);
	FUZZ_CHECK(!c->has_nbf || (c->nbf < c->exp && c->nbf <= NOW + JWT_SKEW));
	FUZZ_CHECK(c->n_ref_policies <= JWT_MAX_REF_POLICIES);
	for (size_t i = 0; i < c->n_ref_policies; i++) {
		const struct jwt_ref_policy *p = &c->ref_policies[i];
		FUZZ_CHECK(p->pattern[0] && strnlen(p->pattern, sizeof(p->pattern)) < sizeof(p->pattern));
		FUZZ_CHECK(p->ops && !(p->ops & ~3u));
	}
}

static int same_claims(const struct jwt_claims *a, const struct jwt_claims *b)
{
	if (strcmp(a->iss, b->iss) || strcmp(a->sub, b->sub) || strcmp(a->aud, b->aud) ||
	    strcmp(a->owner, b->owner) || strcmp(a->name, b->name) || strcmp(a->jti, b->jti) ||
	    a->scopes != b->scopes || a->ephemeral != b->ephemeral || a->iat != b->iat ||
	    a->exp != b->exp || a->has_nbf != b->has_nbf || (a->has_nbf && a->nbf != b->nbf) ||
	    a->n_ref_policies != b->n_ref_policies)
		return 0;
	for (size_t i = 0; i < a->n_ref_policies; i++)
		if (strcmp(a->ref_policies[i].pattern, b->ref_policies[i].pattern) ||
		    a->ref_policies[i].ops != b->ref_policies[i].ops)
			return 0;
	return 1;
}

/* Verifies tok[0..n); on success checks the claims against jwt_peek and a re-signing. */
static void verify(const char *tok, size_t n)
{
	static struct jwt_claims c, again;  /* large: off the stack */
	struct jwt_unverified u;
	struct err e;
	const char *sig = NULL;
	int rc;

	for (size_t i = 0; i < n; i++)
		if (tok[i] == '.')
			sig = tok + i;

	e.msg[0] = 0;
	rc = jwt_verify(tok, n, key, AUD, NOW, &c, &e);
	FUZZ_CHECK(ERR_peek_error() == 0);
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID || rc == ERR_NOMEM);
		FUZZ_CHECK(e.msg[0] && all_zero(&c, sizeof(c)));
		/* Messages never quote the token: its signature part, at least. */
		if (sig && (size_t)(tok + n - sig - 1) >= 16) {
			char probe[17];
			memcpy(probe, sig + 1, 16);
			probe[16] = 0;
			FUZZ_CHECK(strlen(probe) < 16 || !strstr(e.msg, probe));
		}
		return;
	}
	check_claims(&c);
	FUZZ_CHECK(jwt_peek(tok, n, &u, &e) == 0);
	FUZZ_CHECK(strcmp(u.kid, c.kid) == 0 && strcmp(u.iss, c.iss) == 0 &&
		   strcmp(u.owner, c.owner) == 0 && strcmp(u.name, c.name) == 0);

	char *tok2 = NULL;
	rc = jwt_sign(key, kid, &c, &tok2, &e);
	FUZZ_CHECK(ERR_peek_error() == 0);
	if (rc) {
		/* Only a token over JWT_MAX_LEN may be refused for claims that verified. */
		FUZZ_CHECK(rc == ERR_INVALID && strstr(e.msg, "longer"));
		return;
	}
	FUZZ_CHECK(jwt_verify(tok2, strlen(tok2), key, AUD, NOW, &again, &e) == 0);
	FUZZ_CHECK(same_claims(&c, &again) && strcmp(again.kid, kid) == 0);
	free(tok2);
}

/* "header.payload" of the input (up to its second dot) signed with the harness's key. */
static void resign(const uint8_t *data, size_t size)
{
	const uint8_t *d1 = memchr(data, '.', size), *d2;
	unsigned char raw[64];
	size_t hp, n;
	struct err e;
	char *tok;

	if (!d1)
		return;
	d2 = memchr(d1 + 1, '.', size - (size_t)(d1 + 1 - data));
	hp = d2 ? (size_t)(d2 - data) : size;
	if (hp > JWT_MAX_LEN)
		return;
	FUZZ_CHECK(jwt_es256_sign(key, data, hp, raw, &e) == 0);
	n = hp + 1 + base64url_encoded_size(64) - 1;
	tok = malloc(n + 1);
	FUZZ_CHECK(tok);
	memcpy(tok, data, hp);
	tok[hp] = '.';
	base64url_encode(raw, 64, tok + hp + 1);
	char *exact = fuzz_dup(tok, n);  /* without the NUL: jwt_verify must not need one */
	verify(exact, n);
	free(exact);
	free(tok);
}

/* Appends the base64url of s[0..n) at out + *o. */
static void put_b64url(char *out, size_t *o, const uint8_t *s, size_t n)
{
	base64url_encode(s, n, out + *o);
	*o += base64url_encoded_size(n) - 1;
}

/* "{header}\n{payload}[\nsignature]" as a compact token, in exactly *n bytes. */
static char *compose(const uint8_t *data, size_t size, size_t *n)
{
	const uint8_t *nl1 = memchr(data, '\n', size), *nl2 = NULL, *end = data + size;
	size_t cap = base64url_encoded_size(size) + 16, o = 0;
	char *tok = malloc(cap), *exact;

	FUZZ_CHECK(tok);
	if (nl1)
		nl2 = memchr(nl1 + 1, '\n', (size_t)(end - nl1 - 1));
	put_b64url(tok, &o, data, (size_t)((nl1 ? nl1 : end) - data));
	tok[o++] = '.';
	if (nl1)
		put_b64url(tok, &o, nl1 + 1, (size_t)((nl2 ? nl2 : end) - nl1 - 1));
	tok[o++] = '.';
	if (nl2)
		put_b64url(tok, &o, nl2 + 1, (size_t)(end - nl2 - 1));
	else
		tok[o++] = 'A';
	FUZZ_CHECK(o < cap);
	exact = fuzz_dup(tok, o);
	free(tok);
	*n = o;
	return exact;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jwt_unverified u;
	struct err e;
	size_t n = size;
	char *tok = size && data[0] == '{' ? compose(data, size, &n) : fuzz_dup(data, size);
	int rc;

	memset(&u, 0xa5, sizeof(u));
	rc = jwt_peek(tok, n, &u, &e);
	FUZZ_CHECK(ERR_peek_error() == 0);
	if (rc)
		FUZZ_CHECK(all_zero(&u, sizeof(u)));
	else
		FUZZ_CHECK(u.kid[0] && u.iss[0] && u.owner[0] && u.name[0]);
	verify(tok, n);
	resign((const uint8_t *)tok, n);
	free(tok);
	return 0;
}
