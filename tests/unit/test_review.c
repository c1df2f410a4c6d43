/* test_review.c: the pure parts of the review routes: the namespace query, base...head,
 * DELETE's ref names, the comparison's status, commit ids. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/git/review.h"
#include "sandboxd/common/banned.h"

static void test_namespace(void **state)
{
	static const struct {
		const char *query;
		int ephemeral;
	} good[] = {
		{ "", 0 }, { "namespace=", 0 }, { "namespace", 0 }, { "namespace=ephemeral", 1 },
		{ "a=1&namespace=ephemeral&b=2", 1 }, { "namespaces=x", 0 }, { "xnamespace=x", 0 },
		{ "per_page=5", 0 },
	};
	static const char *const bad[] = {
		"namespace=Ephemeral", "namespace=ephemeral2", "namespace=normal",
		"namespace=x&namespace=ephemeral", "namespace=ephemeral&namespace=ephemeral",
		"namespace=ephemera", "namespace=ephemeral;",
	};
	struct err e = { .msg = "" };
	int eph;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		eph = -1;
		if (review_namespace(good[i].query, &eph, &e))
			fail_msg("'%s' refused: %s", good[i].query, e.msg);
		assert_int_equal(eph, good[i].ephemeral);
	}
	assert_int_equal(review_namespace(NULL, &eph, &e), 0);
	assert_int_equal(eph, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.status = 0;
		if (review_namespace(bad[i], &eph, &e) != ERR_ANSWER)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(e.status, 422);
		assert_int_equal(eph, strstr(bad[i], "namespace=ephemeral&") ? 1 : 0);
	}
	assert_int_equal(review_namespace("namespace=main", &eph, &e), ERR_ANSWER);
	assert_string_equal(e.msg, "query 'namespace' must be absent or 'ephemeral'");
	assert_int_equal(review_namespace("namespace=&namespace=", &eph, &e), ERR_ANSWER);
	assert_string_equal(e.msg, "query 'namespace' must be given once");
}

static void test_split_range(void **state)
{
	char base[16], head[16];
	struct err e = { .msg = "" };

	assert_int_equal(review_split_range("main...feature/x", base, sizeof(base), head,
					    sizeof(head), &e), 0);
	assert_string_equal(base, "main");
	assert_string_equal(head, "feature/x");
	/* the first "..." splits: the rest is the head's (which git then refuses) */
	assert_int_equal(review_split_range("a/b....c", base, sizeof(base), head, sizeof(head), &e),
			 0);
	assert_string_equal(base, "a/b");
	assert_string_equal(head, ".c");
	static const char *const bad[] = { "main", "main..x", "...x", "main...", "...",
					   "0123456789abcdef...x", "x...0123456789abcdef" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.status = 0;
		if (review_split_range(bad[i], base, sizeof(base), head, sizeof(head), &e) !=
		    ERR_ANSWER)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(e.status, 422);
		assert_string_equal(e.msg, "compare takes '{base}...{head}'");
	}
}

static void test_full_ref(void **state)
{
	char out[REVIEW_REF_MAX];
	struct err e = { .msg = "" };

	assert_int_equal(review_full_ref("heads/feature/x", 0, out, sizeof(out), &e), 0);
	assert_string_equal(out, "refs/heads/feature/x");
	assert_int_equal(review_full_ref("tags/v1", 0, out, sizeof(out), &e), 0);
	assert_string_equal(out, "refs/tags/v1");
	assert_int_equal(review_full_ref("heads/s1", 1, out, sizeof(out), &e), 0);
	assert_string_equal(out, "refs/namespaces/ephemeral/refs/heads/s1");

	assert_int_equal(review_full_ref("feature", 0, out, sizeof(out), &e), ERR_ANSWER);
	assert_int_equal(e.status, 422);
	assert_string_equal(e.msg, "ref must start with 'heads/' or 'tags/'");
	assert_int_equal(review_full_ref("refs/heads/x", 0, out, sizeof(out), &e), ERR_ANSWER);
	assert_string_equal(e.msg, "ref must start with 'heads/' or 'tags/'");
	assert_int_equal(review_full_ref("namespaces/ephemeral/refs/heads/x", 0, out, sizeof(out),
					 &e), ERR_ANSWER);
	static const char *const invalid[] = { "heads/", "heads/a..b", "heads/a.lock", "heads/a b",
					       "heads/a~1", "heads/x/", "heads//x", "tags/@{1}" };
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		if (review_full_ref(invalid[i], 0, out, sizeof(out), &e) != ERR_ANSWER)
			fail_msg("'%s' accepted", invalid[i]);
		char want[128];
		snprintf(want, sizeof(want), "'%s' is not a valid ref name", invalid[i]);
		assert_string_equal(e.msg, want);
	}
	/* too long for the buffer: refused, never cut */
	assert_int_equal(review_full_ref("heads/abcdefgh", 0, out, 15, &e), ERR_ANSWER);
}

static void test_status(void **state)
{
	assert_string_equal(review_status(0, 0), "identical");
	assert_string_equal(review_status(3, 0), "ahead");
	assert_string_equal(review_status(0, 1), "behind");
	assert_string_equal(review_status(2, 5), "diverged");
}

static void test_is_hex(void **state)
{
	assert_true(review_is_hex("abcdef0"));
	assert_true(review_is_hex("0123456789abcdef0123456789ABCDEF01234567"));
	assert_false(review_is_hex("abcdef"));
	assert_false(review_is_hex("0123456789abcdef0123456789abcdef012345678"));
	assert_false(review_is_hex("abcdefg"));
	assert_false(review_is_hex("main"));
	assert_false(review_is_hex(""));
}

int main(void)
{
	git_libgit2_init();  /* ref name checks are libgit2's */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_namespace),
		cmocka_unit_test(test_split_range),
		cmocka_unit_test(test_full_ref),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_is_hex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
