/* router.h: method + path pattern to handler. Patterns are literal segments and {name}
 * parameters, e.g. "/api/v3/repos/{owner}/{repo}"; a parameter matches one non-empty
 * segment, which is percent-decoded (a decoded '/' or NUL makes the path not match).
 * A parameter written {name+} must end its pattern and matches the rest of the path, one
 * or more segments with their '/' (a ref name such as heads/feature/x), decoded the same
 * way. */
#ifndef SANDBOXD_ROUTER_H
#define SANDBOXD_ROUTER_H
#include <stddef.h>
#include "sandboxd/common/err.h"

#define ROUTER_MAX_PARAMS 6
#define ROUTER_PARAM_MAX 256

struct req;

enum route_flags {
	ROUTE_PUBLIC = 1,     /* no credentials needed (the handler decides what anonymous gets) */
	ROUTE_JSON = 2,       /* a JSON object body is required (an empty body is {}) */
	ROUTE_SITE_ADMIN = 4, /* a site admin's write-scoped personal token */
	ROUTE_OWN_TOKEN_CHECK = 8, /* the handler refuses sandbox tokens with its own text */
	ROUTE_BIG_BODY = 16,  /* a file in base64: the body may reach the file limit's size */
	/* A call on a sandbox (create included): a write-scoped personal token (SPEC §4 Use; a
	 * sandbox holds a credential that can push, so even reading it is writing). Job and
	 * sandbox tokens get "job and sandbox tokens can't start sandboxes"; the handler still
	 * checks the write role on the repository (api_sandbox_access). */
	ROUTE_SANDBOX = 32,
	/* Git smart HTTP: no transaction is held (a clone or push can last long), the caller
	 * is the handler's to resolve (Basic challenges), its audit verb the handler's. */
	ROUTE_GIT = 64,
};

struct route_match;
struct route {
	const char *method;   /* "*": any (the handler answers 405 itself) */
	const char *pattern;
	int (*handler)(struct req *r, struct err *e);
	const char *action;   /* audit verb, e.g. "repo.create" */
	int flags;
	/* For paths a pattern cannot say (git's /{owner}/{name}.git/…): decides instead of the
	 * pattern (which then only documents the route), filling m's parameters when m is not
	 * NULL; 1 when path is the route's. */
	int (*match)(const char *path, struct route_match *m);
};

struct route_match {
	const struct route *route;
	int nparams;
	char params[ROUTER_MAX_PARAMS][ROUTER_PARAM_MAX];
	char allow[64];       /* methods of the path, for 405: "GET, PATCH" */
};

/* Percent-decodes one path segment s[0..n) into out (outsz bytes). Returns 0, or -1 when it
 * is malformed, too long, or decodes to a '/' or NUL (which no name may hold). */
int router_decode_segment(const char *s, size_t n, char *out, size_t outsz)
	__attribute__((warn_unused_result));
/* The same, a decoded '/' allowed when slash_ok (a raw file's path: %2F separates too). */
int router_decode(const char *s, size_t n, char *out, size_t outsz, int slash_ok)
	__attribute__((warn_unused_result));

/* Finds the route for method and path (no query string). Returns 200 with m->route set,
 * 404 when no pattern matches the path, 405 when patterns match but not the method (with
 * m->allow filled). */
int router_match(const struct route *table, size_t n, const char *method, const char *path,
		 struct route_match *m) __attribute__((warn_unused_result));

#endif
