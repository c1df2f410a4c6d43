/* test_router.c: path matching, percent-decoding of parameters, 404 against 405. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/lib/router.h"
#include "sandboxd/common/banned.h"

static int h_list(struct req *r, struct err *e) { return 1; }
static int h_create(struct req *r, struct err *e) { return 2; }
static int h_get(struct req *r, struct err *e) { return 3; }
static int h_update(struct req *r, struct err *e) { return 4; }
static int h_tag(struct req *r, struct err *e) { return 5; }
static int h_six(struct req *r, struct err *e) { return 6; }

static const struct route table[] = {
	{ "GET", "/items", h_list, "item.list", ROUTE_PUBLIC, NULL },
	{ "POST", "/items", h_create, "item.create", ROUTE_JSON, NULL },
	{ "GET", "/items/{id}", h_get, "item.get", 0, NULL },
	{ "PATCH", "/items/{id}", h_update, "item.update", ROUTE_JSON, NULL },
	{ "DELETE", "/items/{id}/tags/{tag}", h_tag, "tag.delete", 0, NULL },
	{ "GET", "/s/{a}/{b}/{c}/x/{d}/{e}/{f}", h_six, "six", 0, NULL },
	{ "GET", "/r/{o}/refs/{ref+}", h_get, "ref.get", 0, NULL },
	{ "GET", "/bad/{ref+}/x", h_get, "bad", 0, NULL },
};
#define N (sizeof(table) / sizeof(table[0]))

/* The match result for one request against the small table. */
static int match(const char *method, const char *path, struct route_match *m)
{
	return router_match(table, N, method, path, m);
}

static void test_literal(void **state)
{
	struct route_match m;

	assert_int_equal(match("GET", "/items", &m), 0);
	assert_ptr_equal(m.route, &table[0]);
	assert_int_equal(m.nparams, 0);
	assert_int_equal(match("POST", "/items", &m), 0);
	assert_ptr_equal(m.route, &table[1]);
	assert_int_equal(m.route->handler(NULL, NULL), 2);
	assert_string_equal(m.route->action, "item.create");
	assert_int_equal(m.route->flags, ROUTE_JSON);
}

static void test_params(void **state)
{
	struct route_match m;

	assert_int_equal(match("GET", "/items/42", &m), 0);
	assert_ptr_equal(m.route, &table[2]);
	assert_int_equal(m.nparams, 1);
	assert_string_equal(m.params[0], "42");
	assert_int_equal(match("DELETE", "/items/7/tags/red", &m), 0);
	assert_ptr_equal(m.route, &table[4]);
	assert_int_equal(m.nparams, 2);
	assert_string_equal(m.params[0], "7");
	assert_string_equal(m.params[1], "red");
}

static void test_six_params(void **state)
{
	struct route_match m;

	assert_int_equal(match("GET", "/s/1/2/3/x/4/5/6", &m), 0);
	assert_ptr_equal(m.route, &table[5]);
	assert_int_equal(m.nparams, ROUTER_MAX_PARAMS);
	for (int i = 0; i < ROUTER_MAX_PARAMS; i++) {
		char want[2] = { (char)('1' + i), 0 };
		assert_string_equal(m.params[i], want);
	}
	assert_int_equal(match("GET", "/s/1/2/3/y/4/5/6", &m), ERR_NOTFOUND);
	assert_int_equal(match("GET", "/s/1/2/3/x/4/5", &m), ERR_NOTFOUND);
}

static void test_percent_decoding(void **state)
{
	static const struct {
		const char *path;
		const char *param;
	} v[] = {
		{ "/items/%41", "A" },
		{ "/items/%41bc", "Abc" },
		{ "/items/a%42c", "aBc" },
		{ "/items/ab%43", "abC" },
		{ "/items/%7e%7E", "~~" },
		{ "/items/%2e%2E", ".." },
		{ "/items/%20", " " },
		{ "/items/%25", "%" },
		{ "/items/%2541", "%41" },   /* decoded once only */
		{ "/items/%C3%A9", "\xc3\xa9" },
		{ "/items/%ff", "\xff" },
		{ "/items/a+b", "a+b" },     /* '+' is not a space in a path */
		{ "/items/..", ".." },
		{ "/items/.", "." },
	};
	struct route_match m;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(match("GET", v[i].path, &m), 0);
		assert_ptr_equal(m.route, &table[2]);
		assert_string_equal(m.params[0], v[i].param);
	}
}

static void test_decoded_slash_or_nul_never_match(void **state)
{
	static const char *paths[] = {
		"/items/%2F", "/items/%2f", "/items/a%2Fb", "/items/a%2fb", "/items/%00",
		"/items/a%00b", "/items/%2F%2F",
	};
	struct route_match m;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		assert_int_equal(match("GET", paths[i], &m), ERR_NOTFOUND);
		assert_null(m.route);
	}
	assert_int_equal(match("DELETE", "/items/1/tags/a%2Fb", &m), ERR_NOTFOUND);
}

static void test_malformed_escapes(void **state)
{
	static const char *paths[] = {
		"/items/%", "/items/%4", "/items/a%", "/items/a%4", "/items/%G1", "/items/%4G",
		"/items/%%41", "/items/%-1", "/items/% 1", "/items/%4/", "/items/%x41",
	};
	struct route_match m;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		assert_int_equal(match("GET", paths[i], &m), ERR_NOTFOUND);
	/* a malformed escape in the segment after a good one */
	assert_int_equal(match("DELETE", "/items/1/tags/%4", &m), ERR_NOTFOUND);
}

static void test_segments_must_line_up(void **state)
{
	static const char *paths[] = {
		"/items/", "/items/1/", "//items", "/items//", "/items//tags/x", "/items/1/tags/",
		"/items/1/tags", "/item", "/itemsx", "/Items", "items", "", "/", "/items/1/2",
		"/items?x=1/",
	};
	struct route_match m;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		assert_int_equal(match("GET", paths[i], &m), ERR_NOTFOUND);
		assert_null(m.route);
		assert_string_equal(m.allow, "");
	}
}

static void test_405_and_allow(void **state)
{
	struct route_match m;

	assert_int_equal(match("PUT", "/items/1", &m), ERR_METHOD);
	assert_null(m.route);
	assert_string_equal(m.allow, "GET, PATCH");
	assert_int_equal(match("DELETE", "/items", &m), ERR_METHOD);
	assert_string_equal(m.allow, "GET, POST");
	assert_int_equal(match("GET", "/items/1/tags/x", &m), ERR_METHOD);
	assert_string_equal(m.allow, "DELETE");
	/* methods are case-sensitive (RFC 9110 §9.1) */
	assert_int_equal(match("get", "/items", &m), ERR_METHOD);
	assert_string_equal(m.allow, "GET, POST");
	assert_int_equal(match("", "/items", &m), ERR_METHOD);
}

static void test_result_is_reset(void **state)
{
	struct route_match m;

	memset(&m, 0x5a, sizeof(m));
	assert_int_equal(match("GET", "/nothing", &m), ERR_NOTFOUND);
	assert_null(m.route);
	assert_int_equal(m.nparams, 0);
	assert_string_equal(m.allow, "");
	assert_int_equal(match("PUT", "/items/1", &m), ERR_METHOD);
	assert_int_equal(match("GET", "/items", &m), 0);
	assert_int_equal(m.nparams, 0);
	assert_int_equal(router_match(table, 0, "GET", "/items", &m), ERR_NOTFOUND);
}

static void test_param_length_bound(void **state)
{
	static char path[16 + 3 * ROUTER_PARAM_MAX + 4];
	struct route_match m;
	size_t n;

	/* ROUTER_PARAM_MAX - 1 characters fit with the NUL */
	n = (size_t)snprintf(path, sizeof(path), "/items/");
	memset(path + n, 'a', ROUTER_PARAM_MAX - 1);
	path[n + ROUTER_PARAM_MAX - 1] = 0;
	assert_int_equal(match("GET", path, &m), 0);
	assert_int_equal(strlen(m.params[0]), ROUTER_PARAM_MAX - 1);
	/* ROUTER_PARAM_MAX do not */
	path[n + ROUTER_PARAM_MAX - 1] = 'a';
	path[n + ROUTER_PARAM_MAX] = 0;
	assert_int_equal(match("GET", path, &m), ERR_NOTFOUND);
	assert_null(m.route);
	/* the bound applies to the decoded length */
	for (size_t i = 0; i < ROUTER_PARAM_MAX - 1; i++)
		memcpy(path + n + 3 * i, "%41", 3);
	path[n + 3 * (ROUTER_PARAM_MAX - 1)] = 0;
	assert_int_equal(match("GET", path, &m), 0);
	assert_int_equal(strlen(m.params[0]), ROUTER_PARAM_MAX - 1);
	assert_int_equal(m.params[0][0], 'A');
	memcpy(path + n + 3 * (ROUTER_PARAM_MAX - 1), "%41", 4);
	assert_int_equal(match("GET", path, &m), ERR_NOTFOUND);
}

static void test_allow_holds_whole_methods(void **state)
{
	/* more methods on one path than allow[] holds: the list may be cut short, but it must
	 * hold whole method names only */
	static const char *methods[] = {
		"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT",
		"PROPFIND", "MKCOL",
	};
	struct route many[sizeof(methods) / sizeof(methods[0])];
	struct route_match m;
	char copy[sizeof(m.allow)], *item, *save = NULL;

	for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++)
		many[i] = (struct route){ methods[i], "/x", h_get, "x", 0, NULL };
	assert_int_equal(router_match(many, sizeof(many) / sizeof(many[0]), "LOCK", "/x", &m),
			 ERR_METHOD);
	assert_true(strlen(m.allow) < sizeof(m.allow));
	snprintf(copy, sizeof(copy), "%s", m.allow);
	for (item = strtok_r(copy, ", ", &save); item; item = strtok_r(NULL, ", ", &save)) {
		int known = 0;
		for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
			known |= strcmp(item, methods[i]) == 0;
		if (!known)
			fail_msg("allow list '%s' holds a cut method name '%s'", m.allow, item);
	}
}

static void test_decode_segment(void **state)
{
	char out[8];

	assert_int_equal(router_decode_segment("%41b%63", 7, out, sizeof(out)), 0);
	assert_string_equal(out, "Abc");
	/* n, not the NUL, bounds the input */
	assert_int_equal(router_decode_segment("abc/def", 3, out, sizeof(out)), 0);
	assert_string_equal(out, "abc");
	assert_int_equal(router_decode_segment("%41%42", 3, out, sizeof(out)), 0);
	assert_string_equal(out, "A");
	assert_int_equal(router_decode_segment("%41%42", 4, out, sizeof(out)), ERR_INVALID);
	assert_int_equal(router_decode_segment("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* 7 characters and the NUL fit 8 bytes, 8 do not */
	assert_int_equal(router_decode_segment("abcdefg", 7, out, sizeof(out)), 0);
	assert_string_equal(out, "abcdefg");
	assert_int_equal(router_decode_segment("abcdefgh", 8, out, sizeof(out)), ERR_INVALID);
	assert_int_equal(router_decode_segment("%61bcdef%67", 11, out, sizeof(out)), 0);
	assert_string_equal(out, "abcdefg");
	assert_int_equal(router_decode_segment("%2F", 3, out, sizeof(out)), ERR_INVALID);
	assert_int_equal(router_decode_segment("a%2fb", 5, out, sizeof(out)), ERR_INVALID);
	assert_int_equal(router_decode_segment("%00", 3, out, sizeof(out)), ERR_INVALID);
	assert_int_equal(router_decode_segment("%", 1, out, sizeof(out)), ERR_INVALID);
	assert_int_equal(router_decode_segment("%4", 2, out, sizeof(out)), ERR_INVALID);
	assert_int_equal(router_decode_segment("%zz", 3, out, sizeof(out)), ERR_INVALID);
}

/* --- the real table --- */

static int api(const char *method, const char *path, struct route_match *m)
{
	return router_match(api_routes, api_routes_count, method, path, m);
}

static void test_api_routes(void **state)
{
	struct route_match m;

	assert_int_equal(api("GET", "/healthz", &m), 0);
	assert_ptr_equal(m.route->handler, api_health);
	assert_true(m.route->flags & ROUTE_PUBLIC);
	assert_int_equal(api("GET", "/api/v3/user", &m), 0);
	assert_ptr_equal(m.route->handler, api_user_get);
	assert_int_equal(api("POST", "/api/v3/user/repos", &m), 0);
	assert_ptr_equal(m.route->handler, api_user_repos_create);
	assert_string_equal(m.route->action, "repo.create");
	assert_true(m.route->flags & ROUTE_JSON);
	assert_int_equal(api("POST", "/api/v3/user/tokens", &m), 0);
	assert_ptr_equal(m.route->handler, api_user_tokens_create);
	assert_int_equal(api("DELETE", "/api/v3/user/tokens/17", &m), 0);
	assert_ptr_equal(m.route->handler, api_user_tokens_revoke);
	assert_string_equal(m.params[0], "17");

	assert_int_equal(api("GET", "/api/v3/repos/octo/hello%2Dworld", &m), 0);
	assert_ptr_equal(m.route->handler, api_repo_get);
	assert_int_equal(m.nparams, 2);
	assert_string_equal(m.params[0], "octo");
	assert_string_equal(m.params[1], "hello-world");
	assert_int_equal(api("PATCH", "/api/v3/repos/octo/hello", &m), 0);
	assert_ptr_equal(m.route->handler, api_repo_update);
	assert_int_equal(api("PUT", "/api/v3/repos/octo/hello/collaborators/bob", &m), 0);
	assert_ptr_equal(m.route->handler, api_collaborator_set);
	assert_int_equal(m.nparams, 3);
	assert_string_equal(m.params[2], "bob");
	assert_int_equal(api("DELETE", "/api/v3/repos/octo/hello/collaborators/bob", &m), 0);
	assert_ptr_equal(m.route->handler, api_collaborator_remove);
	assert_int_equal(api("POST", "/api/v3/repos/octo/hello/job-tokens", &m), 0);
	assert_ptr_equal(m.route->handler, api_job_tokens_create);

	/* The forge's everyday routes. */
	assert_int_equal(api("GET", "/api/v3/user/repos", &m), 0);
	assert_ptr_equal(m.route->handler, api_user_repos_list);
	assert_int_equal(api("GET", "/api/v3/users/alice/repos", &m), 0);
	assert_ptr_equal(m.route->handler, api_users_repos_list);
	assert_string_equal(m.params[0], "alice");
	assert_true(m.route->flags & ROUTE_PUBLIC);
	assert_int_equal(api("GET", "/api/v3/user/tokens", &m), 0);
	assert_ptr_equal(m.route->handler, api_user_tokens_list);
	assert_int_equal(api("GET", "/api/v3/user/keys", &m), 0);
	assert_ptr_equal(m.route->handler, api_user_keys_list);
	assert_int_equal(api("DELETE", "/api/v3/user/keys/Ab_-9", &m), 0);
	assert_ptr_equal(m.route->handler, api_user_keys_delete);
	assert_string_equal(m.params[0], "Ab_-9");
	assert_int_equal(api("DELETE", "/api/v3/repos/octo/hello", &m), 0);
	assert_ptr_equal(m.route->handler, api_repo_delete);
	assert_false(m.route->flags & ROUTE_PUBLIC);
	assert_int_equal(api("GET", "/api/v3/repos/octo/hello/collaborators", &m), 0);
	assert_ptr_equal(m.route->handler, api_collaborators_list);

	assert_int_equal(api("POST", "/api/v3/admin/accounts", &m), 0);
	assert_ptr_equal(m.route->handler, api_admin_accounts_create);
	assert_true(m.route->flags & ROUTE_SITE_ADMIN);
	assert_int_equal(api("PATCH", "/api/v3/admin/accounts/alice", &m), 0);
	assert_ptr_equal(m.route->handler, api_admin_accounts_update);
	assert_string_equal(m.params[0], "alice");
	assert_int_equal(api("POST", "/api/v3/admin/accounts/alice/tokens", &m), 0);
	assert_ptr_equal(m.route->handler, api_admin_tokens_create);
	assert_true(m.route->flags & ROUTE_SITE_ADMIN);
}

static void test_api_405(void **state)
{
	struct route_match m;

	assert_int_equal(api("PUT", "/api/v3/repos/o/r", &m), ERR_METHOD);
	assert_string_equal(m.allow, "GET, PATCH, DELETE");
	assert_int_equal(api("POST", "/api/v3/repos/o/r", &m), ERR_METHOD);
	assert_string_equal(m.allow, "GET, PATCH, DELETE");
	assert_int_equal(api("GET", "/api/v3/repos/o/r/collaborators/u", &m), ERR_METHOD);
	assert_string_equal(m.allow, "PUT, DELETE");
	assert_int_equal(api("PUT", "/api/v3/user/repos", &m), ERR_METHOD);
	assert_string_equal(m.allow, "POST, GET");
	assert_int_equal(api("POST", "/api/v3/user/keys/k", &m), ERR_METHOD);
	assert_string_equal(m.allow, "DELETE");
	assert_int_equal(api("POST", "/api/v3/users/alice/repos", &m), ERR_METHOD);
	assert_string_equal(m.allow, "GET");
	assert_int_equal(api("POST", "/healthz", &m), ERR_METHOD);
	assert_string_equal(m.allow, "GET");
	assert_int_equal(api("GET", "/api/v3/user/tokens/1", &m), ERR_METHOD);
	assert_string_equal(m.allow, "DELETE");
	assert_int_equal(api("GET", "/api/v3/admin/accounts", &m), ERR_METHOD);
	assert_string_equal(m.allow, "POST");
}

static void test_api_404(void **state)
{
	static const char *paths[] = {
		"/", "/api", "/api/v3", "/api/v3/", "/api/v3/user/", "/api/v3/User", "/healthz/",
		"/api/v3/repos/o", "/api/v3/repos/o/", "/api/v3/repos/o/r/", "/api/v3/repos//r",
		"/api/v3/repos/o%2Fr", "/api/v3/repos/o/r%2Fcollaborators%2Fu",
		"/api/v3/repos/o/r%00", "/api/v3/repos/o/r/collaborators/",
		"/api/v3/repos/o/r/job-tokens/x", "/api/v3/users/alice", "/api/v3/users/alice/repos/",
		"/api/v3/user/keys/", "/api/v3/users//repos",
		"/api/v3/user/tokens/", "/api/v3/admin/accounts/a/tokens/",
		"/api/v4/user", "/api/v3/repos/o/r/%",
	};
	struct route_match m;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (api("GET", paths[i], &m) != ERR_NOTFOUND)
			fail_msg("GET %s did not give 404", paths[i]);
	}
}

static void test_api_every_route_reachable(void **state)
{
	/* no entry shadows another: each pattern with its parameters filled in finds itself */
	for (size_t i = 0; i < api_routes_count; i++) {
		const char *p = api_routes[i].pattern;
		char path[256];
		size_t o = 0;
		struct route_match m;

		while (*p && o + 8 < sizeof(path)) {
			if (*p == '{') {
				memcpy(path + o, "p%2Dq", 5);
				o += 5;
				p = strchr(p, '}') + 1;
			} else {
				path[o++] = *p++;
			}
		}
		path[o] = 0;
		assert_int_equal(api(api_routes[i].method, path, &m), 0);
		assert_ptr_equal(m.route, &api_routes[i]);
		for (int k = 0; k < m.nparams; k++)
			assert_string_equal(m.params[k], "p-q");
		assert_non_null(api_routes[i].handler);
		assert_non_null(api_routes[i].action);
	}
}

/* Every call on a sandbox needs write scope, checked by the dispatcher from the flag: a route
 * under …/diffinery/sandboxes (or /api/v3/user/sandboxes, /api/v3/sandboxes/{id}) without it
 * would let a read-scoped token at a sandbox's credential (issue 11, item 1). */
static void test_sandbox_routes_flagged(void **state)
{
	size_t n = 0;

	for (size_t i = 0; i < api_routes_count; i++) {
		int is_sandbox = strstr(api_routes[i].pattern, "/sandboxes") != NULL;
		if (is_sandbox)
			n++;
		if (is_sandbox != ((api_routes[i].flags & ROUTE_SANDBOX) != 0))
			fail_msg("%s %s: ROUTE_SANDBOX %s", api_routes[i].method,
				 api_routes[i].pattern, is_sandbox ? "missing" : "on a route of no sandbox");
	}
	assert_true(n >= 8);
}

/* {name+} spans the rest of the path: ref names hold '/' */
static void test_rest_param(void **state)
{
	struct route_match m;

	assert_int_equal(match("GET", "/r/o/refs/heads/feature/x", &m), 0);
	assert_ptr_equal(m.route, &table[6]);
	assert_int_equal(m.nparams, 2);
	assert_string_equal(m.params[0], "o");
	assert_string_equal(m.params[1], "heads/feature/x");
	assert_int_equal(match("GET", "/r/o/refs/main", &m), 0);
	assert_string_equal(m.params[1], "main");
	/* decoded as segments are: escapes, and a.b...c stays whole */
	assert_int_equal(match("GET", "/r/o/refs/a%2Db...c/d", &m), 0);
	assert_string_equal(m.params[1], "a-b...c/d");
	/* empty, a NUL or a bad escape: no match */
	assert_int_equal(match("GET", "/r/o/refs/", &m), ERR_NOTFOUND);
	assert_int_equal(match("GET", "/r/o/refs", &m), ERR_NOTFOUND);
	assert_int_equal(match("GET", "/r/o/refs/a%00", &m), ERR_NOTFOUND);
	assert_int_equal(match("GET", "/r/o/refs/a/%zz", &m), ERR_NOTFOUND);
	/* the ordinary parameter before it still takes one segment */
	assert_int_equal(match("GET", "/r/o/p/refs/x", &m), ERR_NOTFOUND);
	/* a {name+} that does not end its pattern matches nothing */
	assert_int_equal(match("GET", "/bad/a/x", &m), ERR_NOTFOUND);
	assert_int_equal(match("GET", "/bad/a/b/x", &m), ERR_NOTFOUND);
	/* longer than a parameter holds: no match */
	char path[ROUTER_PARAM_MAX + 32];
	int w = snprintf(path, sizeof(path), "/r/o/refs/");
	memset(path + w, 'a', ROUTER_PARAM_MAX);
	path[w + ROUTER_PARAM_MAX] = 0;
	assert_int_equal(match("GET", path, &m), ERR_NOTFOUND);
	path[w + ROUTER_PARAM_MAX - 1] = 0;
	assert_int_equal(match("GET", path, &m), 0);
}

/* PUT and GET …/files/{path}: the sandbox's segments as parameters wherever the names are
 * ("files" included), the rest left raw for the handler. */
static void test_api_files_raw(void **state)
{
	struct route_match m;
	char out[32];
	const char *p = "/api/v3/repos/files/files" API_SANDBOXES "/files/files/a%2Fb/c";

	assert_int_equal(api("PUT", p, &m), 0);
	assert_string_equal(m.route->action, "sandbox.file_put");
	assert_int_equal(m.nparams, 3);
	assert_string_equal(m.params[0], "files");
	assert_string_equal(m.params[2], "files");
	assert_string_equal(api_files_raw_rest(p), "a%2Fb/c");
	assert_int_equal(api("GET", p, &m), 0);
	assert_string_equal(m.route->action, "sandbox.file_get");
	/* no file named: no route; a segment that does not decode: none either */
	assert_int_equal(api("GET", "/api/v3/repos/o/r" API_SANDBOXES "/s/files/", &m), ERR_NOTFOUND);
	assert_int_equal(api("GET", "/api/v3/repos/o/r" API_SANDBOXES "/s/files", &m), ERR_NOTFOUND);
	assert_int_equal(api("GET", "/api/v3/repos/o%zz/r" API_SANDBOXES "/s/files/x", &m),
			 ERR_NOTFOUND);
	assert_null(api_files_raw_rest("/api/v3/repos/o/r"));
	/* the rest decodes with '/' allowed, never a NUL */
	assert_int_equal(router_decode("a%2Fb", 5, out, sizeof(out), 1), 0);
	assert_string_equal(out, "a/b");
	assert_int_equal(router_decode("a%2Fb", 5, out, sizeof(out), 0), ERR_INVALID);
	assert_int_equal(router_decode("a%00b", 5, out, sizeof(out), 1), ERR_INVALID);
}

static void test_api_review_routes(void **state)
{
	struct route_match m;

	assert_int_equal(api("GET", "/api/v3/repos/o/r/branches", &m), 0);
	assert_ptr_equal(m.route->handler, api_review_branches);
	assert_int_equal(api("GET", "/api/v3/repos/o/r/commits/agent/session-1", &m), 0);
	assert_ptr_equal(m.route->handler, api_review_commit);
	assert_string_equal(m.params[2], "agent/session-1");
	assert_int_equal(api("GET", "/api/v3/repos/o/r/compare/main...agent/s", &m), 0);
	assert_ptr_equal(m.route->handler, api_review_compare);
	assert_string_equal(m.params[2], "main...agent/s");
	assert_int_equal(api("DELETE", "/api/v3/repos/o/r/git/refs/heads/a/b", &m), 0);
	assert_ptr_equal(m.route->handler, api_review_ref_delete);
	assert_string_equal(m.params[2], "heads/a/b");
	assert_int_equal(api("GET", "/api/v3/repos/o/r/git/refs/heads/a", &m), ERR_METHOD);
	assert_string_equal(m.allow, "DELETE");
	assert_int_equal(api("GET", "/api/v3/repos/o/r/commits/", &m), ERR_NOTFOUND);
	assert_int_equal(api("GET", "/api/v3/repos/o/r/branches/x", &m), ERR_NOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literal),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_six_params),
		cmocka_unit_test(test_percent_decoding),
		cmocka_unit_test(test_decoded_slash_or_nul_never_match),
		cmocka_unit_test(test_malformed_escapes),
		cmocka_unit_test(test_segments_must_line_up),
		cmocka_unit_test(test_405_and_allow),
		cmocka_unit_test(test_result_is_reset),
		cmocka_unit_test(test_param_length_bound),
		cmocka_unit_test(test_decode_segment),
		cmocka_unit_test(test_rest_param),
		cmocka_unit_test(test_api_files_raw),
		cmocka_unit_test(test_api_review_routes),
		cmocka_unit_test(test_api_routes),
		cmocka_unit_test(test_api_405),
		cmocka_unit_test(test_api_404),
		cmocka_unit_test(test_api_every_route_reachable),
		cmocka_unit_test(test_sandbox_routes_flagged),
		cmocka_unit_test(test_allow_holds_whole_methods),
	};

	return cmocka_run_group_tests_name("router", tests, NULL, NULL);
}
