/* redact.h: every credential of this service's formats masked in text that is stored
 * (SPEC.md §7): personal, job and sandbox tokens (a prefix and a CRC32 checksum: only real
 * tokens match, never a look-alike) and git-URL JWTs (a header and a payload that are both
 * base64url JSON objects, "eyJ…", and a signature). Each becomes "***". Pure: no I/O, no
 * allocation; unit-tested and fuzzed (tests/fuzz/fuzz_redact.c). */
#ifndef SANDBOXD_REDACT_H
#define SANDBOXD_REDACT_H
#include <stddef.h>

#define REDACT_MASK "***"
/* The shortest signature part counted as a JWT's (an ES256 signature has 86). */
#define REDACT_JWT_SIG_MIN 16

/* Masks s[0..n) in place and returns its new length (at most n: a mask is shorter than
 * what it replaces). s need not be NUL-terminated; a NUL is kept where the text ends. */
size_t redact_tokens(char *s, size_t n);

#endif
