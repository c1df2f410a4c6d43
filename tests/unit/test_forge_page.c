/* test_forge_page.c: per_page, page and the Link header of the forge's lists. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/forge_page.h"
#include "sandboxd/common/banned.h"

static void parsed(const char *query, int64_t per_page, int64_t page)
{
	struct forge_page p;

	forge_page_parse(query, &p);
	if (p.per_page != per_page || p.page != page)
		fail_msg("'%s': per_page %lld page %lld, wanted %lld %lld", query ? query : "(null)",
			 (long long)p.per_page, (long long)p.page, (long long)per_page,
			 (long long)page);
}

static void test_parse(void **state)
{
	parsed(NULL, 30, 1);
	parsed("", 30, 1);
	parsed("per_page=5", 5, 1);
	parsed("page=3&per_page=10", 10, 3);
	parsed("per_page=100", 100, 1);
	parsed("per_page=101", 100, 1);
	parsed("per_page=99999999999999999999999999", 100, 1);
	parsed("page=99999999999999999999999999", 30, FORGE_PAGE_MAX);
	parsed("per_page=0&page=0", 30, 1);
	parsed("per_page=-1&page=x", 30, 1);
	parsed("per_page=&page=", 30, 1);
	parsed("xper_page=5&apage=2", 30, 1);
	parsed("per_page=5x", 30, 1);
	parsed("per_page=2&per_page=7", 7, 1);
	parsed("namespace=ephemeral&page=2", 30, 2);
}

static void link(int64_t per_page, int64_t page, int64_t total, const char *want)
{
	struct forge_page p = { per_page, page };
	char out[512];

	assert_int_equal(forge_page_link(&p, total, "http://h/api/v3/user/repos", out,
					 sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void test_link(void **state)
{
	link(30, 1, 0, "");
	link(30, 1, 30, "");
	link(2, 1, 5,
	     "<http://h/api/v3/user/repos?per_page=2&page=2>; rel=\"next\", "
	     "<http://h/api/v3/user/repos?per_page=2&page=3>; rel=\"last\"");
	link(2, 2, 5,
	     "<http://h/api/v3/user/repos?per_page=2&page=3>; rel=\"next\", "
	     "<http://h/api/v3/user/repos?per_page=2&page=3>; rel=\"last\", "
	     "<http://h/api/v3/user/repos?per_page=2&page=1>; rel=\"first\", "
	     "<http://h/api/v3/user/repos?per_page=2&page=1>; rel=\"prev\"");
	link(2, 3, 5,
	     "<http://h/api/v3/user/repos?per_page=2&page=1>; rel=\"first\", "
	     "<http://h/api/v3/user/repos?per_page=2&page=2>; rel=\"prev\"");
	/* Past the end: an empty page that still leads back. */
	link(2, 9, 5,
	     "<http://h/api/v3/user/repos?per_page=2&page=1>; rel=\"first\", "
	     "<http://h/api/v3/user/repos?per_page=2&page=3>; rel=\"prev\"");
	struct forge_page p = { 2, 1 };
	char small[16] = "junk", kept[256];
	/* A filtered list's links keep the filter, first. */
	assert_int_equal(forge_page_link_keep(&(struct forge_page){ 1, 2 }, 2, "http://h/s",
					      "state=closed", kept, sizeof(kept)), 0);
	assert_string_equal(kept, "<http://h/s?state=closed&per_page=1&page=1>; rel=\"first\", "
				  "<http://h/s?state=closed&per_page=1&page=1>; rel=\"prev\"");
	assert_int_equal(forge_page_link(&p, 5, "http://h/x", small, sizeof(small)), ERR_TOOBIG);
	assert_string_equal(small, "");
	assert_int_equal(forge_page_offset(&(struct forge_page){ 30, 3 }), 60);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_link),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
