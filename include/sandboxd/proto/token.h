/* token.h: opaque tokens. A token is a 4-character prefix naming its kind (dfy_ personal,
 * djt_ job, dst_ sandbox), 36 random base62 characters and a 6-character base62 CRC32 of
 * everything before it, so that a scanner recognises real tokens offline. Only the SHA-256
 * (hex) of a token is ever stored. Pure functions: no database, no I/O but the RNG. */
#ifndef SANDBOXD_TOKEN_H
#define SANDBOXD_TOKEN_H
#include <stddef.h>

#define TOKEN_RANDOM_LEN 36
#define TOKEN_CHECK_LEN 6
#define TOKEN_LEN (4 + TOKEN_RANDOM_LEN + TOKEN_CHECK_LEN)
#define TOKEN_HASH_LEN 64
/* The longest credential we look at (a JWT is longer than an opaque token). */
#define TOKEN_MAX 8192

enum token_kind { TOKEN_INVALID = 0, TOKEN_PERSONAL, TOKEN_JOB, TOKEN_SANDBOX, TOKEN_JWT };

/* Mints a token of kind (personal, job or sandbox) into out[TOKEN_LEN + 1]. ERR_FAIL if the
 * RNG fails. */
int token_mint(enum token_kind kind, char out[TOKEN_LEN + 1]) __attribute__((warn_unused_result));
/* The kind of a well-formed token with a valid checksum; TOKEN_JWT for anything shaped like a
 * JWT (three base64url parts); TOKEN_INVALID otherwise. */
enum token_kind token_classify(const char *s, size_t n);
/* "personal", "job", "sandbox", "git-url". */
const char *token_kind_name(enum token_kind kind);
/* Lower-case hex SHA-256 of s[0..n) into out[TOKEN_HASH_LEN + 1]. */
void token_hash(const char *s, size_t n, char out[TOKEN_HASH_LEN + 1]);

enum auth_scheme { AUTH_NONE = 0, AUTH_BEARER, AUTH_BASIC };

/* Parses an Authorization header value. For Bearer, the credential is the rest of the
 * header; for Basic, the password of the base64 "user:password" pair. The credential is
 * copied NUL-terminated into out (outsz bytes). Returns 0 with *scheme set, or ERR_INVALID
 * for anything malformed or longer than outsz - 1. A NULL or empty header is AUTH_NONE. */
int token_parse_authorization(const char *header, enum auth_scheme *scheme, char *out,
			      size_t outsz) __attribute__((warn_unused_result));

#endif
