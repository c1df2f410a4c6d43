/* forge_page.c: per_page, page and the Link header of the forge's lists (GitHub's REST
 * API, "Using pagination in the REST API"). */
#include <stdio.h>
#include <string.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/forge_page.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/common/banned.h"

/* The value of name in query as a number in [1, max]: 0 when absent or not a positive
 * decimal number (the caller's default then), max when larger. The last one wins. */
static int64_t param(const char *query, const char *name, int64_t max)
{
	size_t n = strlen(name);
	int64_t v = 0;

	for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		char digits[24];
		const char *end;
		size_t len;
		int64_t x;

		if (strncmp(p, name, n) || p[n] != '=')
			continue;
		end = strchr(p + n + 1, '&');
		len = end ? (size_t)(end - (p + n + 1)) : strlen(p + n + 1);
		if (len == 0)
			continue;
		if (len >= sizeof(digits) || strspn(p + n + 1, "0123456789") < len) {
			/* Too long to be a number we parse: all digits is "very large". */
			v = strspn(p + n + 1, "0123456789") >= len ? max : 0;
			continue;
		}
		memcpy(digits, p + n + 1, len);
		digits[len] = 0;
		if (num_parse(digits, 0, INT64_MAX, &x))
			x = 0;
		v = x > max ? max : x;
	}
	return v;
}

void forge_page_parse(const char *query, struct forge_page *out)
{
	out->per_page = param(query, "per_page", FORGE_PER_PAGE_MAX);
	out->page = param(query, "page", FORGE_PAGE_MAX);
	if (out->per_page <= 0)
		out->per_page = FORGE_PER_PAGE_DEFAULT;
	if (out->page <= 0)
		out->page = 1;
}

int64_t forge_page_offset(const struct forge_page *p)
{
	return (p->page - 1) * p->per_page;
}

/* Appends one `<base?keep&per_page=N&page=M>; rel="rel"` to out at *len. */
static int rel(char *out, size_t n, size_t *len, const char *base, const char *keep,
	       int64_t per_page, int64_t page, const char *name)
{
	int w = snprintf(out + *len, n - *len, "%s<%s?%s%sper_page=%lld&page=%lld>; rel=\"%s\"",
			 *len ? ", " : "", base, keep, keep[0] ? "&" : "", (long long)per_page,
			 (long long)page, name);

	if (w < 0 || (size_t)w >= n - *len)
		return ERR_TOOBIG;
	*len += (size_t)w;
	return 0;
}

int forge_page_link(const struct forge_page *p, int64_t total, const char *base, char *out,
		    size_t n)
{
	return forge_page_link_keep(p, total, base, NULL, out, n);
}

int forge_page_link_keep(const struct forge_page *p, int64_t total, const char *base,
			 const char *keep, char *out, size_t n)
{
	int64_t last = total > 0 ? (total + p->per_page - 1) / p->per_page : 1;
	size_t len = 0;
	int rc = 0;

	if (n == 0)
		return ERR_TOOBIG;
	if (!keep)
		keep = "";
	out[0] = 0;
	if (p->page < last)
		rc = rel(out, n, &len, base, keep, p->per_page, p->page + 1, "next");
	if (!rc && p->page < last)
		rc = rel(out, n, &len, base, keep, p->per_page, last, "last");
	if (!rc && p->page > 1)
		rc = rel(out, n, &len, base, keep, p->per_page, 1, "first");
	if (!rc && p->page > 1)
		rc = rel(out, n, &len, base, keep, p->per_page,
			 p->page - 1 < last ? p->page - 1 : last, "prev");
	if (rc)
		out[0] = 0;
	return rc;
}
