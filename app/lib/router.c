/* router.c: a linear table walk; the table is small and the walk allocates nothing. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/common/err.h"
#include "sandboxd/lib/router.h"
#include "sandboxd/common/banned.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int router_decode(const char *s, size_t n, char *out, size_t outsz, int slash_ok)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= n)
				return ERR_INVALID;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return ERR_INVALID;
			c = (char)(hi << 4 | lo);
			if ((c == '/' && !slash_ok) || c == 0)
				return ERR_INVALID;
			i += 2;
		}
		if (o + 1 >= outsz)
			return ERR_INVALID;
		out[o++] = c;
	}
	out[o] = 0;
	return 0;
}

int router_decode_segment(const char *s, size_t n, char *out, size_t outsz)
{
	return router_decode(s, n, out, outsz, 0);
}

/* Matches path against pattern; fills params when m is not NULL. */
static int match_path(const char *pattern, const char *path, struct route_match *m)
{
	const char *p = pattern, *s = path;
	char scratch[ROUTER_PARAM_MAX];
	int np = 0;

	while (*p) {
		if (*p == '{') {
			const char *pe = strchr(p, '}');
			/* {name+}, last in its pattern, spans the rest of the path ('/' included:
			 * ref names); any other parameter is one segment. */
			int rest = pe && pe > p + 1 && pe[-1] == '+';
			size_t n = rest ? strlen(s) : strcspn(s, "/");
			if (!pe || n == 0 || np >= ROUTER_MAX_PARAMS || (rest && pe[1]))
				return 0;
			if (router_decode_segment(s, n, m ? m->params[np] : scratch, ROUTER_PARAM_MAX))
				return 0;
			np++;
			p = pe + 1;
			s += n;
		} else {
			if (*p != *s)
				return 0;
			p++;
			s++;
		}
	}
	if (*s)
		return 0;
	if (m)
		m->nparams = np;
	return 1;
}

/* Whether route t takes path; fills m when it is not NULL. */
static int takes(const struct route *t, const char *path, struct route_match *m)
{
	return t->match ? t->match(path, m) : match_path(t->pattern, path, m);
}

int router_match(const struct route *table, size_t n, const char *method, const char *path,
		 struct route_match *m)
{
	size_t alen = 0;
	int path_found = 0;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		if (!takes(&table[i], path, NULL))
			continue;
		if ((strcmp(table[i].method, "*") == 0 || strcmp(table[i].method, method) == 0) &&
		    takes(&table[i], path, m)) {
			m->route = &table[i];
			return 0;
		}
		path_found = 1;
		/* Collect the methods this path answers, without duplicates. */
		if (!strstr(m->allow, table[i].method)) {
			int w = snprintf(m->allow + alen, sizeof(m->allow) - alen, "%s%s",
					 alen ? ", " : "", table[i].method);
			if (w > 0 && (size_t)w < sizeof(m->allow) - alen)
				alen += (size_t)w;
			else
				m->allow[alen] = 0; /* whole method names only */
		}
	}
	return path_found ? ERR_METHOD : ERR_NOTFOUND;
}
