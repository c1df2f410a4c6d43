/* pool.h: the per-request arena. Everything a request allocates comes from its pool and is
 * freed at once by pool_reset when the request ends. Allocation never fails silently: an
 * exhausted pool (over its maximum size) returns NULL, which callers treat as ERR_NOMEM. */
#ifndef SANDBOXD_POOL_H
#define SANDBOXD_POOL_H
#include <stddef.h>
#include <stdarg.h>

struct pool_chunk;

struct pool {
	struct pool_chunk *head;  /* newest chunk first */
	size_t used;              /* bytes handed out since the last reset */
	size_t max;               /* a hard cap on used */
};

void pool_init(struct pool *p, size_t max);
/* Frees every chunk but the first and makes all memory reusable. */
void pool_reset(struct pool *p);
/* Frees everything; the pool may be initialised again. */
void pool_release(struct pool *p);

/* Zeroed, 16-byte aligned memory or NULL. */
void *pool_alloc(struct pool *p, size_t n);
char *pool_strdup(struct pool *p, const char *s);
char *pool_strndup(struct pool *p, const char *s, size_t n);
char *pool_printf(struct pool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *pool_vprintf(struct pool *p, const char *fmt, va_list ap);

#endif
