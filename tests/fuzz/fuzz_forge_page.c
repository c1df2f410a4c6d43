/* fuzz_forge_page.c: forge_page_parse (the query string of every forge list) and
 * forge_page_link.
 *
 * Input: a byte for the total (its value times 7) and one for the Link buffer's size, then
 * the query string (a C string). Invariants: per_page in [1, 100] and page in [1,
 * FORGE_PAGE_MAX] whatever the query; a query without "per_page=" or "page=" gives the
 * defaults; the Link header fits a buffer of 1024 bytes and is "" exactly when page 1 holds
 * everything; in a small buffer it is either whole (the same text) or ERR_TOOBIG and "". */
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/forge_page.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct forge_page p;
	char full[1024], small[256];
	int64_t total;
	size_t n;
	char *q;
	int rc;

	if (size < 2)
		return 0;
	total = (int64_t)data[0] * 7;
	n = data[1] % sizeof(small) + 1;
	q = fuzz_cstr(data + 2, size - 2);
	forge_page_parse(q, &p);
	FUZZ_CHECK(p.per_page >= 1 && p.per_page <= FORGE_PER_PAGE_MAX);
	FUZZ_CHECK(p.page >= 1 && p.page <= FORGE_PAGE_MAX);
	if (!strstr(q, "page="))
		FUZZ_CHECK(p.per_page == FORGE_PER_PAGE_DEFAULT && p.page == 1);
	FUZZ_CHECK(forge_page_offset(&p) == (p.page - 1) * p.per_page);
	FUZZ_CHECK(forge_page_link(&p, total, "https://h/api/v3/user/repos", full,
				   sizeof(full)) == 0);
	FUZZ_CHECK((full[0] == 0) == (p.page == 1 && total <= p.per_page));
	rc = forge_page_link(&p, total, "https://h/api/v3/user/repos", small, n);
	FUZZ_CHECK(rc == 0 ? strcmp(small, full) == 0 : rc == ERR_TOOBIG && small[0] == 0);
	FUZZ_CHECK(rc != 0 || strlen(full) < n);
	free(q);
	return 0;
}
