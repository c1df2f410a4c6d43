/* test_policy.c: ref policy globs, parsing with its exact messages, decisions and reasons. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/policy.h"
#include "sandboxd/common/banned.h"

/* --- glob ----------------------------------------------------------------------------- */

static void test_glob_exact(void **state)
{
	assert_true(policy_glob_match("refs/heads/main", "refs/heads/main"));
	assert_false(policy_glob_match("refs/heads/main", "refs/heads/mai"));
	assert_false(policy_glob_match("refs/heads/main", "refs/heads/main2"));
	assert_false(policy_glob_match("refs/heads/main", "refs/heads/Main"));
	assert_false(policy_glob_match("refs/heads/main", ""));
	assert_false(policy_glob_match("refs/heads/main", "xrefs/heads/main"));
}

static void test_glob_empty(void **state)
{
	/* The parser never yields an empty pattern; the matcher still answers sensibly. */
	assert_true(policy_glob_match("", ""));
	assert_false(policy_glob_match("", "a"));
	assert_false(policy_glob_match("a", ""));
	assert_true(policy_glob_match("*", ""));
	assert_true(policy_glob_match("**", ""));
	assert_false(policy_glob_match("*a", ""));
}

static void test_glob_star_alone(void **state)
{
	assert_true(policy_glob_match("*", "refs/heads/main"));
	assert_true(policy_glob_match("*", "a"));
	assert_true(policy_glob_match("*", "/"));
	assert_true(policy_glob_match("***", "refs/tags/v1.0"));
}

static void test_glob_prefix(void **state)
{
	assert_true(policy_glob_match("refs/heads/*", "refs/heads/main"));
	assert_true(policy_glob_match("refs/heads/*", "refs/heads/"));
	assert_true(policy_glob_match("refs/heads/*", "refs/heads/feature/x/y"));
	assert_false(policy_glob_match("refs/heads/*", "refs/heads"));
	assert_false(policy_glob_match("refs/heads/*", "refs/tags/v1"));
	assert_false(policy_glob_match("refs/heads/*", "refs/namespaces/e/refs/heads/x"));
	assert_true(policy_glob_match("refs/heads/release-*", "refs/heads/release-1.2"));
	assert_false(policy_glob_match("refs/heads/release-*", "refs/heads/release"));
}

static void test_glob_suffix(void **state)
{
	assert_true(policy_glob_match("*/main", "refs/heads/main"));
	assert_true(policy_glob_match("*/main", "/main"));
	assert_true(policy_glob_match("*main", "main"));
	assert_false(policy_glob_match("*/main", "refs/heads/main2"));
	assert_false(policy_glob_match("*/main", "refs/heads/xmain"));
	assert_true(policy_glob_match("*ab", "aab"));
	assert_true(policy_glob_match("*ab", "abab"));
	assert_false(policy_glob_match("*ab", "aba"));
}

static void test_glob_middle(void **state)
{
	assert_true(policy_glob_match("refs/*/main", "refs/heads/main"));
	assert_true(policy_glob_match("refs/*/main", "refs/remotes/origin/main"));
	assert_true(policy_glob_match("refs/*/main", "refs//main"));
	assert_false(policy_glob_match("refs/*/main", "refs/main"));
	assert_true(policy_glob_match("refs/*/heads/*", "refs/namespaces/e/refs/heads/x"));
	assert_true(policy_glob_match("a*b*c", "abc"));
	assert_true(policy_glob_match("a*b*c", "aXbYbZc"));
	assert_false(policy_glob_match("a*b*c", "aXcYb"));
	assert_false(policy_glob_match("a*a", "a"));
	assert_true(policy_glob_match("a*a", "aa"));
	assert_true(policy_glob_match("*a*", "bab"));
	assert_false(policy_glob_match("*a*", "bbb"));
}

static void test_glob_star_crosses_slash(void **state)
{
	assert_true(policy_glob_match("refs/*", "refs/heads/a/b/c"));
	assert_true(policy_glob_match("refs/heads/*/x", "refs/heads/a/b/x"));
	assert_true(policy_glob_match("*/*", "a/b/c"));
	assert_false(policy_glob_match("*/*", "abc"));
}

static void test_glob_other_characters_are_literal(void **state)
{
	assert_false(policy_glob_match("refs/heads/?", "refs/heads/a"));
	assert_true(policy_glob_match("refs/heads/?", "refs/heads/?"));
	assert_false(policy_glob_match("refs/heads/[ab]", "refs/heads/a"));
	assert_true(policy_glob_match("refs/heads/[ab]", "refs/heads/[ab]"));
	assert_false(policy_glob_match("refs/heads/[", "refs/heads/a"));
	assert_true(policy_glob_match("refs/heads/[", "refs/heads/["));
	assert_false(policy_glob_match("refs/heads/\\*", "refs/heads/x"));
	assert_true(policy_glob_match("refs/heads/\\*", "refs/heads/\\x"));
	assert_false(policy_glob_match("v1.0", "v1x0"));
	assert_true(policy_glob_match("*.lock", "refs/heads/a.lock"));
	assert_false(policy_glob_match("a+", "aa"));
	assert_true(policy_glob_match("caf\xc3\xa9*", "caf\xc3\xa9/x"));
}

static void test_glob_pathological_completes(void **state)
{
	size_t n = 100000;
	char *s = malloc(n + 2);

	assert_non_null(s);
	memset(s, 'a', n);
	s[n] = 0;
	assert_false(policy_glob_match("*a*a*a*a*a*b", s));
	assert_false(policy_glob_match("*aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", s));
	assert_true(policy_glob_match("*a*a*a*a*a*", s));
	s[n] = 'b';
	s[n + 1] = 0;
	assert_true(policy_glob_match("*a*a*a*a*a*b", s));
	assert_true(policy_glob_match("*aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", s));
	free(s);
}

/* --- parsing -------------------------------------------------------------------------- */

static json_object *js(const char *text)
{
	json_object *o = json_tokener_parse(text);

	if (!o && strcmp(text, "null"))
		fail_msg("fixture '%s' does not parse", text);
	return o;
}

static void parse_fails(const char *text, const char *msg)
{
	struct policy_list l;
	struct err e = { .msg = "" };
	json_object *a = js(text);

	l.n = 99;
	assert_int_equal(policy_parse(a, "ref_policies", &l, &e), ERR_INVALID);
	assert_string_equal(e.msg, msg);
	assert_int_equal(l.n, 0);
	json_object_put(a);
	/* The JSON text route gives the same answer. */
	l.n = 99;
	e.msg[0] = 0;
	assert_int_equal(policy_parse_json(text, &l, &e), ERR_INVALID);
	assert_string_equal(e.msg, msg);
	assert_int_equal(l.n, 0);
}

static void parse_ok(const char *text, struct policy_list *l)
{
	struct err e = { .msg = "" };
	json_object *a = js(text);

	if (policy_parse(a, "ref_policies", l, &e))
		fail_msg("'%s' was refused: %s", text, e.msg);
	json_object_put(a);
}

static void test_parse_valid(void **state)
{
	struct policy_list l;

	parse_ok("[{\"pattern\": \"refs/heads/*\", \"ops\": [\"no-force-push\", \"no-push\"],"
		 " \"note\": \"unknown members are ignored\"},"
		 " {\"pattern\": \"refs/tags/v?[x]\", \"ops\": [\"no-force-push\"]},"
		 " {\"pattern\": \"*\", \"ops\": [\"no-push\"]}]", &l);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0].pattern, "refs/heads/*");
	assert_int_equal(l.v[0].ops, POLICY_NO_PUSH | POLICY_NO_FORCE_PUSH);
	assert_string_equal(l.v[1].pattern, "refs/tags/v?[x]");
	assert_int_equal(l.v[1].ops, POLICY_NO_FORCE_PUSH);
	assert_string_equal(l.v[2].pattern, "*");
	assert_int_equal(l.v[2].ops, POLICY_NO_PUSH);
	parse_ok("[]", &l);
	assert_int_equal(l.n, 0);
}

static void test_parse_absent_is_empty(void **state)
{
	struct policy_list l;
	struct err e = { .msg = "" };

	l.n = 7;
	assert_int_equal(policy_parse(NULL, "ref_policies", &l, &e), 0);
	assert_int_equal(l.n, 0);
	l.n = 7;
	assert_int_equal(policy_parse_json(NULL, &l, &e), 0);
	assert_int_equal(l.n, 0);
	l.n = 7;
	assert_int_equal(policy_parse_json("", &l, &e), 0);
	assert_int_equal(l.n, 0);
	l.n = 7;
	assert_int_equal(policy_parse_json("null", &l, &e), 0);
	assert_int_equal(l.n, 0);
	assert_string_equal(e.msg, "");
}

static void test_parse_bounds(void **state)
{
	struct policy_list l;
	char text[POLICY_MAX * 64 + 600];
	char pat[POLICY_PATTERN_MAX + 2];
	size_t len = 0;

	/* exactly POLICY_MAX policies, then one more */
	len += (size_t)snprintf(text + len, sizeof(text) - len, "[");
	for (int i = 0; i < POLICY_MAX; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"%s{\"pattern\": \"refs/heads/p%d\", \"ops\": [\"no-push\"]}",
					i ? ", " : "", i);
	snprintf(text + len, sizeof(text) - len, "]");
	parse_ok(text, &l);
	assert_int_equal(l.n, POLICY_MAX);
	assert_string_equal(l.v[POLICY_MAX - 1].pattern, "refs/heads/p31");
	snprintf(text + len, sizeof(text) - len, ", {\"pattern\": \"x\", \"ops\": [\"no-push\"]}]");
	parse_fails(text, "ref_policies must have at most 32 policies");

	/* a pattern of exactly POLICY_PATTERN_MAX bytes, then one more */
	memset(pat, 'p', POLICY_PATTERN_MAX);
	pat[POLICY_PATTERN_MAX] = 0;
	snprintf(text, sizeof(text), "[{\"pattern\": \"%s\", \"ops\": [\"no-push\"]}]", pat);
	parse_ok(text, &l);
	assert_int_equal(l.n, 1);
	assert_int_equal(strlen(l.v[0].pattern), POLICY_PATTERN_MAX);
	pat[POLICY_PATTERN_MAX] = 'p';
	pat[POLICY_PATTERN_MAX + 1] = 0;
	snprintf(text, sizeof(text), "[{\"pattern\": \"%s\", \"ops\": [\"no-push\"]}]", pat);
	parse_fails(text, "ref_policies[0].pattern must be 1 to 256 characters long");
}

static void test_parse_messages(void **state)
{
	parse_fails("{}", "ref_policies must be an array");
	parse_fails("\"refs/heads/*\"", "ref_policies must be an array");
	parse_fails("[1]", "ref_policies[0] must be an object");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [\"no-push\"]}, null]",
		    "ref_policies[1] must be an object");
	parse_fails("[[]]", "ref_policies[0] must be an object");
	parse_fails("[{\"ops\": [\"no-push\"]}]", "ref_policies[0].pattern is required");
	parse_fails("[{\"pattern\": null, \"ops\": [\"no-push\"]}]",
		    "ref_policies[0].pattern is required");
	parse_fails("[{\"pattern\": 5, \"ops\": [\"no-push\"]}]",
		    "ref_policies[0].pattern must be a string");
	parse_fails("[{\"pattern\": [\"refs/*\"], \"ops\": [\"no-push\"]}]",
		    "ref_policies[0].pattern must be a string");
	parse_fails("[{\"pattern\": \"\", \"ops\": [\"no-push\"]}]",
		    "ref_policies[0].pattern must be 1 to 256 characters long");
	parse_fails("[{\"pattern\": \"a\\u0000b\", \"ops\": [\"no-push\"]}]",
		    "ref_policies[0].pattern must not contain control characters");
	parse_fails("[{\"pattern\": \"refs/heads/x\\nrefs/heads/y\", \"ops\": [\"no-push\"]}]",
		    "ref_policies[0].pattern must not contain control characters");
	parse_fails("[{\"pattern\": \"a\\u007f\", \"ops\": [\"no-push\"]}]",
		    "ref_policies[0].pattern must not contain control characters");
	parse_fails("[{\"pattern\": \"a\"}]", "ref_policies[0].ops is required");
	parse_fails("[{\"pattern\": \"a\", \"ops\": null}]", "ref_policies[0].ops is required");
	parse_fails("[{\"pattern\": \"a\", \"ops\": \"no-push\"}]",
		    "ref_policies[0].ops must be an array");
	parse_fails("[{\"pattern\": \"a\", \"ops\": []}]", "ref_policies[0].ops must not be empty");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [\"no-push\"]},"
		    " {\"pattern\": \"b\", \"ops\": [\"no-pull\"]}]",
		    "ref_policies[1].ops[0] must be 'no-push' or 'no-force-push'");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [\"no-push\", \"NO-FORCE-PUSH\"]}]",
		    "ref_policies[0].ops[1] must be 'no-push' or 'no-force-push'");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [1]}]",
		    "ref_policies[0].ops[0] must be 'no-push' or 'no-force-push'");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [null]}]",
		    "ref_policies[0].ops[0] must be 'no-push' or 'no-force-push'");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [\"no-push\\u0000\"]}]",
		    "ref_policies[0].ops[0] must be 'no-push' or 'no-force-push'");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [\"no-push \"]}]",
		    "ref_policies[0].ops[0] must be 'no-push' or 'no-force-push'");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [\"no-push\", \"no-push\"]}]",
		    "ref_policies[0].ops[1] repeats 'no-push'");
	parse_fails("[{\"pattern\": \"a\", \"ops\": [\"no-force-push\", \"no-push\","
		    " \"no-force-push\"]}]",
		    "ref_policies[0].ops[2] repeats 'no-force-push'");
	/* the first offending element is named */
	parse_fails("[{\"pattern\": \"\", \"ops\": []}, {\"pattern\": 1}]",
		    "ref_policies[0].pattern must be 1 to 256 characters long");
}

static void test_parse_field_name(void **state)
{
	struct policy_list l;
	struct err e = { .msg = "" };
	json_object *a = js("[{\"pattern\": \"a\", \"ops\": [\"push\"]}]");

	assert_int_equal(policy_parse(a, "claims.ref_policies", &l, &e), ERR_INVALID);
	assert_string_equal(e.msg, "claims.ref_policies[0].ops[0] must be 'no-push' or "
			    "'no-force-push'");
	assert_int_equal(policy_parse(a, NULL, &l, &e), ERR_INVALID);
	assert_string_equal(e.msg, "ref_policies[0].ops[0] must be 'no-push' or "
			    "'no-force-push'");
	/* no struct err: the code alone */
	assert_int_equal(policy_parse(a, NULL, &l, NULL), ERR_INVALID);
	json_object_put(a);
}

static void test_parse_json_text(void **state)
{
	struct policy_list l;
	struct err e = { .msg = "" };
	size_t big = POLICY_JSON_MAX + 1;
	char *text;

	assert_int_equal(policy_parse_json(" [{\"pattern\": \"*\", \"ops\": [\"no-push\"]}]\n",
					   &l, &e), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].ops, POLICY_NO_PUSH);

	assert_int_equal(policy_parse_json("[{\"pattern\": \"*\"", &l, &e), ERR_INVALID);
	assert_true(strncmp(e.msg, "ref_policies is not valid JSON: ", 32) == 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(policy_parse_json("[] []", &l, &e), ERR_INVALID);
	assert_true(strncmp(e.msg, "ref_policies is not valid JSON: ", 32) == 0);
	assert_int_equal(policy_parse_json("null x", &l, &e), ERR_INVALID);
	assert_true(strncmp(e.msg, "ref_policies is not valid JSON: ", 32) == 0);
	assert_int_equal(policy_parse_json("[{'pattern': '*'}]", &l, &e), ERR_INVALID);
	assert_true(strncmp(e.msg, "ref_policies is not valid JSON: ", 32) == 0);
	assert_int_equal(policy_parse_json("[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]", &l, &e),
			 ERR_INVALID);
	assert_true(strncmp(e.msg, "ref_policies is not valid JSON: ", 32) == 0);
	assert_int_equal(policy_parse_json("   ", &l, &e), ERR_INVALID);

	text = malloc(big + 1);
	assert_non_null(text);
	memset(text, ' ', big);
	text[0] = '[';
	text[big - 1] = ']';
	text[big] = 0;
	assert_int_equal(policy_parse_json(text, &l, &e), ERR_TOOBIG);
	assert_string_equal(e.msg, "ref_policies must be at most 65536 bytes of JSON");
	text[big - 2] = ']';
	text[big - 1] = 0;  /* exactly POLICY_JSON_MAX bytes */
	assert_int_equal(policy_parse_json(text, &l, &e), 0);
	assert_int_equal(l.n, 0);
	free(text);
}

/* --- deciding ------------------------------------------------------------------------- */

static struct policy_list list_of(const char *text)
{
	struct policy_list l;
	struct err e = { .msg = "" };

	if (policy_parse_json(text, &l, &e))
		fail_msg("'%s' was refused: %s", text, e.msg);
	return l;
}

static void test_decide_empty_list(void **state)
{
	struct policy_list l = { 0 };
	const char *pat = "x";

	assert_int_equal(policy_decide(&l, "refs/heads/main", &pat), 0);
	assert_null(pat);
	assert_int_equal(policy_decide(&l, "refs/heads/main", NULL), 0);
}

static void test_decide_first_match_wins(void **state)
{
	struct policy_list l = list_of(
		"[{\"pattern\": \"refs/heads/main\", \"ops\": [\"no-force-push\"]},"
		" {\"pattern\": \"refs/heads/*\", \"ops\": [\"no-push\"]},"
		" {\"pattern\": \"refs/heads/dev\", \"ops\": [\"no-force-push\"]}]");
	const char *pat;

	assert_int_equal(policy_decide(&l, "refs/heads/main", &pat), POLICY_NO_FORCE_PUSH);
	assert_ptr_equal(pat, l.v[0].pattern);
	/* the broader second policy shadows the third */
	assert_int_equal(policy_decide(&l, "refs/heads/dev", &pat), POLICY_NO_PUSH);
	assert_string_equal(pat, "refs/heads/*");
	assert_int_equal(policy_decide(&l, "refs/tags/v1", &pat), 0);
	assert_null(pat);

	l = list_of("[{\"pattern\": \"refs/heads/*\", \"ops\": [\"no-push\"]},"
		    " {\"pattern\": \"refs/heads/main\", \"ops\": [\"no-force-push\"]}]");
	assert_int_equal(policy_decide(&l, "refs/heads/main", &pat), POLICY_NO_PUSH);
	assert_string_equal(pat, "refs/heads/*");
}

/* The session-branch example: a sandbox may only fast-forward its own branch. */
static const char session[] =
	"[{\"pattern\": \"refs/namespaces/ephemeral/refs/heads/S\", \"ops\": [\"no-force-push\"]},"
	" {\"pattern\": \"*\", \"ops\": [\"no-push\"]}]";

static void test_decide_session_branch(void **state)
{
	struct policy_list l = list_of(session);
	const char *pat;

	assert_int_equal(l.n, 2);
	assert_int_equal(policy_decide(&l, "refs/namespaces/ephemeral/refs/heads/S", &pat),
			 POLICY_NO_FORCE_PUSH);
	assert_string_equal(pat, "refs/namespaces/ephemeral/refs/heads/S");
	assert_int_equal(policy_decide(&l, "refs/namespaces/ephemeral/refs/heads/S2", &pat),
			 POLICY_NO_PUSH);
	assert_string_equal(pat, "*");
	assert_int_equal(policy_decide(&l, "refs/namespaces/ephemeral/refs/heads/T", &pat),
			 POLICY_NO_PUSH);
	assert_int_equal(policy_decide(&l, "refs/heads/S", &pat), POLICY_NO_PUSH);
	assert_int_equal(policy_decide(&l, "refs/heads/main", &pat), POLICY_NO_PUSH);
	assert_int_equal(policy_decide(&l, "refs/tags/v1", &pat), POLICY_NO_PUSH);
}

static void test_check_session_branch(void **state)
{
	struct policy_list l = list_of(session);
	const char *s = "refs/namespaces/ephemeral/refs/heads/S";
	char r[POLICY_REASON_MAX];

	assert_int_equal(policy_check(&l, s, POLICY_CREATE, r, sizeof(r)), 0);
	assert_string_equal(r, "");
	assert_int_equal(policy_check(&l, s, POLICY_FAST_FORWARD, r, sizeof(r)), 0);
	assert_string_equal(r, "");
	assert_int_equal(policy_check(&l, s, POLICY_NON_FAST_FORWARD, r, sizeof(r)), 1);
	assert_string_equal(r, "refs/namespaces/ephemeral/refs/heads/S: push refused by ref "
			    "policy 'refs/namespaces/ephemeral/refs/heads/S' (no-force-push: "
			    "not a fast-forward)");
	assert_int_equal(policy_check(&l, s, POLICY_DELETE, r, sizeof(r)), 1);
	assert_string_equal(r, "refs/namespaces/ephemeral/refs/heads/S: push refused by ref "
			    "policy 'refs/namespaces/ephemeral/refs/heads/S' (no-force-push: "
			    "deletion)");
	assert_int_equal(policy_check(&l, "refs/heads/main", POLICY_FAST_FORWARD, r,
				      sizeof(r)), 1);
	assert_string_equal(r, "refs/heads/main: push refused by ref policy '*' (no-push)");
	assert_int_equal(policy_check(&l, "refs/namespaces/ephemeral/refs/heads/T",
				      POLICY_CREATE, r, sizeof(r)), 1);
	assert_string_equal(r, "refs/namespaces/ephemeral/refs/heads/T: push refused by ref "
			    "policy '*' (no-push)");
}

static void test_decide_long_refname_fails_closed(void **state)
{
	struct policy_list l = list_of("[{\"pattern\": \"refs/heads/*\", \"ops\": "
				       "[\"no-force-push\"]}]");
	struct policy_list empty = { 0 };
	char name[POLICY_REFNAME_MAX + 2];
	char r[POLICY_REASON_MAX], want[128];
	const char *pat = "x";

	memcpy(name, "refs/heads/", 11);
	memset(name + 11, 'a', sizeof(name) - 11);
	name[POLICY_REFNAME_MAX] = 0;  /* exactly the bound: matched as usual */
	assert_int_equal(policy_decide(&l, name, &pat), POLICY_NO_FORCE_PUSH);
	assert_string_equal(pat, "refs/heads/*");
	assert_int_equal(policy_check(&l, name, POLICY_FAST_FORWARD, r, sizeof(r)), 0);

	name[POLICY_REFNAME_MAX] = 'a';
	name[POLICY_REFNAME_MAX + 1] = 0;
	assert_int_equal(policy_decide(&l, name, &pat), POLICY_NO_PUSH);
	assert_null(pat);
	assert_int_equal(policy_check(&l, name, POLICY_FAST_FORWARD, r, sizeof(r)), 1);
	/* the reason quotes the first 64 bytes of the name only */
	snprintf(want, sizeof(want), "%.64s...: push refused: ref name is longer than 4096 bytes",
		 name);
	assert_string_equal(r, want);
	assert_int_equal(strlen(want), 64 + strlen("...: push refused: ref name is longer than "
						   "4096 bytes"));
	/* an empty list restricts nothing, however long the name */
	assert_int_equal(policy_decide(&empty, name, &pat), 0);
	assert_int_equal(policy_check(&empty, name, POLICY_NON_FAST_FORWARD, r, sizeof(r)), 0);
}

/* --- refusing ------------------------------------------------------------------------- */

static void test_refused_table(void **state)
{
	static const struct {
		unsigned ops;
		enum policy_update upd;
		const char *why;  /* NULL: allowed */
	} t[] = {
		{ 0, POLICY_CREATE, NULL },
		{ 0, POLICY_DELETE, NULL },
		{ 0, POLICY_FAST_FORWARD, NULL },
		{ 0, POLICY_NON_FAST_FORWARD, NULL },
		{ POLICY_NO_PUSH, POLICY_CREATE, "no-push" },
		{ POLICY_NO_PUSH, POLICY_DELETE, "no-push" },
		{ POLICY_NO_PUSH, POLICY_FAST_FORWARD, "no-push" },
		{ POLICY_NO_PUSH, POLICY_NON_FAST_FORWARD, "no-push" },
		{ POLICY_NO_FORCE_PUSH, POLICY_CREATE, NULL },
		{ POLICY_NO_FORCE_PUSH, POLICY_DELETE, "no-force-push: deletion" },
		{ POLICY_NO_FORCE_PUSH, POLICY_FAST_FORWARD, NULL },
		{ POLICY_NO_FORCE_PUSH, POLICY_NON_FAST_FORWARD,
		  "no-force-push: not a fast-forward" },
		{ POLICY_NO_PUSH | POLICY_NO_FORCE_PUSH, POLICY_CREATE, "no-push" },
		{ POLICY_NO_PUSH | POLICY_NO_FORCE_PUSH, POLICY_DELETE, "no-push" },
		{ POLICY_NO_PUSH | POLICY_NO_FORCE_PUSH, POLICY_FAST_FORWARD, "no-push" },
		{ POLICY_NO_PUSH | POLICY_NO_FORCE_PUSH, POLICY_NON_FAST_FORWARD, "no-push" },
	};
	char r[POLICY_REASON_MAX], want[POLICY_REASON_MAX];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(r, 'x', sizeof(r));
		int got = policy_refused(t[i].ops, "refs/heads/*", "refs/heads/main", t[i].upd,
					 r, sizeof(r));
		if (!t[i].why) {
			assert_int_equal(got, 0);
			assert_string_equal(r, "");
			continue;
		}
		assert_int_equal(got, 1);
		snprintf(want, sizeof(want),
			 "refs/heads/main: push refused by ref policy 'refs/heads/*' (%s)", t[i].why);
		assert_string_equal(r, want);
	}
}

static void test_refused_small_buffers(void **state)
{
	char r[16];

	memset(r, 'x', sizeof(r));
	assert_int_equal(policy_refused(POLICY_NO_PUSH, "*", "refs/heads/main",
					POLICY_CREATE, r, sizeof(r)), 1);
	assert_string_equal(r, "refs/heads/main");  /* cut, but terminated */
	assert_int_equal(policy_refused(POLICY_NO_PUSH, "*", "refs/heads/main",
					POLICY_CREATE, r, 0), 1);
	assert_int_equal(policy_refused(POLICY_NO_PUSH, "*", "refs/heads/main",
					POLICY_CREATE, NULL, 0), 1);
	assert_int_equal(policy_refused(0, "*", "refs/heads/main", POLICY_CREATE, NULL, 0), 0);
}

static void test_reason_fits_bound(void **state)
{
	struct policy_list l;
	char name[POLICY_REFNAME_MAX + 1], text[POLICY_PATTERN_MAX + 64];
	char pat[POLICY_PATTERN_MAX + 1], r[POLICY_REASON_MAX];
	struct err e = { .msg = "" };

	memset(pat, '*', POLICY_PATTERN_MAX);
	pat[POLICY_PATTERN_MAX] = 0;
	snprintf(text, sizeof(text), "[{\"pattern\": \"%s\", \"ops\": [\"no-push\"]}]", pat);
	assert_int_equal(policy_parse_json(text, &l, &e), 0);
	memset(name, 'n', POLICY_REFNAME_MAX);
	name[POLICY_REFNAME_MAX] = 0;
	assert_int_equal(policy_check(&l, name, POLICY_CREATE, r, sizeof(r)), 1);
	assert_int_equal(strlen(r), POLICY_REFNAME_MAX + strlen(": push refused by ref policy '")
			 + POLICY_PATTERN_MAX + strlen("' (no-push)"));
	assert_string_equal(r + strlen(r) - strlen("' (no-push)"), "' (no-push)");
}

/* --- the push rules, shared by the hook and the REST routes ------------------------- */

static int ff_calls;
static int ff_yes(void *arg) { ff_calls++; return 1; }
static int ff_no(void *arg) { ff_calls++; return 0; }

static void test_push_default_branch(void **state)
{
	struct policy_list none = { .n = 0 };
	char reason[POLICY_REASON_MAX];
	struct policy_push p = { .policies = &none, .ref = "refs/heads/main",
				 .default_ref = "refs/heads/main", .deleting = 1 };

	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 1);
	assert_string_equal(reason, "refs/heads/main: the default branch can't be deleted");
	p.agent = 1;
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 1);
	assert_string_equal(reason, "refs/heads/main: agents may not update the default branch");
	/* another branch: allowed, reason empty */
	p.agent = 0;
	p.ref = "refs/heads/feature";
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 0);
	assert_string_equal(reason, "");
	/* no default branch (the ephemeral namespace): the same name is free */
	p.ref = "refs/namespaces/ephemeral/refs/heads/main";
	p.default_ref = "";
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 0);
}

static void test_push_force_and_lazy_ff(void **state)
{
	struct policy_list none = { .n = 0 };
	char reason[POLICY_REASON_MAX];
	struct policy_push p = { .policies = &none, .ref = "refs/heads/main",
				 .default_ref = "refs/heads/main", .fast_forward = ff_no };

	ff_calls = 0;
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 1);
	assert_string_equal(reason,
			    "refs/heads/main: the default branch takes no force-push (not a fast-forward)");
	assert_int_equal(ff_calls, 1);
	p.fast_forward = ff_yes;
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 0);
	/* creating and deleting never ask (NULL callback is fine there) */
	ff_calls = 0;
	p.fast_forward = NULL;
	p.creating = 1;
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 0);
	p.creating = 0;
	p.ref = "refs/heads/x";
	p.deleting = 1;
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 0);
	assert_int_equal(ff_calls, 0);
}

static void test_push_policies_first(void **state)
{
	struct policy_list l = { .n = 2 };
	char reason[POLICY_REASON_MAX];
	struct policy_push p = { .policies = &l, .ref = "refs/heads/locked", .default_ref = "",
				 .deleting = 1 };

	snprintf(l.v[0].pattern, sizeof(l.v[0].pattern), "refs/heads/locked");
	l.v[0].ops = POLICY_NO_FORCE_PUSH;
	snprintf(l.v[1].pattern, sizeof(l.v[1].pattern), "refs/tags/*");
	l.v[1].ops = POLICY_NO_PUSH;
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 1);
	assert_string_equal(reason, "refs/heads/locked: push refused by ref policy "
				    "'refs/heads/locked' (no-force-push: deletion)");
	/* a fast-forward passes no-force-push; the callback is asked once */
	ff_calls = 0;
	p.deleting = 0;
	p.fast_forward = ff_yes;
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 0);
	assert_int_equal(ff_calls, 1);
	/* no-push refuses without asking */
	ff_calls = 0;
	p.ref = "refs/tags/v1";
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 1);
	assert_string_equal(reason, "refs/tags/v1: push refused by ref policy 'refs/tags/*' (no-push)");
	assert_int_equal(ff_calls, 0);
	/* a policy that matches the default branch decides before branch protection, and a
	 * policy miss leaves it to branch protection */
	p.ref = "refs/heads/main";
	p.default_ref = "refs/heads/main";
	p.fast_forward = ff_no;
	assert_int_equal(policy_push_refused(&p, reason, sizeof(reason)), 1);
	assert_string_equal(reason,
			    "refs/heads/main: the default branch takes no force-push (not a fast-forward)");
	assert_int_equal(ff_calls, 1);
	/* a short buffer still holds a NUL-terminated prefix */
	p.deleting = 1;
	assert_int_equal(policy_push_refused(&p, reason, 10), 1);
	assert_int_equal(strlen(reason), 9);
}

/* policy_may_push_some: a no-push policy over every name, before any that lets a push
 * through, leaves nothing to push; anything narrower leaves something. */
static int may(const char *text, const char *base)
{
	struct policy_list l;

	parse_ok(text, &l);
	return policy_may_push_some(&l, base);
}

static void test_may_push_some(void **state)
{
	const char *eph = "refs/namespaces/ephemeral/refs/";

	(void)state;
	assert_int_equal(may("[]", "refs/"), 1);
	assert_int_equal(may("[{\"pattern\":\"*\",\"ops\":[\"no-push\"]}]", "refs/"), 0);
	assert_int_equal(may("[{\"pattern\":\"**\",\"ops\":[\"no-push\"]}]", eph), 0);
	assert_int_equal(may("[{\"pattern\":\"refs/*\",\"ops\":[\"no-push\"]}]", "refs/"), 0);
	assert_int_equal(may("[{\"pattern\":\"re*\",\"ops\":[\"no-push\",\"no-force-push\"]}]", eph), 0);
	assert_int_equal(may("[{\"pattern\":\"refs/namespaces/ephemeral/refs/*\",\"ops\":[\"no-push\"]}]", eph), 0);
	/* Narrower: some name is left. */
	assert_int_equal(may("[{\"pattern\":\"refs/tags/*\",\"ops\":[\"no-push\"]}]", "refs/"), 1);
	assert_int_equal(may("[{\"pattern\":\"refs/namespaces/ephemeral/refs/*\",\"ops\":[\"no-push\"]}]", "refs/"), 1);
	assert_int_equal(may("[{\"pattern\":\"refs/heads/*\",\"ops\":[\"no-push\"]}]", eph), 1);
	assert_int_equal(may("[{\"pattern\":\"refs\",\"ops\":[\"no-push\"]}]", "refs/"), 1);
	assert_int_equal(may("[{\"pattern\":\"*x\",\"ops\":[\"no-push\"]}]", "refs/"), 1);
	/* A policy that lets pushes through, before the catch-all. */
	assert_int_equal(may("[{\"pattern\":\"refs/heads/f-*\",\"ops\":[\"no-force-push\"]},"
			     "{\"pattern\":\"*\",\"ops\":[\"no-push\"]}]", "refs/"), 1);
	/* The catch-all first: what follows never decides. */
	assert_int_equal(may("[{\"pattern\":\"*\",\"ops\":[\"no-push\"]},"
			     "{\"pattern\":\"refs/heads/f-*\",\"ops\":[\"no-force-push\"]}]", "refs/"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_may_push_some),
		cmocka_unit_test(test_glob_exact),
		cmocka_unit_test(test_glob_empty),
		cmocka_unit_test(test_glob_star_alone),
		cmocka_unit_test(test_glob_prefix),
		cmocka_unit_test(test_glob_suffix),
		cmocka_unit_test(test_glob_middle),
		cmocka_unit_test(test_glob_star_crosses_slash),
		cmocka_unit_test(test_glob_other_characters_are_literal),
		cmocka_unit_test(test_glob_pathological_completes),
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_absent_is_empty),
		cmocka_unit_test(test_parse_bounds),
		cmocka_unit_test(test_parse_messages),
		cmocka_unit_test(test_parse_field_name),
		cmocka_unit_test(test_parse_json_text),
		cmocka_unit_test(test_decide_empty_list),
		cmocka_unit_test(test_decide_first_match_wins),
		cmocka_unit_test(test_decide_session_branch),
		cmocka_unit_test(test_check_session_branch),
		cmocka_unit_test(test_decide_long_refname_fails_closed),
		cmocka_unit_test(test_refused_table),
		cmocka_unit_test(test_refused_small_buffers),
		cmocka_unit_test(test_reason_fits_bound),
		cmocka_unit_test(test_push_default_branch),
		cmocka_unit_test(test_push_force_and_lazy_ff),
		cmocka_unit_test(test_push_policies_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
