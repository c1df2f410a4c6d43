/* test_account.c: login names (GitHub's rule). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

static const char *msg_login =
	"field 'login' must be 1 to 39 letters, digits or single hyphens, not starting or ending "
	"with a hyphen";

static void ok(const char *login)
{
	struct err e = { .msg = "" };

	if (account_valid_login(login, "login", &e))
		fail_msg("login '%s' refused: %s", login, e.msg);
}

static void bad(const char *login)
{
	struct err e = { .msg = "" };

	if (account_valid_login(login, "login", &e) != ERR_INVALID)
		fail_msg("login '%s' accepted", login);
	assert_string_equal(e.msg, msg_login);
}

/* A login of n characters: 'a' then alternating digits and letters. */
static const char *login_of(size_t n)
{
	static char buf[64];

	assert_true(n < sizeof(buf));
	for (size_t i = 0; i < n; i++)
		buf[i] = i % 2 ? (char)('0' + i % 10) : (char)('a' + i % 26);
	buf[n] = 0;
	return buf;
}

static void test_valid(void **state)
{
	ok("a");
	ok("A");
	ok("7");
	ok("octocat");
	ok("Octo-Cat");
	ok("a-b-c");
	ok("0-0");
	ok("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLM");   /* 39 */
}

static void test_length(void **state)
{
	ok(login_of(1));
	ok(login_of(38));
	ok(login_of(39));
	bad(login_of(40));
	bad(login_of(63));
	bad("");
}

static void test_hyphens(void **state)
{
	bad("-");
	bad("-a");
	bad("a-");
	bad("a--b");
	bad("a---b");
	bad("--");
	bad("-a-");
}

static void test_characters(void **state)
{
	static const char *v[] = {
		"a_b", "a.b", "a b", " a", "a ", "a/b", "a\\b", "a@b", "a+b", "a:b", "a%b",
		"..", ".", "a\tb", "a\nb", "j\xc3\xb6rg", "\xc3\xa9", "\xff", "a\x7f",
		"\xef\xbc\xa1",   /* FULLWIDTH LATIN CAPITAL LETTER A */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		bad(v[i]);
}

static void test_message_names_field(void **state)
{
	struct err e = { .msg = "" };

	assert_int_equal(account_valid_login("a--b", "collaborator", &e), ERR_INVALID);
	assert_string_equal(e.msg,
			    "field 'collaborator' must be 1 to 39 letters, digits or single "
			    "hyphens, not starting or ending with a hyphen");
	/* a NULL err is allowed */
	assert_int_equal(account_valid_login("a--b", "login", NULL), ERR_INVALID);
	assert_int_equal(account_valid_login("ab", "login", NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_hyphens),
		cmocka_unit_test(test_characters),
		cmocka_unit_test(test_message_names_field),
	};

	return cmocka_run_group_tests_name("account", tests, NULL, NULL);
}
