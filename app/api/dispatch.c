/* dispatch.c: one request, from its FastCGI parameters to its answer and audit row: the
 * route, the caller and the route's demands on it, the body, the handler, and the one
 * place where an error code becomes the error answer (answer()). */
#include <string.h>
#include <strings.h>
#include <time.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/core/audit.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/api/dispatch.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/holder/park.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/lib/randid.h"
#include "sandboxd/http/relay_http.h"
#include "sandboxd/common/banned.h"

/* nginx's $request_id (32 hex) when present, else 16 random bytes in hex. */
static void request_id(struct req *r)
{
	const char *id = http_param(r, "REQUEST_ID");
	size_t n = id ? strlen(id) : 0;
	int ok = n >= 8 && n <= 64;

	for (size_t i = 0; ok && i < n; i++)
		ok = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f') ||
		     (id[i] >= 'A' && id[i] <= 'F') || id[i] == '-';
	if (ok) {
		snprintf(r->request_id, sizeof(r->request_id), "%s", id);
		return;
	}
	/* Without randomness the request still runs, under an id of zeros. */
	if (randid(r->request_id, sizeof(r->request_id), "", 16))
		snprintf(r->request_id, sizeof(r->request_id), "%032d", 0);
}

/* 401s: a credential that failed is a denial; none at all is only a challenge (git asks
 * without credentials first, every time). */
static const char *auth_action(const struct req *r)
{
	if (r->status != 401)
		return "route.unknown";
	return r->auth_failure ? "auth.denied" : "auth.required";
}

static void run_abort_hooks(struct req *r)
{
	for (struct req_cleanup *c = r->on_abort; c; c = c->next)
		c->fn(c->arg);
	r->on_abort = NULL;
}

/* The route's demands on the (resolved) caller: 0 when they are met, else the answer's
 * code. */
static int check_caller(const struct req *r, const struct route *route, struct err *e)
{
	const struct caller *c = &r->caller;

	/* Sandbox routes first: job and sandbox tokens get the one text SPEC §4 gives them. */
	if (c->authenticated && (route->flags & ROUTE_SANDBOX)) {
		if (c->kind == TOKEN_JOB || c->kind == TOKEN_SANDBOX)
			return err_set(e, ERR_DENIED, "job and sandbox tokens can't start sandboxes");
		if (!c->scope_write)
			return err_set(e, ERR_DENIED, "this needs a token with write scope");
		return 0;
	}
	/* A sandbox token is for git only, on public routes too: on GET …/repos/{o}/{r} it
	 * would otherwise read its creator's private repository over REST. */
	if (c->authenticated && c->kind == TOKEN_SANDBOX && !(route->flags & ROUTE_OWN_TOKEN_CHECK))
		return err_set(e, ERR_DENIED, "sandbox tokens can only be used for git");
	if (route->flags & ROUTE_PUBLIC)
		return 0;
	if (!c->authenticated)
		return err_set(e, ERR_AUTH, "authentication required");
	if (route->flags & ROUTE_SITE_ADMIN) {
		if (c->kind == TOKEN_JOB)
			return err_set(e, ERR_DENIED, "job tokens can only be used on their repository");
		if (!c->site_admin)
			return err_set(e, ERR_DENIED, "this needs a site admin");
		if (!c->scope_write)
			return err_set(e, ERR_DENIED, "this needs a token with write scope");
	}
	return 0;
}

/* The one place an error becomes the answer: a handler returns its code, and the
 * dispatcher writes what the code and its err say. */
static void answer(struct req *r, int rc, const struct err *e)
{
	struct err why = { .msg = "" };

	if (!rc || (rc == ERR_HANDED && r->handed))
		return;
	/* Another host's call: the redirect there, or why it cannot go. */
	if (rc == ERR_RELAY && !r->responded) {
		if ((rc = relay_http_redirect(r, &why)) == 0)
			return;
		e = &why;
	}
	if (!r->responded) {
		http_fail(r, rc, e);
		return;
	}
	/* A stream under way (a client that left mid-exec): nothing more reaches the client,
	 * but the audit row says how the request ended. An answer built whole stands as it
	 * is: its status must go with its body. */
	if (!r->streamed) {
		log_error("%s answered, then failed: %s", r->path ? r->path : "-", e->msg);
		return;
	}
	r->status = e->status ? e->status : err_status(rc);
	r->error = pool_strdup(r->pool, e->msg);
}

void request_call(struct req *r, const struct route *route)
{
	struct err e = { .msg = "" };
	int rc = check_caller(r, route, &e);

	if (rc == 0)
		rc = route->handler(r, &e);
	answer(r, rc, &e);
}

/* The body a JSON route wants, parsed into r->json. */
static int read_json(struct req *r, const struct route *route, struct err *e)
{
	size_t limit = route->flags & ROUTE_BIG_BODY ? r->cfg->file_limit / 3 * 4 + 65536
						     : r->cfg->body_limit;
	int rc = http_read_body(r, limit, e);

	/* A file route's body is the file: too big is the file's error. */
	if (rc == ERR_TOOBIG && (route->flags & ROUTE_BIG_BODY))
		return err_box(e, 413, "file too large");
	return rc ? rc : json_parse_object(r->body, r->body_len, &r->json, e);
}

/* Browsers replay HTTP Basic credentials (the /admin page signs in with them) on any
 * request to the site, a cross-site form's POST included. No form can send a Bearer header
 * or a JSON content type, so a call that changes something must carry one of the two
 * (SPEC §8). Git's routes never come here; GET and HEAD change nothing. */
static int check_forgeable(struct req *r, struct err *e)
{
	const char *type = http_param(r, "CONTENT_TYPE");
	size_t n = strlen("application/json");

	if (!r->caller.basic || strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0)
		return 0;
	if (type && strncasecmp(type, "application/json", n) == 0 &&
	    (type[n] == 0 || type[n] == ';' || type[n] == ' '))
		return 0;
	return err_http(e, 415, "a call that changes something needs Content-Type: "
		       "application/json or a Bearer token");
}

/* Runs the matched route: credentials, body, handler. The transaction is open. */
static void run(struct req *r, const struct route *route)
{
	struct err e = { .msg = "" };
	int rc = auth_resolve(r, &e);

	if (rc == ERR_DENIED)
		rc = err_set(&e, ERR_AUTH, "bad credentials");
	if (!rc)
		rc = check_forgeable(r, &e);
	if (!rc)
		rc = check_caller(r, route, &e);
	if (!rc && (route->flags & ROUTE_JSON))
		rc = read_json(r, route, &e);
	if (!rc)
		rc = route->handler(r, &e);
	answer(r, rc, &e);
}

/* Writes the audit row and ends the transaction. A failed request rolls its work back and
 * its row commits on its own; a request whose row cannot be written does not succeed. */
static const char *or_null(const char *s)
{
	return s && *s ? s : NULL;
}

void request_audit_row(struct req *r, const char *action, struct audit_row *a)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	json_add_str(r->audit_details, "method", r->method);
	json_add_str(r->audit_details, "path", r->path);
	if (r->error)
		json_add_str(r->audit_details, "error", r->error);
	if (r->auth_failure)
		json_add_str(r->audit_details, "reason", r->auth_failure);
	*a = (struct audit_row){
		.action = action,
		.status = r->status,
		.account_id = or_null(r->caller.account_id),
		.login = or_null(r->caller.login),
		.token_id = or_null(r->caller.token_id),
		.token_kind = r->caller.kind ? token_kind_name(r->caller.kind) : NULL,
		.repository = r->audit_repo,
		.sandbox_id = r->audit_sandbox,
		.request_id = r->request_id,
		.remote_addr = r->remote_addr,
		.via = r->via,
		.duration_ms = (now.tv_sec - r->started.tv_sec) * 1000LL +
			       (now.tv_nsec - r->started.tv_nsec) / 1000000,
		.details = r->audit_details,
	};
}

void request_finish(struct req *r, const char *action)
{
	struct err e = { .msg = "" };
	int rc;

	/* Relayed to the host that owns it, which writes the one row: nothing of it here. */
	if (r->relay_out) {
		db_rollback(r->db);
		return;
	}
	/* A handler that wrote its rows itself (MCP: one per message) only commits. */
	if (r->audited) {
		if (db_commit(r->db, &e))
			log_error("commit after the request's own audit rows: %s", e.msg);
		return;
	}
	if (r->status >= 400) {
		db_rollback(r->db);
		run_abort_hooks(r);
	}
	struct audit_row row;
	request_audit_row(r, action, &row);
	rc = audit_write(r->db, &row, &e);
	if (rc == 0)
		rc = db_commit(r->db, &e);
	if (rc == 0)
		return;
	db_rollback(r->db);
	if (r->status >= 400 || r->streamed) {
		/* Nothing to undo: a failure, or a git answer already on its way. */
		log_error("audit row lost: %s", e.msg);
		return;
	}
	run_abort_hooks(r);
	buf_clear(&r->headers);
	http_fail(r, rc == ERR_DB ? ERR_DB : ERR_FAIL, &e);
}

/* A request from another host's relay listener (the parameter only that nginx sets): its
 * token checked before anything else reads the request. 1 when it is refused (answered and
 * audited: every denial is), 0 to go on. */
static int relayed(struct req *r)
{
	const char *token = http_param(r, RELAY_HTTP_PARAM);
	struct err e = { .msg = "" };
	int rc;

	if (!token || (rc = relay_http_accept(r, token, &e)) == 0)
		return 0;
	log_warn("%s %s from %s: %s", r->method, r->path, r->remote_addr ? r->remote_addr : "-",
		 e.msg);
	http_fail(r, rc, &e);
	if (db_ensure(r->db, &e) == 0)
		request_finish(r, "relay.denied");
	return 1;
}

/* Counts the request once its answer is made: the row of the route it matched when it
 * arrived (MCP's calls clear r->match as they go), its method and status, and the time
 * since it arrived (a streamed answer's whole run; a built one's up to its sending, which
 * is a copy to nginx's buffers). */
static void count(const struct req *r, size_t route)
{
	metrics_count_request(r->routes, r->nroutes, route, r->method, r->status,
			      clock_us_since(&r->started));
}

void dispatch(struct req *r, const struct route *routes, size_t nroutes)
{
	struct err e = { .msg = "" };
	const char *uri, *q, *action;
	size_t route = nroutes;   /* none matched */
	int rc;

	r->routes = routes;
	r->nroutes = nroutes;
	clock_gettime(CLOCK_MONOTONIC, &r->started);
	park_replay_params(r);
	db_request_start(r->db);
	request_id(r);
	log_set_request(r->request_id);
	r->method = http_param(r, "REQUEST_METHOD");
	uri = http_param(r, "REQUEST_URI");
	r->remote_addr = http_param(r, "REMOTE_ADDR");
	if (!r->method || !uri || uri[0] != '/' || strlen(uri) > 8192) {
		http_error(r, 400, "bad request line");
		goto send;
	}
	q = strchr(uri, '?');
	r->path = q ? pool_strndup(r->pool, uri, (size_t)(q - uri)) : uri;
	r->query = q ? q + 1 : "";
	r->audit_details = json_object_new_object();
	if (!r->path || !r->audit_details) {
		http_error(r, 500, "internal error");
		goto send;
	}
	if (relayed(r))
		goto send;

	rc = router_match(r->routes, r->nroutes, r->method, r->path, &r->match);
	if (rc == 0)
		route = (size_t)(r->match.route - r->routes);
	/* Git requests can last long: they never hold a transaction; like a GET, the only row
	 * they write is their audit row (the hook writes its own per ref). */
	if (rc == 0 && (r->match.route->flags & ROUTE_GIT)) {
		r->git = 1;
		if ((rc = db_ensure(r->db, &e)) == 0)
			rc = r->match.route->handler(r, &e);
		answer(r, rc, &e);
		request_finish(r, r->status == 401 ? auth_action(r)
				  : r->audit_action ? r->audit_action : "route.unknown");
		goto send;
	}
	if (strcmp(r->path, "/mcp") == 0)
		r->via = "mcp";
	/* A GET changes nothing but its audit row, which commits on its own: two round trips
	 * (BEGIN, COMMIT) saved on the most frequent requests, with the same guarantees. */
	if (strcmp(r->method, "GET") == 0 ? db_ensure(r->db, &e) : db_begin(r->db, &e)) {
		http_fail(r, ERR_DB, &e);
		goto send;
	}
	if (rc == 0) {
		run(r, r->match.route);
	} else {
		if (rc == ERR_METHOD)
			http_header(r, "Allow", r->match.allow);
		answer(r, err_set(&e, rc, rc == ERR_NOTFOUND ? "not found" : "method not allowed"), &e);
	}
	action = r->status == 401 || !r->match.route ? auth_action(r) : r->match.route->action;
	request_finish(r, action);
send:
	log_info("%s %s %d %.1fms", r->method ? r->method : "-", r->path ? r->path : "-", r->status,
		 (double)clock_us_since(&r->started) / 1e3);
	/* Before the answer goes: a client that has its answer finds it counted. A parked
	 * call is counted by its replay, a relayed one by the host it went to. */
	if (!r->parked && !r->relay_out)
		count(r, route);
	/* A client gone before its answer: nothing more to do for it. */
	if (!r->streamed && http_send(r))
		log_info("the answer to %s %s did not reach nginx", r->method ? r->method : "-",
			 r->path ? r->path : "-");
}

void request_clear_answer(struct req *r)
{
	/* By construction, as for a new request: what the request is (its connection, arena,
	 * line, body, caller and door) stays, every part of an answer starts at zero. */
	struct req next = { .fcgx = r->fcgx, .pool = r->pool, .cfg = r->cfg, .db = r->db,
			    .started = r->started, .method = r->method, .path = r->path,
			    .query = r->query, .remote_addr = r->remote_addr,
			    .routes = r->routes, .nroutes = r->nroutes, .body = r->body,
			    .body_len = r->body_len, .caller = r->caller,
			    .auth_failure = r->auth_failure, .headers = r->headers, .out = r->out,
			    .git = r->git, .via = r->via, .relayed = r->relayed };

	memcpy(next.request_id, r->request_id, sizeof(next.request_id));
	json_object_put(r->json);
	json_object_put(r->audit_details);
	buf_clear(&next.headers);
	*r = next;
}
