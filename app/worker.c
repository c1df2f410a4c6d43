/* worker.c: the request loop of one worker and the dispatch of one request. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <git2.h>
#include "sandboxd/api.h"
#include "sandboxd/audit.h"
#include "sandboxd/dispatch.h"
#include "sandboxd/auth.h"
#include "sandboxd/docker.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/randid.h"
#include "sandboxd/worker.h"
#include "sandboxd/banned.h"

#define POOL_MAX (256u << 20)

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

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

/* The one place an error becomes the answer: a handler returns its code, and unless it
 * has already answered (a stream under way), the dispatcher writes what the code and its
 * err say. */
static void answer(struct req *r, int rc, const struct err *e)
{
	if (rc && !r->responded)
		http_fail(r, rc, e);
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

/* Runs the matched route: credentials, body, handler. The transaction is open. */
static void run(struct req *r, const struct route *route)
{
	struct err e = { .msg = "" };
	int rc = auth_resolve(r, &e);

	if (rc == ERR_DENIED)
		rc = err_set(&e, ERR_AUTH, "bad credentials");
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
void request_finish(struct req *r, const char *action)
{
	struct err e = { .msg = "" };
	int rc;

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
	rc = audit_request(r, action, &e);
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

static void handle(struct req *r)
{
	struct err e = { .msg = "" };
	const char *uri, *q, *action;
	struct git_route git;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &r->started);
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

	/* Git requests can last long: they never hold a transaction; like a GET, the only row
	 * they write is their audit row (the hook writes its own per ref). */
	if (githttp_match(r->path, r->query, &git)) {
		if (db_ensure(r->db, &e)) {
			r->git = 1;
			http_fail(r, ERR_DB, &e);
			goto send;
		}
		answer(r, api_git(r, &git, &e), &e);
		request_finish(r, r->status == 401 ? auth_action(r) : api_git_action(&git));
		goto send;
	}
	rc = router_match(api_routes, api_routes_count, r->method, r->path, &r->match);
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
	log_info("%s %s %d", r->method ? r->method : "-", r->path ? r->path : "-", r->status);
	if (!r->streamed)
		http_send(r);
}

void request_clear_answer(struct req *r)
{
	json_object_put(r->json);
	json_object_put(r->audit_details);
	r->json = NULL;
	r->audit_details = NULL;
	r->audit_repo = NULL;
	r->audit_sandbox = NULL;
	r->on_abort = NULL;
	r->status = 0;
	r->responded = 0;
	r->error = NULL;
	memset(&r->match, 0, sizeof(r->match));
	buf_clear(&r->headers);
}

/* The request context is made anew for each request, by construction: everything is zero
 * but what the worker keeps across requests (its FastCGI request, arena, settings, database
 * connection, and the two response buffers, cleared), so no field of one request can be
 * forgotten into the next. */
static void reset(struct req *r)
{
	struct req keep = { .fcgx = r->fcgx, .pool = r->pool, .cfg = r->cfg, .db = r->db,
			    .headers = r->headers, .out = r->out };

	json_object_put(r->json);
	json_object_put(r->audit_details);
	/* A request that needed a lot of memory (a file, a big output) gives it back, so that
	 * a worker stays small between requests. */
	int big = r->pool->used > (4u << 20) || r->out.cap > (4u << 20);
	if (keep.out.cap > (1u << 20))
		buf_release(&keep.out);
	else
		buf_clear(&keep.out);
	buf_clear(&keep.headers);
	*r = keep;
	pool_reset(r->pool);
	if (big)
		malloc_trim(0);
	log_set_request(NULL);
}

int worker_run(const struct config *cfg, int listen_fd)
{
	struct sigaction sa;
	sigset_t term, none;
	FCGX_Request fx;
	struct pool pool;
	struct db db;
	struct req r;
	int rc, backoff = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term; /* no SA_RESTART: accept must return EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigemptyset(&none);

	git_libgit2_init();
	/* libgit2 only opens local repositories here, never TLS: drop the CA bundle it parsed
	 * at init (about 370 KB of every worker's heap) for a directory without certificates. */
	git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, NULL, cfg->repos_dir);
	db_init(&db, cfg->database_url);
	pool_init(&pool, POOL_MAX);
	memset(&r, 0, sizeof(r));
	r.fcgx = &fx;
	r.pool = &pool;
	r.cfg = cfg;
	r.db = &db;
	buf_init(&r.headers, 16384);
	buf_init(&r.out, HTTP_OUT_MAX);
	struct docker_conf dc = { cfg->docker_host, cfg->docker_ca[0] ? cfg->docker_ca : NULL,
				  cfg->docker_cert[0] ? cfg->docker_cert : NULL,
				  cfg->docker_key[0] ? cfg->docker_key : NULL };
	struct err de;
	if (docker_init(&dc, &de))
		log_error("docker settings: %s", de.msg);
	FCGX_InitRequest(&fx, listen_fd, FCGI_FAIL_ACCEPT_ON_INTR);
	log_info("worker ready");

	/* SIGTERM is blocked while a request runs, so it drains the request instead of
	 * interrupting it; it is let in only while the worker waits in accept. */
	sigprocmask(SIG_BLOCK, &term, NULL);
	while (!stopping) {
		sigprocmask(SIG_SETMASK, &none, NULL);
		rc = stopping ? -1 : FCGX_Accept_r(&fx);
		sigprocmask(SIG_BLOCK, &term, NULL);
		if (rc < 0) {
			if (stopping)
				break;
			/* Out of descriptors or a broken socket: back off, never spin. */
			log_warn("accept failed: %d", rc);
			backoff = backoff ? (backoff < 1000 ? backoff * 2 : 1000) : 10;
			usleep((useconds_t)backoff * 1000);
			continue;
		}
		backoff = 0;
		handle(&r);
		FCGX_Finish_r(&fx);
		reset(&r);
	}
	log_info("worker stopping");
	FCGX_Free(&fx, 0);
	db_close(&db);
	docker_cleanup();
	buf_release(&r.headers);
	buf_release(&r.out);
	pool_release(&pool);
	git_libgit2_shutdown();
	return 0;
}
