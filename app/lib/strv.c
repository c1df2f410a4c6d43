/* strv.c: bounded argv and environment lists in a request's pool (strv.h). */
#include <stdarg.h>
#include <string.h>
#include "sandboxd/common/err.h"
#include "sandboxd/lib/strv.h"
#include "sandboxd/common/banned.h"

/* Keeps the first error: every later add fails with it (strv.h). */
static int fail(struct strv *s, int code)
{
	if (!s->err)
		s->err = code;
	return s->err;
}

int strv_init(struct strv *s, struct pool *p, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->pool = p;
	s->max = max;
	/* pool_alloc zeroes: v[0] is the terminating NULL. */
	if (max >= ((size_t)-1) / sizeof(*s->v) || !(s->v = pool_alloc(p, (max + 1) * sizeof(*s->v))))
		return fail(s, ERR_NOMEM);
	return 0;
}

/* Appends str, already in the pool. */
static int push(struct strv *s, char *str)
{
	if (!str)
		return fail(s, ERR_NOMEM);
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
	return 0;
}

int strv_add(struct strv *s, const char *str)
{
	if (s->err)
		return s->err;
	if (!str)
		return fail(s, ERR_INVALID);
	if (s->n >= s->max)
		return fail(s, ERR_TOOBIG);
	return push(s, pool_strdup(s->pool, str));
}

int strv_addf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	char *str;

	if (s->err)
		return s->err;
	if (s->n >= s->max)
		return fail(s, ERR_TOOBIG);
	va_start(ap, fmt);
	str = pool_vprintf(s->pool, fmt, ap);
	va_end(ap);
	return push(s, str);
}

int strv_setenv(struct strv *s, const char *name, const char *value)
{
	if (s->err)
		return s->err;
	if (!name || !name[0] || strchr(name, '='))
		return fail(s, ERR_INVALID);
	if (!value)
		return 0;
	return strv_addf(s, "%s=%s", name, value);
}
