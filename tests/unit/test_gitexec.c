/* test_gitexec.c: where git's http-backend program is (gitenv_exec_path), against the real
 * git of this machine, and the answer when the git asked is not one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "sandboxd/http/gitenv.h"
#include "sandboxd/common/banned.h"

static void test_real_git_has_its_backend(void **state)
{
	const char *dir = gitenv_exec_path("/usr/bin/git");
	char prog[600];

	assert_true(dir[0] == '/');
	snprintf(prog, sizeof(prog), "%s/git-http-backend", dir);
	assert_int_equal(access(prog, X_OK), 0);
	/* Asked once: the same answer, kept. */
	assert_ptr_equal(gitenv_exec_path("/usr/bin/git"), dir);
}

static void test_not_git_is_empty(void **state)
{
	/* A program that exits 1, one that prints no absolute path, and none at all: "" (the
	 * requests then run `git http-backend`). */
	assert_string_equal(gitenv_exec_path("/bin/false"), "");
	assert_string_equal(gitenv_exec_path("/bin/true"), "");
	assert_string_equal(gitenv_exec_path("/nonexistent/git"), "");
	assert_true(gitenv_exec_path("/usr/bin/git")[0] == '/');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_git_has_its_backend),
		cmocka_unit_test(test_not_git_is_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
