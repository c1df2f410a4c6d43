/* test_path.c: lexical normalisation of sandbox file paths, against known cases and bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/common/err.h"
#include "sandboxd/lib/path.h"
#include "sandboxd/lib/pool.h"
#include "sandboxd/common/banned.h"

static void norm(const char *in, const char *want)
{
	struct pool p;
	struct err e = { .msg = "" };
	char *got;

	pool_init(&p, 1 << 20);
	got = path_normalize(&p, in, &e);
	if (!got)
		fail_msg("'%s' refused: %s", in, e.msg);
	if (strcmp(got, want) != 0)
		fail_msg("'%s' gave '%s', want '%s'", in, got, want);
	pool_release(&p);
}

static void refused(const char *in, size_t pool_max, int code)
{
	struct pool p;
	struct err e = { .msg = "" };

	pool_init(&p, pool_max);
	assert_null(path_normalize(&p, in, &e));
	assert_true(e.msg[0] != 0);
	if (code == ERR_INVALID)
		assert_non_null(strstr(e.msg, "'path'"));
	else
		assert_non_null(strstr(e.msg, "out of memory"));
	pool_release(&p);
}

static void test_relative(void **state)
{
	norm("a.txt", "/workspace/repo/a.txt");
	norm("src/main.c", "/workspace/repo/src/main.c");
	norm("./a", "/workspace/repo/a");
	norm("a/", "/workspace/repo/a");
	norm(".", "/workspace/repo");
	norm("..", "/workspace");
	norm("../other/x", "/workspace/other/x");
}

static void test_absolute(void **state)
{
	norm("/", "/");
	norm("/etc/hosts", "/etc/hosts");
	norm("//etc///hosts//", "/etc/hosts");
	norm("/a/./b/.", "/a/b");
	norm("/a/b/../c", "/a/c");
	norm("/a/b/../../..", "/");
	norm("/..", "/");
	norm("/../../etc", "/etc");
	norm("/./", "/");
}

/* Only whole components are "." or "..": dots inside names are names. */
static void test_dot_names(void **state)
{
	norm("/a/...", "/a/...");
	norm("/a/..b", "/a/..b");
	norm("/a/b..", "/a/b..");
	norm("/a/.hidden", "/a/.hidden");
	norm(".git/config", "/workspace/repo/.git/config");
}

static void test_bounds(void **state)
{
	char in[PATH_IN_MAX + 2], want[PATH_OUT_MAX + 1];

	refused("", 1 << 20, ERR_INVALID);
	/* Components of 200 bytes (under the most one may have), the last not a '/'. */
	memset(in, 'a', sizeof(in));
	for (size_t i = 200; i < sizeof(in); i += 201)
		in[i] = '/';
	in[PATH_IN_MAX + 1] = 0;
	refused(in, 1 << 20, ERR_INVALID);        /* one byte too long */
	in[PATH_IN_MAX] = 0;                      /* the longest relative path */
	memcpy(want, PATH_BASE "/", sizeof(PATH_BASE));
	memcpy(want + sizeof(PATH_BASE), in, PATH_IN_MAX + 1);
	assert_int_equal(strlen(want), PATH_OUT_MAX);
	norm(in, want);
	refused("a", 16, ERR_NOMEM);              /* a pool too small for the copy */
	/* One component of 256 bytes, relative or absolute. */
	memset(in, 'b', PATH_COMPONENT_MAX + 1);
	in[PATH_COMPONENT_MAX + 1] = 0;
	refused(in, 1 << 20, ERR_INVALID);
	memcpy(in, "/tmp/", 5);
	memset(in + 5, 'b', PATH_COMPONENT_MAX);
	in[5 + PATH_COMPONENT_MAX] = 0;
	norm(in, in);                              /* 255 is fine */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relative),
		cmocka_unit_test(test_absolute),
		cmocka_unit_test(test_dot_names),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests_name("path", tests, NULL, NULL);
}
