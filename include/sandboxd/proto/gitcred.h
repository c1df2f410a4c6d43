/* gitcred.h: the sandbox token as a clone's git configuration holds it (app/sandbox/sh/clone.sh):
 * `extraHeader = Authorization: Basic <base64 of "x-access-token:<token>">` under the
 * service's URL. The configuration comes out of the sandbox, whose user may rewrite it:
 * this parser is bounded, pure and fuzzed (tests/fuzz/fuzz_gitcred.c), and the caller still
 * checks the token against the database. */
#ifndef SANDBOXD_GITCRED_H
#define SANDBOXD_GITCRED_H
#include <stddef.h>
#include "sandboxd/proto/token.h"

/* The most of a configuration that is read. */
#define GITCRED_TEXT_MAX 4096

/* Finds the first "Authorization: Basic <base64>" in text[0..n) (case-insensitive names,
 * as git's are) whose password is a sandbox token with a valid checksum, and copies the
 * token into out. 1 when found, else 0 (out is then empty). */
int gitcred_token(const char *text, size_t n, char out[TOKEN_LEN + 1])
	__attribute__((warn_unused_result));

#endif
