/* test_redact.c: masking this service's credentials in stored text. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "sandboxd/proto/redact.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/common/banned.h"

static void expect(const char *in, const char *want)
{
	char b[4096];
	size_t n = strlen(in);

	assert_true(n < sizeof(b));
	memcpy(b, in, n + 1);
	size_t m = redact_tokens(b, n);
	b[m] = 0;
	if (strcmp(b, want))
		fail_msg("'%s' gave '%s', want '%s'", in, b, want);
}

static void test_every_kind(void **state)
{
	char p[TOKEN_LEN + 1], j[TOKEN_LEN + 1], s[TOKEN_LEN + 1], in[512];

	assert_int_equal(token_mint(TOKEN_PERSONAL, p), 0);
	assert_int_equal(token_mint(TOKEN_JOB, j), 0);
	assert_int_equal(token_mint(TOKEN_SANDBOX, s), 0);
	snprintf(in, sizeof(in), "echo %s %s %s", s, p, j);
	expect(in, "echo *** *** ***");
	/* Glued to other text, in a URL, twice in a row. */
	snprintf(in, sizeof(in), "http://x:%s@h/%s%s.", p, s, s);
	expect(in, "http://x:***@h/******.");
}

static void test_look_alikes_stay(void **state)
{
	char t[TOKEN_LEN + 1], in[256];

	assert_int_equal(token_mint(TOKEN_PERSONAL, t), 0);
	/* One character changed: the checksum no longer holds. */
	memcpy(in, t, TOKEN_LEN + 1);
	in[10] = in[10] == 'A' ? 'B' : 'A';
	expect(in, in);
	/* Cut short. */
	snprintf(in, sizeof(in), "%.45s", t);
	expect(in, in);
	expect("dfy_ djt_ dst_ dst_x", "dfy_ djt_ dst_ dst_x");
	expect("", "");
}

static void test_jwts(void **state)
{
	const char *jwt = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJyZXBvIjoiby9yIn0."
			  "MEUCIQDx3zQ1bcH7l2JkYd8aO2p9Gq4rXh6v1M0yT5nE7wIgS";
	char in[512];

	snprintf(in, sizeof(in), "git clone http://x:%s@h/o/r.git", jwt);
	expect(in, "git clone http://x:***@h/o/r.git");
	/* Not a JWT: no signature, a short one, a payload that is not JSON. */
	expect("eyJhbGciOiJ9.eyJyZXBvIjo.", "eyJhbGciOiJ9.eyJyZXBvIjo.");
	expect("eyJhbGciOiJ9.eyJyZXBvIjo.abc", "eyJhbGciOiJ9.eyJyZXBvIjo.abc");
	expect("eyJhbGciOiJ9.abc.0123456789abcdef0123", "eyJhbGciOiJ9.abc.0123456789abcdef0123");
	expect("eyJ", "eyJ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_look_alikes_stay),
		cmocka_unit_test(test_jwts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
