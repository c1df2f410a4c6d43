/* fuzz.h: what every libFuzzer target in tests/fuzz/ shares. A target defines
 * LLVMFuzzerTestOneInput (and, if it needs set-up, LLVMFuzzerInitialize); the same file links
 * either with libFuzzer (make fuzz) or with replay.c (make fuzz-replay, make unit).
 *
 * Inputs are copied into buffers of exactly their size, so that AddressSanitizer reports a
 * read one byte past the end; fuzz_cstr makes the NUL-terminated copy for APIs that take a C
 * string. FUZZ_CHECK aborts on a broken invariant, so that both libFuzzer and the replay
 * report it as a crash, whatever NDEBUG says. */
#ifndef SANDBOXD_FUZZ_H
#define SANDBOXD_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__,    \
				__LINE__, #cond);                                     \
			abort();                                                      \
		}                                                                     \
	} while (0)

/* A copy of data[0..n) in a buffer of exactly n bytes (for n = 0, one byte that a parser
 * must never read; zeroed so that the compiler sees it initialised). Aborts when memory runs out: that is the harness's failure, not the target's. */
static inline char *fuzz_dup(const void *data, size_t n)
{
	char *p = malloc(n ? n : 1);

	if (!p)
		abort();
	if (n)
		memcpy(p, data, n);
	else
		p[0] = 0;
	return p;
}

/* A NUL-terminated copy of data[0..n) in exactly n + 1 bytes (embedded NULs kept, so the
 * C string may be shorter than n). */
static inline char *fuzz_cstr(const void *data, size_t n)
{
	char *p = malloc(n + 1);

	if (!p)
		abort();
	if (n)
		memcpy(p, data, n);
	p[n] = 0;
	return p;
}

#endif
