/* err.c: the error type's one helper. */
#include <stdarg.h>
#include <stdio.h>
#include "sandboxd/err.h"
#include "sandboxd/banned.h"

int err_set(struct err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}
