/* test_repo.c: repository names and branch names (libgit2's ref rules plus git's branch
 * rules), and where a ref points in a real bare repository. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <git2.h>
#include "sandboxd/forge/auth.h"
#include "sandboxd/common/err.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/common/banned.h"

static const char *msg_name =
	"field 'name' must be 1 to 100 letters, digits, '.', '-' or '_', not starting with '.' or "
	"'-', without '..' and not ending in '.git'";

static void name_ok(const char *name)
{
	struct err e = { .msg = "" };

	if (repo_valid_name(name, "name", &e))
		fail_msg("name '%s' refused: %s", name, e.msg);
}

static void name_bad(const char *name)
{
	struct err e = { .msg = "" };

	if (repo_valid_name(name, "name", &e) != ERR_INVALID)
		fail_msg("name '%s' accepted", name);
	assert_string_equal(e.msg, msg_name);
}

static void branch_ok(const char *branch)
{
	struct err e = { .msg = "" };

	if (repo_valid_branch(branch, "default_branch", &e))
		fail_msg("branch '%s' refused: %s", branch, e.msg);
}

/* s with bytes outside printable ASCII as \xNN, for failure messages. */
static const char *printable(const char *s)
{
	static char out[1024];
	size_t o = 0;

	for (; *s && o + 5 < sizeof(out); s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = 0;
	return out;
}

static void branch_bad(const char *branch)
{
	struct err e = { .msg = "" };

	if (repo_valid_branch(branch, "default_branch", &e) != ERR_INVALID)
		fail_msg("branch '%s' accepted", printable(branch));
	assert_string_equal(e.msg, "field 'default_branch' must be a valid branch name");
}

/* n characters of c after prefix, in one of two static buffers. */
static const char *repeat(const char *prefix, char c, size_t n)
{
	static char buf[2][512];
	static int which;
	char *b = buf[which++ % 2];
	size_t p = strlen(prefix);

	assert_true(p + n < sizeof(buf[0]));
	memcpy(b, prefix, p);
	memset(b + p, c, n);
	b[p + n] = 0;
	return b;
}

static int setup(void **state)
{
	return git_libgit2_init() > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	git_libgit2_shutdown();
	return 0;
}

static void test_name_valid(void **state)
{
	static const char *v[] = {
		"a", "Z", "7", "hello", "hello-world", "hello_world", "hello.world", "_x", "x.",
		"x-", "x_", "git", "xgit", "x.gitx", "x.gi", "x-git", "x.git.y", "v1.0.0",
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		name_ok(v[i]);
}

/* ".." anywhere is refused, not only as the whole name: no path tricks, no confusion. */
static void test_name_double_dot(void **state)
{
	name_bad("x..y");
	name_bad("a..");
	name_bad("..a");
	name_ok("a.b.c");
}

static void test_name_length(void **state)
{
	name_ok(repeat("", 'a', 1));
	name_ok(repeat("", 'a', 100));
	name_bad(repeat("", 'a', 101));
	name_bad(repeat("", 'a', 300));
	name_bad("");
	/* the ".git" rule applies at the bound too */
	char s[128];
	memset(s, 'a', 96);
	memcpy(s + 96, ".git", 5);
	assert_int_equal(strlen(s), 100);
	name_bad(s);
	memcpy(s + 96, ".gi", 4);
	name_ok(s);
}

static void test_name_dots_and_suffix(void **state)
{
	static const char *v[] = {
		".", "..", "...", ".x", ".git", ".hidden", "x.git", "X.GIT", "x.Git", "x.gIT",
		"a.b.git", "-x", "-", "--",
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		name_bad(v[i]);
}

static void test_name_characters(void **state)
{
	static const char *v[] = {
		"a/b", "/a", "a/", "a\\b", "a b", " a", "a ", "a:b", "a@b", "a+b", "a%2Fb", "a~b",
		"a\tb", "a\nb", "caf\xc3\xa9", "\xc3\xa9", "\xff", "a\x7f", "a*", "a?",
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		name_bad(v[i]);
}

static void test_name_message_names_field(void **state)
{
	struct err e = { .msg = "" };

	assert_int_equal(repo_valid_name("x.git", "repo", &e), ERR_INVALID);
	assert_string_equal(e.msg,
			    "field 'repo' must be 1 to 100 letters, digits, '.', '-' or '_', not "
			    "starting with '.' or '-', without '..' and not ending in '.git'");
	assert_int_equal(repo_valid_name("x.git", "repo", NULL), ERR_INVALID);
}

static void test_branch_valid(void **state)
{
	static const char *v[] = {
		"main", "master", "trunk", "feature/x", "feature/x/y", "x/-y", "v1.0", "a.b",
		"a-b", "a_b", "head", "MAIN", "caf\xc3\xa9", "@", "a@b", "a{b}", "#1", "a'b",
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		branch_ok(v[i]);
}

static void test_branch_git_rules(void **state)
{
	/* git-check-ref-format(1) */
	static const char *v[] = {
		"", "a..b", "..", ".", "a.lock", "a/b.lock", "a/", "/a", "a//b", "a@{b", "@{u}",
		"a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", "a\\b", "a.", "a/b.", ".a",
		"x/.y", "a\x01", "a\x1f", "a\tb", "a\nb", "HEAD",
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		branch_bad(v[i]);
}

static void test_branch_length(void **state)
{
	branch_ok(repeat("", 'b', 255));
	branch_bad(repeat("", 'b', 256));
	branch_bad(repeat("", 'b', 500));
}

static void test_branch_leading_hyphen(void **state)
{
	/* `git branch -x` and `git check-ref-format --branch -x` refuse these: a name that
	 * reads as an option is not a branch git accepts */
	branch_bad("-x");
	branch_bad("-");
	branch_bad("--");
	branch_bad("-f");
}

static void test_branch_del_character(void **state)
{
	/* git-check-ref-format(1): no ASCII control characters, "bytes whose values are lower
	 * than \040, or \177 DEL"; git refuses "a\177" (libgit2 1.5 lets DEL through) */
	branch_bad("a\x7f");
	branch_bad("\x7f");
	branch_bad("x/\x7fy");
}

static char dir[] = "/tmp/sandboxd-test-repo.XXXXXX";
static int made;

/* Removes the test's repositories, also after a failed assertion. */
static int rm_dir(void **state)
{
	char rm[160];

	(void)state;
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	return made ? system(rm) : 0;
}

/* repo_ref_is on a bare repository made here: repos/o/r.git with main at one commit. */
static void test_ref_is(void **state)
{
	char path[128], hex[GIT_OID_HEXSZ + 1];
	static const char *zeros = "0000000000000000000000000000000000000000";
	static const char *other = "1111111111111111111111111111111111111111";
	struct repo repo = { .owner = "o", .name = "r" };
	git_repository *g;
	git_signature *sig;
	git_treebuilder *tb;
	git_oid tree, commit;
	git_reference *ref;
	git_tree *t;

	(void)state;
	assert_non_null(mkdtemp(dir));
	made = 1;
	snprintf(path, sizeof(path), "%s/o/r.git", dir);
	assert_int_equal(git_repository_init(&g, path, 1), 0);
	assert_int_equal(git_treebuilder_new(&tb, g, NULL), 0);
	assert_int_equal(git_treebuilder_write(&tree, tb), 0);
	assert_int_equal(git_tree_lookup(&t, g, &tree), 0);
	assert_int_equal(git_signature_now(&sig, "t", "t@t"), 0);
	assert_int_equal(git_commit_create(&commit, g, "refs/heads/main", sig, sig, NULL, "one",
					   t, 0, NULL), 0);
	git_oid_tostr(hex, sizeof(hex), &commit);

	assert_int_equal(repo_ref_is(dir, &repo, "refs/heads/main", hex), 1);
	assert_int_equal(repo_ref_is(dir, &repo, "refs/heads/main", other), 0);
	assert_int_equal(repo_ref_is(dir, &repo, "refs/heads/main", zeros), 0);
	/* absent: a deletion that happened, or an update that did not */
	assert_int_equal(repo_ref_is(dir, &repo, "refs/heads/gone", zeros), 1);
	assert_int_equal(repo_ref_is(dir, &repo, "refs/heads/gone", hex), 0);
	/* the ephemeral namespace's stored names */
	assert_int_equal(git_reference_create(&ref, g, "refs/namespaces/ephemeral/refs/heads/w",
					      &commit, 0, NULL), 0);
	assert_int_equal(repo_ref_is(dir, &repo, "refs/namespaces/ephemeral/refs/heads/w", hex), 1);
	/* no repository: cannot tell, so not landed */
	struct repo missing = { .owner = "o", .name = "nope" };
	assert_int_equal(repo_ref_is(dir, &missing, "refs/heads/main", zeros), 0);

	git_reference_free(ref);
	git_signature_free(sig);
	git_tree_free(t);
	git_treebuilder_free(tb);
	git_repository_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_name_double_dot),
		cmocka_unit_test(test_name_length),
		cmocka_unit_test(test_name_dots_and_suffix),
		cmocka_unit_test(test_name_characters),
		cmocka_unit_test(test_name_message_names_field),
		cmocka_unit_test(test_branch_valid),
		cmocka_unit_test(test_branch_git_rules),
		cmocka_unit_test(test_branch_length),
		cmocka_unit_test(test_branch_leading_hyphen),
		cmocka_unit_test(test_branch_del_character),
		cmocka_unit_test_teardown(test_ref_is, rm_dir),
	};

	return cmocka_run_group_tests_name("repo", tests, setup, teardown);
}
