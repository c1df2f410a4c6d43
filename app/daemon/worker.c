/* worker.c: one worker process: what it keeps across requests (struct worker), and its
 * accept loop; each request is dispatch.c's. */
#include <malloc.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <fcgiapp.h>
#include <git2.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/dispatch.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/daemon/worker.h"
#include "sandboxd/lib/proc.h"
#include "sandboxd/common/banned.h"

#define POOL_MAX (256u << 20)

/* What a worker keeps from one request to the next; everything else is the request's. */
struct worker {
	const struct config *cfg;
	FCGX_Request fcgx;
	struct pool pool;
	struct db db;
	struct buf headers, out;   /* the response buffers, cleared for each request */
};

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

/* The request context is made anew for each request, by construction: everything is zero
 * but what points into the worker, so no field of one request can be forgotten into the
 * next. The buffers live in the request while it runs and go back to the worker after. */
static void request_new(struct req *r, struct worker *w)
{
	*r = (struct req){ .fcgx = &w->fcgx, .pool = &w->pool, .cfg = w->cfg, .db = &w->db,
			   .headers = w->headers, .out = w->out };
}

/* What the request leaves: its JSON, its arena, its buffers (a request that needed a lot
 * of memory, a file or a big output, gives it back, so that a worker stays small). */
static void request_end(struct req *r, struct worker *w)
{
	int big = w->pool.used > (4u << 20) || r->out.cap > (4u << 20);

	json_object_put(r->json);
	json_object_put(r->audit_details);
	/* The next request's calls go to the own engine until it loads a sandbox (engine.h). */
	if (engine_use_own(&(struct err){ .msg = "" }))
		log_warn("docker: back to the own engine failed");
	w->headers = r->headers;
	w->out = r->out;
	if (w->out.cap > (1u << 20))
		buf_release(&w->out);
	else
		buf_clear(&w->out);
	buf_clear(&w->headers);
	pool_reset(&w->pool);
	if (big)
		malloc_trim(0);
	log_set_request(NULL);
}

static void worker_init(struct worker *w, const struct config *cfg, int listen_fd)
{
	struct err e;

	git_libgit2_init();
	/* libgit2 only opens local repositories here, never TLS: drop the CA bundle it parsed
	 * at init (about 370 KB of every worker's heap) for a directory without certificates. */
	git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, NULL, cfg->repos_dir);
	w->cfg = cfg;
	db_init(&w->db, cfg->database_url);
	pool_init(&w->pool, POOL_MAX);
	buf_init(&w->headers, 16384);
	buf_init(&w->out, HTTP_OUT_MAX);
	if (engine_init(cfg, &e))
		log_error("docker settings: %s", e.msg);
	FCGX_InitRequest(&w->fcgx, listen_fd, FCGI_FAIL_ACCEPT_ON_INTR);
}

static void worker_cleanup(struct worker *w)
{
	FCGX_Free(&w->fcgx, 0);
	db_close(&w->db);
	engine_cleanup();
	buf_release(&w->headers);
	buf_release(&w->out);
	pool_release(&w->pool);
	git_libgit2_shutdown();
}

int worker_run(const struct config *cfg, int listen_fd)
{
	struct worker w;
	sigset_t term, none;
	struct req r;
	int rc, backoff = 0;

	proc_setup(on_term, NULL); /* accept returns EINTR on SIGTERM */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigemptyset(&none);
	worker_init(&w, cfg, listen_fd);
	log_info("worker ready");

	/* SIGTERM is blocked while a request runs, so it drains the request instead of
	 * interrupting it; it is let in only while the worker waits in accept. */
	sigprocmask(SIG_BLOCK, &term, NULL);
	while (!stopping) {
		metrics_set_state(METRICS_IDLE);
		sigprocmask(SIG_SETMASK, &none, NULL);
		rc = stopping ? -1 : FCGX_Accept_r(&w.fcgx);
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
		metrics_set_state(METRICS_BUSY);
		request_new(&r, &w);
		dispatch(&r, api_routes, api_routes_count);
		/* A running exec handed to the holder: its connection is the holder's now. */
		if (r.handed)
			http_release(&r);
		FCGX_Finish_r(&w.fcgx);
		request_end(&r, &w);
	}
	log_info("worker stopping");
	worker_cleanup(&w);
	return 0;
}
