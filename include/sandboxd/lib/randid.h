/* randid.h: random identifiers: a prefix, then lower-case hex of bytes from the kernel's
 * CSPRNG (OpenSSL's RAND_bytes). Sandbox ids (sb_), detached exec ids (ex_), request ids,
 * JWT ids. */
#ifndef SANDBOXD_RANDID_H
#define SANDBOXD_RANDID_H
#include <stddef.h>

/* Writes prefix and 2 * nbytes hex digits, NUL-terminated, into out (outsz bytes: at least
 * strlen(prefix) + 2 * nbytes + 1; nbytes at most 32). 0, or ERR_FAIL when the RNG fails
 * or out is too small (out is then the empty string). */
int randid(char *out, size_t outsz, const char *prefix, size_t nbytes)
	__attribute__((warn_unused_result));

#endif
