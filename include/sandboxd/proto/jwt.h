/* jwt.h: git URL tokens (SPEC §2): JWS compact serialization, ES256 (ECDSA P-256 with
 * SHA-256) only, signatures in the JOSE form R||S (64 bytes, RFC 7518 §3.4).
 *
 * The algorithm is taken from the key, never from the token: jwt_verify refuses any key that
 * is not EC P-256 and any header whose "alg" is not "ES256" ("none", "HS256", … are refused
 * before the signature is looked at). The key is found by the caller from the header's
 * "kid" (jwt_peek reads it without verifying anything), then jwt_verify checks the
 * signature, the claims and the time window.
 *
 * Every function returns 0, ERR_INVALID (with a message naming what is wrong: "token
 * expired", "signature does not verify", "alg must be ES256", "ttl over 3600 s", …),
 * ERR_NOMEM, or ERR_FAIL when OpenSSL itself fails (never because of what a token holds).
 * Messages never quote the token or the key. No function reads outside the n bytes it is
 * given; token and PEM inputs need not be NUL-terminated. No state is kept between calls,
 * and the OpenSSL error queue is left empty on every failure. Keys are plain EVP_PKEYs: the
 * caller frees them with EVP_PKEY_free.
 *
 * What jwt_verify does NOT check, and the caller must:
 *  - that the key found by "kid" may sign for the claimed "iss" (an owner's registered key,
 *    or the service's own key);
 *  - that owner/name is the repository the request is for (compare both fields);
 *  - the account ("sub", or the key's owner): enabled, and its current role, which caps
 *    the scopes. Whether git:write implies git:read is the caller's rule too.
 */
#ifndef SANDBOXD_JWT_H
#define SANDBOXD_JWT_H
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include "sandboxd/common/err.h"

#define JWT_MAX_TTL 3600          /* exp - iat, seconds */
#define JWT_DEFAULT_TTL 900       /* for callers that mint; this module never picks a ttl */
#define JWT_SKEW 60               /* clock skew allowed on iat, nbf and exp, seconds */
#define JWT_MAX_LEN 8192          /* a whole token, bytes */
#define JWT_PEM_MAX 16384         /* a PEM key given to jwt_key_load_pem, bytes */
#define JWT_KID_LEN 43            /* what jwt_kid writes: base64url of a SHA-256 */
#define JWT_KID_MAX 64            /* a "kid" in a header: 1..64 of [A-Za-z0-9._:-] */
#define JWT_ISS_MAX 128
#define JWT_SUB_MAX 128
#define JWT_JTI_MAX 128
#define JWT_AUD_MAX 256
#define JWT_OWNER_MAX 39          /* "repo" is owner/name: owner 1..39 of [A-Za-z0-9-], */
#define JWT_NAME_MAX 100          /* name 1..100 of [A-Za-z0-9._-], not starting with . */
#define JWT_MAX_REF_POLICIES 32
#define JWT_PATTERN_MAX 256
#define JWT_TIME_MAX INT64_C(253402300799) /* 9999-12-31T23:59:59Z: bounds every time */

enum jwt_key_kind { JWT_KEY_PUBLIC, JWT_KEY_PRIVATE };

/* Scopes, as flags: "git:read", "git:write". */
enum { JWT_SCOPE_READ = 1u << 0, JWT_SCOPE_WRITE = 1u << 1 };
/* Ref policy operations, as flags: "no-push", "no-force-push". */
enum { JWT_OP_NO_PUSH = 1u << 0, JWT_OP_NO_FORCE_PUSH = 1u << 1 };

struct jwt_ref_policy {
	char pattern[JWT_PATTERN_MAX + 1]; /* 1..256 printable ASCII characters, no space */
	unsigned ops;                      /* JWT_OP_* flags, at least one */
};

/* The claims of a git URL token. Plain data, no heap memory: nothing to release, and a
 * struct may be copied. Every string is NUL-terminated; "" means an optional claim was
 * absent. Strings other than the repository are 1..max printable ASCII characters without
 * spaces. jwt_verify fills one; jwt_sign reads one (kid excepted). */
struct jwt_claims {
	char iss[JWT_ISS_MAX + 1];         /* required */
	char sub[JWT_SUB_MAX + 1];         /* optional: the account that minted the token */
	char aud[JWT_AUD_MAX + 1];         /* sign: the audience; verify: the one that matched */
	char owner[JWT_OWNER_MAX + 1];     /* "repo": owner/name, required */
	char name[JWT_NAME_MAX + 1];
	unsigned scopes;                   /* JWT_SCOPE_* flags, at least one */
	int ephemeral;                     /* "kind": 0 "normal" (the default), 1 "ephemeral" */
	int64_t iat, exp;                  /* required; 0 <= iat < exp <= iat + JWT_MAX_TTL */
	int has_nbf;
	int64_t nbf;                       /* when has_nbf; nbf < exp */
	char jti[JWT_JTI_MAX + 1];         /* optional */
	char kid[JWT_KID_MAX + 1];         /* verify: the header's kid; ignored by jwt_sign */
	size_t n_ref_policies;             /* 0..JWT_MAX_REF_POLICIES */
	struct jwt_ref_policy ref_policies[JWT_MAX_REF_POLICIES];
};

/* What jwt_peek reads from a token without verifying it: enough to find the key. None of it
 * may be trusted before jwt_verify succeeds. */
struct jwt_unverified {
	char kid[JWT_KID_MAX + 1];
	char iss[JWT_ISS_MAX + 1];
	char owner[JWT_OWNER_MAX + 1];
	char name[JWT_NAME_MAX + 1];
};

/* --- keys ---------------------------------------------------------------------------- */

/* Loads an EC P-256 key from pem[0..n) (n <= JWT_PEM_MAX). JWT_KEY_PUBLIC wants
 * "-----BEGIN PUBLIC KEY-----" (SubjectPublicKeyInfo); JWT_KEY_PRIVATE wants an unencrypted
 * "PRIVATE KEY" (PKCS#8) or "EC PRIVATE KEY" (SEC1). A key of another type or curve, an
 * encrypted key (no passphrase is ever asked for), or a key of the other kind is refused
 * with a message saying so, and so is a private key that does not match the public key it
 * carries. On success *out is a new key the caller frees; on failure *out is NULL.
 * Cost: an uncompressed P-256 public key takes about 20 us; anything else goes through
 * OpenSSL's decoders (about 0.5 ms for a private key): cache private keys. */
int jwt_key_load_pem(const char *pem, size_t n, enum jwt_key_kind kind, EVP_PKEY **out,
		     struct err *e) __attribute__((warn_unused_result));
/* A new random P-256 key pair into *out (the caller frees). ERR_FAIL if OpenSSL fails. */
int jwt_key_generate(EVP_PKEY **out, struct err *e) __attribute__((warn_unused_result));
/* The PEM of key k: JWT_KEY_PRIVATE writes "-----BEGIN PRIVATE KEY-----" (PKCS#8,
 * unencrypted), JWT_KEY_PUBLIC writes "-----BEGIN PUBLIC KEY-----". *out is a new
 * NUL-terminated string the caller frees with free() (wipe a private one first, e.g. with
 * OPENSSL_cleanse). ERR_INVALID if k is not a P-256 key or has no private half. */
int jwt_key_pem(EVP_PKEY *k, enum jwt_key_kind kind, char **out, struct err *e)
	__attribute__((warn_unused_result));
/* The key id of k's public key: its RFC 7638 JWK thumbprint, the base64url (no padding) of
 * the SHA-256 of {"crv":"P-256","kty":"EC","x":"…","y":"…"}: JWT_KID_LEN characters and a
 * NUL into out. ERR_INVALID if k is not a P-256 key. */
int jwt_kid(EVP_PKEY *k, char out[JWT_KID_MAX + 1], struct err *e)
	__attribute__((warn_unused_result));

/* --- tokens -------------------------------------------------------------------------- */

/* Reads tok[0..n) enough to find its key: the header is checked as jwt_verify checks it
 * (shape, length, alg, typ, kid) and the payload must be a JSON object with a well-formed
 * "iss" and "repo". The signature is NOT checked: use the result only to look up the key
 * for jwt_verify. */
int jwt_peek(const char *tok, size_t n, struct jwt_unverified *out, struct err *e)
	__attribute__((warn_unused_result));

/* Signs claims c with the private key k under kid (normally jwt_kid(k); 1..JWT_KID_MAX of
 * [A-Za-z0-9._:-]) into *out, a new NUL-terminated "header.payload.signature" the caller
 * frees with free(). The header is exactly {"alg":"ES256","typ":"JWT","kid":"<kid>"}. The
 * claims must pass the checks jwt_verify makes (except the ones against the clock), so a
 * token this function makes is never one jwt_verify refuses for its shape; a token that
 * would be longer than JWT_MAX_LEN is refused. "kind" is always written, "ref_policies"
 * only when there are some, "sub", "nbf" and "jti" only when set. */
int jwt_sign(EVP_PKEY *k, const char *kid, const struct jwt_claims *c, char **out,
	     struct err *e) __attribute__((warn_unused_result));

/* Verifies tok[0..n) against key k (which must be P-256) at time now (Unix seconds), for
 * audience (the "aud" claim, a string or an array, must contain it), and fills *out on
 * success (on failure *out is zeroed). In order:
 *  1. exactly three non-empty base64url parts (no padding), n <= JWT_MAX_LEN;
 *  2. the header is a JSON object: "alg" is "ES256", "typ" is "JWT" if present, "kid" is
 *     present, no "crit"; other members are ignored (never "jwk", "jku", "x5u": the key is
 *     the caller's);
 *  3. the signature decodes to exactly 64 bytes and verifies over "header.payload";
 *  4. the payload is a JSON object (bounded depth) with the claims of struct jwt_claims
 *     ("repo" is "owner/name"; "scopes" a non-empty array of "git:read"/"git:write";
 *     "kind" "normal" or "ephemeral"; "ref_policies" at most 32 objects {pattern, ops}
 *     with no other members, ops a non-empty array of "no-push"/"no-force-push");
 *     unknown claims are ignored;
 *  5. time, with JWT_SKEW of skew: exp > iat, exp - iat <= JWT_MAX_TTL, iat <= now + skew,
 *     nbf <= now + skew, exp > now - skew. */
int jwt_verify(const char *tok, size_t n, EVP_PKEY *k, const char *audience, int64_t now,
	       struct jwt_claims *out, struct err *e) __attribute__((warn_unused_result));

/* The ref policies of c as a JSON array of {"pattern": …, "ops": [...]} (as written in a
 * token), e.g. to hand them to the push hook. The caller frees it with json_object_put;
 * NULL when memory runs out. */
json_object *jwt_ref_policies_json(const struct jwt_claims *c);

/* --- primitives (what the functions above are made of; for tools and tests) ---------- */


/* ES256 over msg[0..n) with the private P-256 key k: the JOSE signature R||S into sig. */
int jwt_es256_sign(EVP_PKEY *k, const void *msg, size_t n, unsigned char sig[64],
		   struct err *e) __attribute__((warn_unused_result));
/* 0 when sig[0..siglen) is a JOSE ES256 signature (exactly 64 bytes, R||S) of msg[0..n) by
 * the P-256 key k; ERR_INVALID otherwise ("signature does not verify", …). No header or
 * claims are looked at: authentication uses jwt_verify. */
int jwt_es256_verify(EVP_PKEY *k, const void *msg, size_t n, const unsigned char *sig,
		     size_t siglen, struct err *e) __attribute__((warn_unused_result));

#endif
