/* err.c: the error type's helpers. */
#include <stdarg.h>
#include <stdio.h>
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

static const struct {
	int code, status;
} statuses[] = {
	{ ERR_INVALID, 400 }, { ERR_NOTDIR, 400 }, { ERR_AUTH, 401 }, { ERR_DENIED, 403 },
	{ ERR_NOTFOUND, 404 }, { ERR_METHOD, 405 }, { ERR_EXISTS, 409 }, { ERR_TOOBIG, 413 }, { ERR_LIMIT, 429 },
	{ ERR_CANCELLED, 499 }, { ERR_DB, 503 }, { ERR_DOCKER, 503 }, { ERR_NOSTART, 503 },
};

int err_status(int code)
{
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (statuses[i].code == code)
			return statuses[i].status;
	return 500;
}

static int vset(struct err *e, int code, int status, const char *key, const char *fmt,
		va_list ap)
{
	if (e) {
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		e->status = status;
		e->key = key;
	}
	return code;
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(e, code, 0, NULL, fmt, ap);
	va_end(ap);
	return code;
}

/* The code of a status: the first in the table (400 is ERR_INVALID, 503 is ERR_NOSTART's
 * kind: a message the client sees). */
static int code_of(int status)
{
	if (status == 503)
		return ERR_NOSTART;
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (statuses[i].status == status)
			return statuses[i].code;
	return ERR_ANSWER;
}

int err_http(struct err *e, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(e, code_of(status), status, NULL, fmt, ap);
	va_end(ap);
	return code_of(status);
}

int err_box(struct err *e, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(e, code_of(status), status, "error", fmt, ap);
	va_end(ap);
	return code_of(status);
}

int err_boxed(struct err *e, int status)
{
	if (e) {
		e->status = status;
		e->key = "error";
	}
	return code_of(status);
}
