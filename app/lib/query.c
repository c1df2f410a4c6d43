/* query.c: a request's query string, one parameter at a time (query.h). */
#include <string.h>
#include "sandboxd/lib/query.h"
#include "sandboxd/common/banned.h"

int query_param(const char *query, const char *name, char *out, size_t size)
{
	size_t n = strlen(name);

	if (size)
		out[0] = 0;
	for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		if (strncmp(p, name, n) || p[n] != '=')
			continue;
		const char *v = p + n + 1;
		size_t len = strcspn(v, "&");
		if (len >= size)
			return -1;
		memcpy(out, v, len);
		out[len] = 0;
		return 1;
	}
	return 0;
}

static int unreserved(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

size_t query_percent_encode(const void *in, size_t n, const char *digits, char *out)
{
	const unsigned char *u = in;
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (unreserved(u[i])) {
			out[o++] = (char)u[i];
		} else {
			out[o++] = '%';
			out[o++] = digits[u[i] >> 4];
			out[o++] = digits[u[i] & 15];
		}
	}
	return o;
}
