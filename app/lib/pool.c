/* pool.c: a chunked arena; chunks grow geometrically so a request that allocates a lot
 * does not walk a long list, and the first chunk is kept for the next request. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/lib/pool.h"
#include "sandboxd/common/banned.h"

#define POOL_FIRST 16384
#define POOL_ALIGN 16

struct pool_chunk {
	struct pool_chunk *next;
	size_t size;   /* bytes in mem */
	size_t off;    /* bytes used */
	_Alignas(POOL_ALIGN) unsigned char mem[];
};

void pool_init(struct pool *p, size_t max)
{
	p->head = NULL;
	p->used = 0;
	p->max = max;
}

void pool_reset(struct pool *p)
{
	struct pool_chunk *c = p->head, *next;

	if (!c)
		return;
	/* Keep the oldest (last) chunk: it is the small one every request needs. */
	while (c->next) {
		next = c->next;
		free(c);
		c = next;
	}
	/* Unless the first request of the worker was a big one (a file): a chunk that size
	 * would stay resident, and be cleared, for the worker's whole life. */
	if (c->size > POOL_FIRST) {
		free(c);
		p->head = NULL;
		p->used = 0;
		return;
	}
	memset(c->mem, 0, c->off);  /* what was used; the rest is still zero */
	c->off = 0;
	p->head = c;
	p->used = 0;
}

void pool_release(struct pool *p)
{
	struct pool_chunk *c = p->head, *next;

	while (c) {
		next = c->next;
		free(c);
		c = next;
	}
	p->head = NULL;
	p->used = 0;
}

void *pool_alloc(struct pool *p, size_t n)
{
	struct pool_chunk *c = p->head;
	size_t need, size;
	void *out;

	if (n == 0)
		n = 1;
	if (n > SIZE_MAX - POOL_ALIGN)
		return NULL;
	need = (n + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
	if (need > p->max - p->used)
		return NULL;
	if (!c || c->size - c->off < need) {
		size = c ? c->size * 2 : POOL_FIRST;
		while (size < need) {
			if (size > SIZE_MAX / 2)
				return NULL;
			size *= 2;
		}
		if (size > SIZE_MAX - sizeof(*c))
			return NULL;
		c = calloc(1, sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->next = p->head;
		p->head = c;
	}
	out = c->mem + c->off;
	c->off += need;
	p->used += need;
	return out;
}

char *pool_strndup(struct pool *p, const char *s, size_t n)
{
	char *out = pool_alloc(p, n + 1);

	if (out)
		memcpy(out, s, n);
	return out;
}

char *pool_strdup(struct pool *p, const char *s)
{
	return pool_strndup(p, s, strlen(s));
}

char *pool_vprintf(struct pool *p, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	char *out;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return NULL;
	out = pool_alloc(p, (size_t)n + 1);
	if (out)
		vsnprintf(out, (size_t)n + 1, fmt, ap);
	return out;
}

char *pool_printf(struct pool *p, const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	out = pool_vprintf(p, fmt, ap);
	va_end(ap);
	return out;
}
