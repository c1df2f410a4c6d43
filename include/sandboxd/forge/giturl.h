/* giturl.h: git URLs with short-lived tokens (JWT, ES256): the service's own signing keys,
 * owners' registered keys, and resolving a token into the caller of a git request.
 * A token signed by the service acts as the account that minted it ("sub"); one signed by
 * an owner's registered key acts as that owner, on that owner's repositories only. Either
 * is capped by its scopes and by the account's role at the time of use. */
#ifndef SANDBOXD_GITURL_H
#define SANDBOXD_GITURL_H
#include <openssl/evp.h>
#include "sandboxd/forge/auth.h"
#include "sandboxd/proto/jwt.h"

/* The "aud" of every git URL token: the same for the service and for owner-signed ones. */
#define GITURL_AUDIENCE "sandboxd"

/* Loads the service's signing key from a PEM file (SANDBOXD_SIGNING_KEY_FILE), once, in
 * the master before it forks: the file must be a regular file owned by the effective user
 * and readable by nobody else (mode 0600 or 0400), like ssh's keys; anything else is
 * ERR_INVALID naming the file and what is wrong. Once loaded, that key signs every git URL
 * and its kid verifies; keys in the database still verify what they signed before. */
int giturl_key_file_load(const char *path, struct err *e) __attribute__((warn_unused_result));

/* The service's signing key: the file's when one was loaded, else the newest in the
 * database, created (and stored) on first use. The caller frees *key with EVP_PKEY_free. */
int giturl_signing_key(struct db *db, EVP_PKEY **key, char kid[JWT_KID_MAX + 1],
		       struct err *e) __attribute__((warn_unused_result));

/* A git URL token of the claims in c, signed by key: c's aud becomes GITURL_AUDIENCE and
 * its kid the key's. *tok is malloc'd (the caller cleanses and frees it). The one place a
 * token is signed: by the service (giturl_mint) and by an owner's key (sandboxctl git-url). */
int giturl_sign(EVP_PKEY *key, struct jwt_claims *c, char **tok, struct err *e)
	__attribute__((warn_unused_result));

/* The service mints a token of c's claims: a fresh random jti after jti_prefix ("" for
 * none; the save's names its sandbox), then giturl_sign with the service's signing key
 * (giturl_signing_key). */
int giturl_mint(struct db *db, struct jwt_claims *c, const char *jti_prefix, char **tok,
		struct err *e)
	__attribute__((warn_unused_result));

/* *used = 1 when kid is the service's (the key file's or one in signing_keys) or any
 * account's registered key, revoked ones included (a kid names one key of one holder). */
int giturl_kid_in_use(struct db *db, const char *kid, int *used, struct err *e)
	__attribute__((warn_unused_result));

/* Verifies tok as a git URL token and fills *out (kind TOKEN_JWT) with the acting account,
 * the token's repository, scopes, kind, ref policies (in pool), jti and kid. ERR_DENIED
 * (with *failure saying why) for anything that does not verify, ERR_DB when the database
 * is away. */
int giturl_resolve(struct db *db, struct pool *pool, const char *tok, size_t n,
		   struct caller *out, const char **failure, struct err *e)
	__attribute__((warn_unused_result));

/* Proof of possession for POST /user/keys: a compact JWS signed by the key being registered,
 * header {"alg":"ES256","typ":"JWT","kid":<its RFC 7638 thumbprint>}, claims
 * {"aud":GITURL_PROOF_AUDIENCE,"sub":<the registering account's login>,"iat","exp"} with
 * exp - iat <= GITURL_PROOF_TTL (JWT_SKEW of skew). Its audience is never a git URL's, so a
 * proof is no credential and a git URL is no proof; it names the account, so one made for
 * someone else (or a public key without its private half) registers nothing. */
#define GITURL_PROOF_AUDIENCE "sandboxd:key-registration"
#define GITURL_PROOF_TTL 300

/* Makes the proof for key (private) and login at time now: *out is a new string the caller
 * frees. ERR_NOMEM, ERR_FAIL (OpenSSL), ERR_INVALID (not a P-256 key). */
int giturl_key_proof_make(EVP_PKEY *key, const char *login, int64_t now, char **out,
			  struct err *e) __attribute__((warn_unused_result));
/* 0 when proof[0..n) (n need not end in a NUL; at most JWT_MAX_LEN) is a proof made by key
 * (public) for login, valid at now; else ERR_INVALID with why ("signed by another key",
 * "it was made for another account", "it expired", …); ERR_FAIL when OpenSSL fails. */
int giturl_key_proof_check(EVP_PKEY *key, const char *proof, size_t n, const char *login,
			   int64_t now, struct err *e) __attribute__((warn_unused_result));

#endif
