/* secrets.h: sandbox secrets (SPEC.md §4 "Secrets"): values kept per repository, encrypted
 * with the key of SANDBOXD_SECRETS_KEY_FILE (AES-256-GCM, a random nonce per value, the
 * repository and the name bound in as associated data, so that no value can be moved to
 * another row), decrypted only for the execs of sandboxes that asked for them by name. The
 * table holds ciphertext only; values are never answered, logged or audited. */
#ifndef SANDBOXD_SECRETS_H
#define SANDBOXD_SECRETS_H
#include <stddef.h>
#include "sandboxd/core/db.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/pool.h"

#define SECRETS_NAME_MAX 128       /* an environment variable name */
#define SECRETS_VALUE_MIN 8        /* shorter ones could not be masked in output */
#define SECRETS_VALUE_MAX 4096
#define SECRETS_PER_SANDBOX 16     /* each is masked in every output: a bounded set */
#define SECRETS_PER_REPO 100
#define SECRETS_KEY_HEX 64

/* Reads the key (64 hex digits, a newline allowed) from path, a file of the service's user
 * readable by it alone (keyfile.h); done before the workers fork. ERR_INVALID naming what
 * is wrong. */
int secrets_key_file_load(const char *path, struct err *e) __attribute__((warn_unused_result));
/* 1 when a key was loaded. */
int secrets_configured(void) __attribute__((warn_unused_result));

/* 1 when name is an environment variable name of at most SECRETS_NAME_MAX bytes. */
int secrets_name_valid(const char *name) __attribute__((warn_unused_result));

/* Encrypts value for repository repo_id under name, into out (hex: 2 * (1 + 12 + 16 + len)
 * digits and a NUL, pool memory). */
int secrets_seal(struct pool *p, const char *repo_id, const char *name, const char *value,
		 size_t len, char **out, struct err *e) __attribute__((warn_unused_result));
/* The value sealed in hex (from the table) for repo_id and name, into *out (pool memory,
 * NUL-terminated). ERR_FAIL when it does not open: another key, or a changed row. */
int secrets_open(struct pool *p, const char *repo_id, const char *name, const char *hex,
		 char **out, struct err *e) __attribute__((warn_unused_result));

/* The secrets sandbox_id asked for that its repository still has, decrypted: names[i] and
 * values[i] (pool memory), *n of them. */
struct secrets_set {
	const char *names[SECRETS_PER_SANDBOX];
	const char *values[SECRETS_PER_SANDBOX];
	size_t n;
};
int secrets_for_sandbox(struct db *db, struct pool *p, const char *sandbox_id,
			struct secrets_set *out, struct err *e) __attribute__((warn_unused_result));

/* The secrets of the sandbox a git push into repository repo_id comes from, when its
 * credential says which (decision 0077): a sandbox token (its row's sandbox), or the git
 * URL token a stop's save mints (sandbox_save.h: ephemeral, jti SANDBOX_SAVE_JTI_PREFIX
 * "<sandbox id>.<random>", signed by the service's own key, never an account's); the
 * sandbox must be one of repo_id's. out->n is 0 for any other push. Errors: ERR_DB, and a
 * value that does not open (then the push must be refused, never scanned without it). */
int secrets_for_pusher(struct db *db, struct pool *p, const struct caller *c,
		       const char *repo_id, struct secrets_set *out, struct err *e)
	__attribute__((warn_unused_result));

#endif
