/* test_pushreport.c: the refs a push's hooks accepted and git did not update. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/proto/pushreport.h"
#include "sandboxd/common/banned.h"

#define A "1111111111111111111111111111111111111111"
#define B "2222222222222222222222222222222222222222"
#define Z "0000000000000000000000000000000000000000"

/* The failed refs of report, joined with ',' (old and new checked against each line). */
static const char *failed(const char *report)
{
	static char text[4096], out[4096];
	struct push_ref r[8];
	size_t o = 0;
	int n;

	snprintf(text, sizeof(text), "%s", report);
	n = push_report_failed(text, strlen(text), r, 8);
	out[0] = 0;
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s:%.1s%.1s", i ? "," : "",
				      r[i].ref, r[i].old, r[i].new_);
	return out;
}

static void test_outcomes(void **state)
{
	(void)state;
	assert_string_equal(failed(""), "");
	/* accepted and updated: nothing failed */
	assert_string_equal(failed("accepted " A " " B " refs/heads/main\n"
				   "updated " A " " B " refs/heads/main\n"), "");
	/* accepted, never updated (post-receive did not run: nothing landed) */
	assert_string_equal(failed("accepted " A " " B " refs/heads/main\n"
				   "accepted " Z " " A " refs/heads/new\n"),
			    "refs/heads/main:12,refs/heads/new:01");
	/* one of three failed: the others struck off, the push's order kept */
	assert_string_equal(failed("accepted " A " " B " refs/heads/a\n"
				   "accepted " A " " B " refs/heads/b\n"
				   "accepted " B " " Z " refs/heads/c\n"
				   "updated " A " " B " refs/heads/a\n"
				   "updated " B " " Z " refs/heads/c\n"), "refs/heads/b:12");
	/* a refused push reports nothing */
	assert_string_equal(failed("updated " A " " B " refs/heads/x\n"), "");
}

static void test_bad_lines(void **state)
{
	(void)state;
	/* lines of any other shape are ignored; a last line cut short too */
	assert_string_equal(failed("accepted " A " " B "\n"
				   "accepted " A " " B " refs/heads/two words\n"
				   "accepted " A "x " B " refs/heads/x\n"
				   "accepted " A " " "2222" " refs/heads/y\n"
				   "accepted " A " " B " \n"
				   "Accepted " A " " B " refs/heads/z\n"
				   "accepted  " A " " B " refs/heads/w\n"
				   "accepted " "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" " " B " refs/heads/v\n"
				   "\n"
				   "accepted " A " " B " refs/heads/cut"), "");
	/* a bad "updated" line strikes nothing off */
	assert_string_equal(failed("accepted " A " " B " refs/heads/m\n"
				   "updated " A " " B "refs/heads/m\n"), "refs/heads/m:12");
}

static void test_max(void **state)
{
	char text[2048] = "";
	struct push_ref r[2];
	size_t o = 0;

	(void)state;
	for (int i = 0; i < 5; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "accepted " A " " B " refs/heads/%d\n", i);
	/* at most max refs; the rest are not reported */
	assert_int_equal(push_report_failed(text, o, r, 2), 2);
	assert_string_equal(r[0].ref, "refs/heads/0");
	assert_string_equal(r[1].ref, "refs/heads/1");
}

static void test_nul(void **state)
{
	char text[] = "accepted " A " " B " refs/heads/a\0b\naccepted " A " " B " refs/heads/c\n";
	struct push_ref r[2];

	(void)state;
	/* a NUL would cut the ref short: the line is refused, the next one read */
	assert_int_equal(push_report_failed(text, sizeof(text) - 1, r, 2), 1);
	assert_string_equal(r[0].ref, "refs/heads/c");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_max),
		cmocka_unit_test(test_nul),
	};

	return cmocka_run_group_tests_name("pushreport", tests, NULL, NULL);
}
