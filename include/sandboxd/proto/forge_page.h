/* forge_page.h: pagination of the forge's lists as GitHub's REST API does it: query
 * per_page (1..100, default 30) and page (from 1), and the Link header that names the
 * first, prev, next and last pages. Pure: no I/O, nothing allocated but into out. */
#ifndef SANDBOXD_FORGE_PAGE_H
#define SANDBOXD_FORGE_PAGE_H
#include <stddef.h>
#include <stdint.h>

#define FORGE_PER_PAGE_DEFAULT 30
#define FORGE_PER_PAGE_MAX 100
/* Pages past this are refused as GitHub's are not: an offset must stay a small number. */
#define FORGE_PAGE_MAX 100000

struct forge_page {
	int64_t per_page;   /* 1..FORGE_PER_PAGE_MAX */
	int64_t page;       /* 1..FORGE_PAGE_MAX */
};

/* per_page and page from the query string (NULL or "" for none), as GitHub reads them: a
 * value that is not a positive decimal number is the default (30, 1), a per_page over 100
 * is 100, a page over FORGE_PAGE_MAX is FORGE_PAGE_MAX (an empty page). Never fails. */
void forge_page_parse(const char *query, struct forge_page *out);

/* The offset of the page's first row. */
int64_t forge_page_offset(const struct forge_page *p);

/* The Link header's value for a list of total rows at base (an absolute URL without a
 * query: public URL and path): `<base?per_page=N&page=M>; rel="next"`, then "last", and
 * for a page after the first "first" and "prev", comma-separated, as GitHub writes them.
 * Writes "" when everything fits on page 1 and p is page 1 (GitHub sends no Link then).
 * Returns 0, or ERR_TOOBIG when out (n bytes) cannot hold it (out is then ""). */
int forge_page_link(const struct forge_page *p, int64_t total, const char *base, char *out,
		    size_t n) __attribute__((warn_unused_result));
/* The same for a filtered list: keep (NULL or "" for none), the filter's own query pairs
 * ("state=closed", already encoded), goes first in every link, so that each page is of
 * the same list. */
int forge_page_link_keep(const struct forge_page *p, int64_t total, const char *base,
			 const char *keep, char *out, size_t n) __attribute__((warn_unused_result));

#endif
