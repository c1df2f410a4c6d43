/* strv.h: bounded lists of strings for argv and environment arrays, in a request's pool.
 * Invariants: v holds max + 1 slots, v[n] == NULL (ready for execve), n <= max; every
 * string is a copy in the pool, so the list lives as long as the pool (pool_reset frees
 * it, nothing else does). An add that would pass max fails with ERR_TOOBIG and leaves the
 * list as it was: a list is never cut short without its caller knowing (a child started
 * without, say, the hook's ref policies would skip a check).
 *
 * Errors: 0, ERR_TOOBIG past max, ERR_NOMEM when the pool is exhausted, ERR_INVALID for a
 * NULL string or a variable name that is empty or holds '='. The first error is also kept
 * in err: a builder that adds many strings may check once, at its end, since every add
 * after a failure fails the same way and adds nothing. */
#ifndef SANDBOXD_STRV_H
#define SANDBOXD_STRV_H
#include <stddef.h>
#include "sandboxd/lib/pool.h"

struct strv {
	char **v;            /* NULL-terminated */
	size_t n;            /* strings in v */
	size_t max;          /* the most strings v may hold */
	int err;             /* the first error, or 0 */
	struct pool *pool;
};

/* An empty list of at most max strings (max + 1 slots from p). 0 or ERR_NOMEM (err too). */
int strv_init(struct strv *s, struct pool *p, size_t max) __attribute__((warn_unused_result));

/* Appends a copy of str. */
int strv_add(struct strv *s, const char *str) __attribute__((warn_unused_result));

/* Appends the formatted string. */
int strv_addf(struct strv *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), warn_unused_result));

/* Appends "name=value" for an environment; a NULL value adds nothing (the variable is left
 * out on purpose) and returns 0. */
int strv_setenv(struct strv *s, const char *name, const char *value)
	__attribute__((warn_unused_result));

#endif
