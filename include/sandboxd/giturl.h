/* giturl.h: git URLs with short-lived tokens (JWT, ES256): the service's own signing keys,
 * owners' registered keys, and resolving a token into the caller of a git request.
 * A token signed by the service acts as the account that minted it ("sub"); one signed by
 * an owner's registered key acts as that owner, on that owner's repositories only. Either
 * is capped by its scopes and by the account's role at the time of use. */
#ifndef SANDBOXD_GITURL_H
#define SANDBOXD_GITURL_H
#include <openssl/evp.h>
#include "sandboxd/http.h"
#include "sandboxd/jwt.h"

/* The "aud" of every git URL token: the same for the service and for owner-signed ones. */
#define GITURL_AUDIENCE "sandboxd"

/* Loads the service's signing key from a PEM file (SANDBOXD_SIGNING_KEY_FILE), once, in
 * the master before it forks: the file must be a regular file owned by the effective user
 * and readable by nobody else (mode 0600 or 0400), like ssh's keys; anything else is
 * ERR_INVALID naming the file and what is wrong. Once loaded, that key signs every git URL
 * and its kid verifies; keys in the database still verify what they signed before. */
int giturl_key_file_load(const char *path, struct err *e);

/* The service's signing key: the file's when one was loaded, else the newest in the
 * database, created (and stored) on first use. The caller frees *key with EVP_PKEY_free. */
int giturl_signing_key(struct db *db, EVP_PKEY **key, char kid[JWT_KID_MAX + 1],
		       struct err *e);

/* Verifies tok as a git URL token and fills r->caller (kind TOKEN_JWT) with the acting
 * account, the token's repository, scopes, kind and ref policies. ERR_DENIED (with
 * r->auth_failure saying why) for anything that does not verify, ERR_DB when the database
 * is away. */
int giturl_resolve(struct req *r, const char *tok, size_t n, struct err *e);

#endif
