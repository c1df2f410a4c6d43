/* test_detach.c: detached exec's readers of what a container prints (detach-state.sh) and
 * of the query string. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "sandboxd/proto/detach.h"
#include "sandboxd/lib/query.h"
#include "sandboxd/common/banned.h"

#define MIB ((uint64_t)1 << 20)

static void test_one(void **state)
{
	char text[] = "exec ex_000000000000000000000001\nout 1 3 5\nerr 0 0 7\n"
		      "start 1000 4000\nrc 143 1500\nkilled\n";
	struct detach_state st;

	detach_parse_state(text, &st);
	assert_true(st.first[0] == 8 * MIB && st.total[0] == 3 * 8 * MIB + 5);
	assert_true(st.first[1] == 0 && st.total[1] == 7);
	assert_true(st.ended && st.exit_code == 143 && st.killed);
	assert_int_equal(st.duration_ms, 500);         /* to its end, not to now */
}

static void test_running_and_junk(void **state)
{
	/* Running: the duration is up to the container's clock. Lines out of bounds or of
	 * another shape are ignored; the sandbox's user may write anything there. */
	char text[] = "out 0 0 12\nerr 2 1 0\nrc 256 9\nkilled now\nstart 1000 3500\n"
		      "out 0 0 99999999999\n";
	struct detach_state st;

	detach_parse_state(text, &st);
	assert_true(st.total[0] == 12 && st.total[1] == 0);
	assert_false(st.ended);
	assert_false(st.killed);
	assert_int_equal(st.duration_ms, 2500);
}

static void test_blocks(void **state)
{
	const char *ids[] = { "ex_a", "ex_b", "ex_c" };
	char text[] = "exec ex_b\nout 0 0 3\nstart 10 20\nrc 0 15\n"
		      "exec ex_x\nout 0 0 99\nrc 1 1\n"            /* not asked for */
		      "exec ex_a\nout 0 0 4\nstart 10 30\nkilled\n"
		      "exec ex_b\nrc 9 9\n";                        /* repeated: ignored */
	struct detach_state st[3];
	int found[3];

	detach_parse_states(text, ids, 3, st, found);
	assert_true(found[0] && found[1] && !found[2]);
	assert_true(st[1].ended && st[1].exit_code == 0 && st[1].total[0] == 3);
	assert_int_equal(st[1].duration_ms, 5);
	assert_true(!st[0].ended && st[0].killed && st[0].total[0] == 4);
	assert_int_equal(st[0].duration_ms, 20);
	assert_true(!st[2].ended && st[2].total[0] == 0);
}

static void test_query(void **state)
{
	uint64_t v = 7;

	assert_int_equal(detach_query_offset("stdoutOffset=12&stderrOffset=3", "stderrOffset", &v), 0);
	assert_true(v == 3);
	assert_int_equal(detach_query_offset("x=1", "stdoutOffset", &v), 0);
	assert_true(v == 0);
	assert_int_equal(detach_query_offset("stdoutOffset=-1", "stdoutOffset", &v), -1);
	assert_int_equal(detach_query_offset("stdoutOffset=1e3", "stdoutOffset", &v), -1);
	assert_int_equal(detach_query_offset("stdoutOffset=", "stdoutOffset", &v), -1);
	assert_int_equal(detach_query_offset("stdoutOffset=1234567890123456789", "stdoutOffset", &v), -1);
	assert_int_equal(detach_query_offset("stdoutOffset=999999999999999999", "stdoutOffset", &v), 0);
	assert_true(v == 999999999999999999ull);
	/* query_param itself: first pair of the name, its value as it stands, a bound. */
	char out[8];
	assert_int_equal(query_param("a=1&mode=0755&mode=1", "mode", out, sizeof(out)), 1);
	assert_string_equal(out, "0755");
	assert_int_equal(query_param("modes=1", "mode", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(query_param("mode=12345678", "mode", out, sizeof(out)), -1);
	assert_int_equal(query_param(NULL, "mode", out, sizeof(out)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one),
		cmocka_unit_test(test_running_and_junk),
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_query),
	};

	return cmocka_run_group_tests_name("detach", tests, NULL, NULL);
}
