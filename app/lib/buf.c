/* buf.c: bounded growable buffers. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void buf_release(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void buf_clear(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}

static int buf_grow(struct buf *b, size_t n)
{
	size_t want, cap;
	char *p;

	if (n > b->max - b->len)
		return ERR_TOOBIG;
	want = b->len + n + 1;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	if (cap - 1 > b->max)
		cap = b->max + 1;
	p = realloc(b->data, cap);
	if (!p)
		return ERR_NOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t n)
{
	int rc = buf_grow(b, n);

	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = 0;
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ERR_FAIL;
	if ((rc = buf_grow(b, (size_t)n)))
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int buf_reserve(struct buf *b, size_t n)
{
	char *p;

	if (n > b->max - b->len)
		return ERR_TOOBIG;
	if (b->len + n + 1 <= b->cap)
		return 0;
	p = realloc(b->data, b->len + n + 1);
	if (!p)
		return ERR_NOMEM;
	if (!b->data)
		p[0] = 0;
	b->data = p;
	b->cap = b->len + n + 1;
	return 0;
}

void buf_advance(struct buf *b, size_t n)
{
	b->len += n;
	b->data[b->len] = 0;
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p = b->data;

	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}

const char *str_or_null(const char *s)
{
	return s && *s ? s : NULL;
}

int str_copy(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;
	int cut = l >= n;

	if (cut)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = 0;
	return cut ? ERR_TOOBIG : 0;
}
