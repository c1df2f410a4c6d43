/* test_gitcred.c: the sandbox token in a clone's git configuration. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/proto/gitcred.h"
#include "sandboxd/common/banned.h"

static void header(char *out, size_t n, const char *user, const char *tok)
{
	char pair[256], b64[400];

	snprintf(pair, sizeof(pair), "%s:%s", user, tok);
	base64_encode((const unsigned char *)pair, strlen(pair), b64);
	snprintf(out, n, "[http \"http://sandboxd.internal:8080/\"]\n\textraHeader = "
		 "Authorization: Basic %s\n", b64);
}

static void test_found(void **state)
{
	char tok[TOKEN_LEN + 1], cfg[1024], got[TOKEN_LEN + 1];

	assert_int_equal(token_mint(TOKEN_SANDBOX, tok), 0);
	header(cfg, sizeof(cfg), "x-access-token", tok);
	assert_int_equal(gitcred_token(cfg, strlen(cfg), got), 1);
	assert_string_equal(got, tok);
	/* git's names are case-insensitive; any user name. */
	header(cfg, sizeof(cfg), "t", tok);
	cfg[45] = 'a';  /* the 'A' of Authorization */
	assert_int_equal(gitcred_token(cfg, strlen(cfg), got), 1);
	assert_string_equal(got, tok);
}

static void test_not_found(void **state)
{
	char tok[TOKEN_LEN + 1], cfg[1024], got[TOKEN_LEN + 1];

	assert_int_equal(token_mint(TOKEN_PERSONAL, tok), 0);
	header(cfg, sizeof(cfg), "x-access-token", tok);
	assert_int_equal(gitcred_token(cfg, strlen(cfg), got), 0);  /* not a sandbox token */
	assert_string_equal(got, "");
	assert_int_equal(token_mint(TOKEN_SANDBOX, tok), 0);
	tok[20] = tok[20] == 'a' ? 'b' : 'a';                        /* checksum broken */
	header(cfg, sizeof(cfg), "x-access-token", tok);
	assert_int_equal(gitcred_token(cfg, strlen(cfg), got), 0);
	assert_int_equal(gitcred_token("Authorization: Basic", 20, got), 0);
	assert_int_equal(gitcred_token("Authorization: Basic !!!!", 25, got), 0);
	assert_int_equal(gitcred_token("", 0, got), 0);
	/* Cut short: the text ends inside the base64. */
	assert_int_equal(token_mint(TOKEN_SANDBOX, tok), 0);
	header(cfg, sizeof(cfg), "x-access-token", tok);
	assert_int_equal(gitcred_token(cfg, strlen(cfg) - 10, got), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_not_found),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
