/* test_secrets.c: the sandbox secrets' key file and sealing: a value opens only for its own
 * repository and name under the key it was sealed with, and a changed byte is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "sandboxd/lib/pool.h"
#include "sandboxd/sandbox/secrets.h"
#include "sandboxd/common/banned.h"

static char dir[] = "/tmp/test_secrets.XXXXXX";

static const char *key_file(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void test_key_file(void **state)
{
	const char *hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	char text[80];
	struct err e = { .msg = "" };

	snprintf(text, sizeof(text), "%s\n", hex);
	assert_int_equal(secrets_key_file_load(key_file("open", text, 0644), &e), ERR_INVALID);
	assert_non_null(strstr(e.msg, "must be readable by its owner only (mode 0644, want 0600)"));
	assert_int_equal(secrets_key_file_load(key_file("short", "abcd\n", 0600), &e), ERR_INVALID);
	assert_non_null(strstr(e.msg, "must hold 64 hex digits (openssl rand -hex 32)"));
	text[3] = 'x';
	assert_int_equal(secrets_key_file_load(key_file("nothex", text, 0600), &e), ERR_INVALID);
	assert_false(secrets_configured());
	snprintf(text, sizeof(text), "%s\n", hex);
	assert_int_equal(secrets_key_file_load(key_file("good", text, 0600), &e), 0);
	assert_true(secrets_configured());
}

static void test_seal_open(void **state)
{
	struct pool pool, *p = &pool;
	struct err e = { .msg = "" };
	char *sealed, *back;

	pool_init(p, 1 << 20);
	assert_int_equal(secrets_seal(p, "7", "NPM_TOKEN", "npm_abcdefgh", 12, &sealed, &e), 0);
	assert_int_equal(strlen(sealed), 2 * (1 + 12 + 16 + 12));
	assert_null(strstr(sealed, "npm_"));
	assert_int_equal(secrets_open(p, "7", "NPM_TOKEN", sealed, &back, &e), 0);
	assert_string_equal(back, "npm_abcdefgh");
	/* Bound to its row: another repository or name does not open it. */
	assert_int_equal(secrets_open(p, "8", "NPM_TOKEN", sealed, &back, &e), ERR_FAIL);
	assert_string_equal(e.msg, "secret 'NPM_TOKEN' does not open with this key");
	assert_int_equal(secrets_open(p, "7", "OTHER", sealed, &back, &e), ERR_FAIL);
	/* A changed byte of the ciphertext, of the tag, a cut value: refused. */
	for (size_t at = 2; at < strlen(sealed); at += 23) {
		char *t = pool_strdup(p, sealed);
		t[at] = t[at] == '0' ? '1' : '0';
		assert_int_equal(secrets_open(p, "7", "NPM_TOKEN", t, &back, &e), ERR_FAIL);
	}
	sealed[strlen(sealed) - 2] = 0;
	assert_int_equal(secrets_open(p, "7", "NPM_TOKEN", sealed, &back, &e), ERR_FAIL);
	assert_int_equal(secrets_open(p, "7", "NPM_TOKEN", "zz", &back, &e), ERR_FAIL);
	assert_string_equal(e.msg, "secret 'NPM_TOKEN' is not a sealed value");
	pool_release(p);
}

static void test_names(void **state)
{
	assert_true(secrets_name_valid("NPM_TOKEN"));
	assert_true(secrets_name_valid("_x1"));
	assert_false(secrets_name_valid("1X"));
	assert_false(secrets_name_valid("A-B"));
	assert_false(secrets_name_valid(""));
	assert_false(secrets_name_valid("A=B"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_seal_open),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("secrets", tests, setup, teardown);
}
