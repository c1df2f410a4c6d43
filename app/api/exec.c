/* api_exec.c: POST …/sandboxes/{id}/exec. The handler checks the caller and the request
 * and answers; running the command is the exec service's (exec.h): attached, streamed as
 * NDJSON (exec_stream.h) or detached (api_detach.c). */
#include <signal.h>
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/sandbox.h"
#include "sandboxd/core/audit.h"
#include "sandboxd/api/dispatch.h"
#include "sandboxd/proto/capture.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/sandbox/exec.h"
#include "sandboxd/sandbox/exec_slots.h"
#include "sandboxd/http/exec_stream.h"
#include "sandboxd/holder/handover.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/holder/park.h"
#include "sandboxd/common/banned.h"

/* How long an exec waits for a clone still running. */
#define CLONE_WAIT_MS 180000L

/* The exec's cancel test, and the clone wait's: its client went away (nginx closed the
 * FastCGI connection). */
static int client_gone(void *arg)
{
	return http_client_gone(arg);
}

int api_sandbox_ready_body(struct req *r, struct sandbox *s, size_t unread, struct err *e)
{
	int rc;

	/* A replay (park.h) looks once: its wait was the holder's. */
	if (r->replay_gone)
		return err_set(e, ERR_CANCELLED, "the client closed the connection");
	if (strcmp(s->clone_state, "pending") == 0 && holder_may(r) && !r->replay) {
		if ((rc = sandbox_clone_wait(r->db, r->cfg, s, 0, NULL, NULL, e)))
			return rc;
		if (strcmp(s->clone_state, "pending") == 0 &&
		    (rc = park_call(r, s, unread, CLONE_WAIT_MS, e)) <= 0)
			return rc ? rc : ERR_HANDED;
	}
	if ((rc = sandbox_clone_wait(r->db, r->cfg, s, r->replay ? 0 : CLONE_WAIT_MS,
				      client_gone, r, e)))
		return rc;
	if (strcmp(s->clone_state, "failed") == 0)
		return err_box(e, 409, "clone failed: %s",
			       s->clone_error[0] ? s->clone_error : "unknown error");
	if (strcmp(s->clone_state, "done")) {
		/* A client gone reads no answer; the status is for the audit row (as for an
		 * exec). */
		if (http_client_gone(r))
			return err_set(e, ERR_CANCELLED, "the client closed the connection");
		return err_box(e, 409, "the clone is still running; try again");
	}
	return 0;
}

/* A close that raced the exec: the engine's error, or the 126 and 137 of a container
 * removed under the command, is the sandbox's end and not the command's. sandbox_end
 * commits the row before it removes the container, so the row already says so: 410 as for
 * any call on a closed sandbox, and no engine text. 0 when the sandbox is still ready. */
static int ended_meanwhile(struct req *r, const struct sandbox *s, struct err *e)
{
	struct sandbox now;
	struct err ignored;

	if (sandbox_load(r->db, s->repository_id, s->id, &now, &ignored) ||
	    strcmp(now.state, "ready") == 0)
		return 0;
	return err_http(e, 410, "sandbox is %s", now.state);
}

/* Which backend ran it, and why not the agent when it was asked: every run, also one that
 * failed (a silent fallback must not pass for the agent). */
static void audit_backend(struct req *r, const struct exec_result *x)
{
	json_add_str(r->audit_details, "backend", x->backend ? x->backend : "docker");
	if (x->agent_error[0])
		json_add_str(r->audit_details, "agent_error", x->agent_error);
}

/* The command as stored: the sandbox token's other forms masked here (audit.c masks every
 * token of ours in its raw form), and the working directory. */
static void audit_command(struct req *r, const struct capture *cap, const struct exec_spec *x)
{
	struct buf masked;
	struct err e;

	buf_init(&masked, EXEC_CMD_MAX + 4096);
	if (capture_mask_text(cap, x->cmd, strlen(x->cmd), &masked, &e) == 0)
		json_add_str(r->audit_details, "cmd", masked.data ? masked.data : "");
	buf_release(&masked);
	if (x->cwd)
		json_add_str(r->audit_details, "cwd", x->workdir);
}

/* What the hand-over to the holder needs (hand_over). */
struct hand {
	struct req *r;
	const struct sandbox *s;
	const struct exec_spec *x;
	const char *token;
	const struct secrets_set *sec;
	int streamed;
	long long *slot;           /* the exec's slot, 0 once given back */
	long long t0;              /* CLOCK_MONOTONIC ms before the run: its durationMs */
};

static void fault(struct req *r, const char *where)
{
	if (strcmp(r->cfg->fault_handover, where) == 0) {
		log_warn("SANDBOXD_FAULT_HANDOVER=%s: the worker dies here", where);
		raise(SIGKILL);
	}
}

static int hand_fill(struct hand *h, long long id, struct handover_wire *w)
{
	struct req *r = h->r;

	*w = (struct handover_wire){ .fcgi_id = http_fcgi_id(r), .streamed = (uint32_t)h->streamed,
				     .held_id = id, .request_started_ms = clock_ms_of(&r->started),
				     .exec_started_ms = h->t0, .timeout_ms = h->x->timeout_ms,
				     .idle_timeout = r->cfg->idle_timeout,
				     .awaiting_start = h->x->clone_wait_ms > 0,
				     .clone_wait_ms = h->x->clone_wait_ms,
				     .mcp = r->rpc_id != NULL, .batch = r->batch != NULL,
				     .batch_len = r->batch ? (uint32_t)strlen(r->batch) : 0 };
	return str_copy(w->rpc_id, sizeof(w->rpc_id), r->rpc_id ? r->rpc_id : "") ||
	       str_copy(w->sandbox_id, sizeof(w->sandbox_id), h->s->id) ||
	       str_copy(w->request_id, sizeof(w->request_id), r->request_id) ||
	       str_copy(w->token, sizeof(w->token), h->token);
}

/* The exec service's handover hook: the command runs; the holder takes the rest (README
 * "The holder"). Its row to be is committed first, so that an exec is never without one,
 * whoever dies when. Non-zero: this worker keeps the exec, as without a holder. */
static int hand_over(void *arg, int agent_fd)
{
	struct hand *h = arg;
	struct req *r = h->r;
	struct handover_wire w;
	struct audit_row row;
	struct err e;
	long long id;

	if (!holder_may(r))
		return 1;
	json_add_str(r->audit_details, "backend", "agent");
	if (h->streamed)
		json_add_bool(r->audit_details, "streamed", 1);
	request_audit_row(r, r->match.route->action, &row);
	row.sandbox_id = h->s->id;
	if (audit_hold(r->db, &row, h->x->hold, &id, &e)) {
		log_warn("exec in %s: kept by its worker: %s", h->s->id, e.msg);
		return 1;
	}
	/* Its slot goes with the held row from now on: the holder's end of it, or the reaper's. */
	if (h->x->slot && exec_slot_held(r->db, h->x->slot, id, &e))
		log_warn("exec in %s: its slot stays to its expiry: %s", h->s->id, e.msg);
	fault(r, "before");
	if (hand_fill(h, id, &w) ||
	    handover_send(r->cfg->holder_socket, http_fcgi_fd(r), agent_fd, &w, h->sec, r->batch,
			  &e)) {
		log_warn("exec in %s: kept by its worker: %s", h->s->id, e.msg);
		if (db_run(r->db, &e, "DELETE FROM held_execs WHERE id = $1", 1,
			   pool_printf(r->pool, "%lld", id)))
			log_warn("exec in %s: its held row stays for the reaper: %s", h->s->id,
				 e.msg);
		return 1;
	}
	fault(r, "after");
	/* The holder answers and audits; this worker lets the connection go (worker.c). */
	r->handed = r->audited = r->responded = r->streamed = 1;
	r->status = 200;
	return 0;
}

/* exec_run, and once more after this worker waited for the clone when the agent could not
 * take an exec that was to wait for it (exec.h: clone_pending). */
static int run(struct req *r, struct sandbox *s, const struct exec_spec *x,
	       const struct exec_hooks *h, struct exec_result *res, struct err *e)
{
	struct exec_spec now;
	int rc = exec_run(s, x, h, res, e);

	if (rc || !res->clone_pending)
		return rc;
	log_info("exec in %s: the agent could not wait for the clone: %s", s->id, res->agent_error);
	now = *x;
	now.clone_wait_ms = 0;
	if ((rc = api_sandbox_ready(r, s, e)))
		return rc;
	rc = exec_check_workdir(s, &now, e);
	if (rc == ERR_NOTFOUND || rc == ERR_NOTDIR)
		return err_boxed(e, 400);
	return rc ? rc : exec_run(s, &now, h, res, e);
}

/* In the request's transaction, with its audit row: the hold's end, the idle deadline. */
static int mark_done_touch(struct req *r, const struct sandbox *s, const struct exec_spec *x,
			   struct err *e)
{
	exec_mark_done(r->db, s, x);
	return sandbox_touch(r->db, r->cfg->idle_timeout, s, e);
}

/* The exec's slot given back as soon as its command ended, committed at once (no
 * transaction is open here: a refusal's rollback must not keep it). */
static void slot_back(struct req *r, struct hand *h)
{
	exec_slot_release(r->db, *h->slot);
	*h->slot = 0;
}

/* The slot of an exec about to start: its limit, its grace, a wait for the clone and a
 * margin. Past a cap, 429 with Retry-After. */
static int slot_take(struct req *r, const struct sandbox *s, struct exec_spec *x,
		     struct err *e)
{
	const struct exec_slot_caps caps = { r->cfg->execs_per_sandbox, r->cfg->execs_per_account,
					     0 };
	int64_t secs = x->timeout_ms / 1000 + x->clone_wait_ms / 1000 + EXEC_GRACE_S +
		       EXEC_SLOT_MARGIN_S;
	int rc = exec_slot_take(r->db, s, r->caller.account_id, r->request_id, secs, &caps,
				&x->slot, e);

	/* Detached execs that ended unread still count: asked of the agent, once, past a cap. */
	if (rc == ERR_LIMIT && exec_slots_refresh(r->db, s, x->network) > 0)
		rc = exec_slot_take(r->db, s, r->caller.account_id, r->request_id, secs, &caps,
				    &x->slot, e);
	if (rc == ERR_LIMIT)
		json_add_str(r->audit_details, "refused", "exec_cap");
	return rc;
}

/* Runs x and answers with the whole result. */
static int run_attached(struct req *r, struct sandbox *s, const struct exec_spec *x,
			struct capture *cap, struct hand *hand, struct err *e)
{
	struct exec_hooks h = { .sink = capture_feed_cb, .sink_arg = cap, .cancel = client_gone,
				.cancel_arg = r, .handover = hand_over, .handover_arg = hand,
				.handover_after_ms = r->cfg->hold_after_ms };
	struct exec_result res;
	json_object *o;
	int rc = run(r, s, x, &h, &res, e);

	if (!rc && res.handed)
		return 0;
	slot_back(r, hand);
	audit_backend(r, &res);
	if (rc) {
		if (rc == ERR_CANCELLED)
			json_add_int(r->audit_details, "duration_ms", res.duration_ms);
		return rc;
	}
	if ((res.exit_code == 126 || res.exit_code == 137) && (rc = ended_meanwhile(r, s, e)))
		return rc;
	o = exec_answer(&res, cap, e);
	/* The hold's end, the idle deadline and the audit row: one transaction, one commit. */
	if (o && !(rc = db_begin(r->db, e)))
		rc = mark_done_touch(r, s, x, e);
	if (!o || rc) {
		json_object_put(o);
		return o ? rc : ERR_NOMEM;
	}
	exec_audit_result(r->audit_details, &res);
	http_json(r, 200, o);
	return 0;
}

static int begin_stream(void *arg)
{
	struct exec_stream *xs = arg;

	return exec_stream_begin(xs, xs->r, xs->cap);
}

/* Runs x and answers as NDJSON: errors before the engine took the exec are ordinary JSON
 * answers; after that, the last line says what went wrong. */
static int run_streamed(struct req *r, struct sandbox *s, const struct exec_spec *x,
			struct capture *cap, struct hand *hand, struct err *e)
{
	struct exec_stream xs = { .r = r, .cap = cap };
	struct exec_hooks h = { .started = begin_stream, .started_arg = &xs,
				.sink = exec_stream_sink, .sink_arg = &xs,
				.cancel = exec_stream_tick, .cancel_arg = &xs,
				.handover = hand_over, .handover_arg = hand,
				.handover_after_ms = r->cfg->hold_after_ms, .handover_at_output = 1 };
	struct exec_result res;
	int rc = run(r, s, x, &h, &res, e);

	if (!rc && res.handed)
		return 0;
	slot_back(r, hand);
	audit_backend(r, &res);
	json_add_bool(r->audit_details, "streamed", 1);
	if (rc == ERR_CANCELLED || xs.broken)
		json_add_int(r->audit_details, "duration_ms", res.duration_ms);
	if (xs.broken && !rc)
		rc = err_set(e, ERR_CANCELLED, "the client went away");
	if (rc && r->responded && rc != ERR_CANCELLED) {
		log_warn("exec in %s: %s", s->id, e->msg);
		exec_stream_fail(&xs, res.backend && strcmp(res.backend, "agent") == 0
				      ? "the exec failed: the sandbox's agent broke off the exec"
				      : "the exec failed: the container engine did not answer");
		return 0;
	}
	if (rc)
		return rc;
	/* The last line could not be written: the client went away at the very end; the
	 * command's result stands and is audited. */
	if (exec_stream_end(&xs, exec_stream_result(&res)))
		log_info("exec in %s: the client left before the result line", s->id);
	exec_audit_result(r->audit_details, &res);
	if (db_begin(r->db, e) || mark_done_touch(r, s, x, e))
		log_warn("exec in %s: marking the call: %s", s->id, e->msg);
	return 0;
}

/* Whether this exec can be handed to the holder (hand_over's own conditions), which an
 * exec on a clone still running then is before it starts. */
static int handed_early(struct req *r, const struct sandbox *s, const struct exec_spec *x)
{
	return r->cfg->agent && holder_may(r) && !x->detach &&
	       strlen(s->agent_key) == SANDBOX_AGENT_KEY_HEX;
}

/* The clone done, or else (when the holder can take it) the wait left to the agent and
 * the holder: one look at the clone's state, and no worker waits for it (README "The
 * holder"). Otherwise this worker waits (api_sandbox_ready). */
static int exec_ready(struct req *r, struct sandbox *s, struct exec_spec *x, struct err *e)
{
	int rc;

	if (strcmp(s->clone_state, "pending") == 0 && handed_early(r, s, x)) {
		if ((rc = sandbox_clone_wait(r->db, r->cfg, s, 0, NULL, NULL, e)))
			return rc;
		if (strcmp(s->clone_state, "pending") == 0) {
			x->clone_wait_ms = CLONE_WAIT_MS;
			return 0;
		}
	}
	return api_sandbox_ready(r, s, e);
}

int api_sandbox_ready(struct req *r, struct sandbox *s, struct err *e)
{
	return api_sandbox_ready_body(r, s, 0, e);
}

int api_sandbox_exec(struct req *r, struct err *e)
{
	struct repo repo;
	struct sandbox s;
	struct exec_spec x;
	struct capture cap;
	struct secrets_set sec;
	const char *token = NULL;
	int rc, have_cap = 0;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) || (rc = auth_user_write(&r->caller, e)))
		return rc;
	if ((rc = secrets_for_sandbox(r->db, r->pool, s.id, &sec, e)))
		return rc;
	rc = exec_spec_parse(r->pool, r->json, &s,
			     pool_printf(r->pool, "%s/%s", repo.owner, repo.name), &sec, &x, e);
	if (rc == ERR_INVALID)
		return err_boxed(e, 400);
	x.agent = r->cfg->agent;
	x.network = sandbox_network(r->cfg, &s);
	if (rc || (rc = exec_ready(r, &s, &x, e)))
		goto out;
	if (!x.clone_wait_ms &&
	    ((rc = exec_check_workdir(&s, &x, e)) == ERR_NOTFOUND || rc == ERR_NOTDIR))
		return err_boxed(e, 400);
	/* The caps (exec_slots.h), then committed with the hold: no transaction stays open
	 * while the command runs (up to an hour). */
	if (rc || (rc = slot_take(r, &s, &x, e)) ||
	    (rc = exec_mark_running(r->db, &s, &x, r->cfg->idle_timeout, e)) ||
	    (rc = exec_token_for(r->db, &s, &x, &token, e)) || (rc = exec_capture_init(&cap, token, &sec, e)))
		goto out;
	have_cap = 1;
	audit_command(r, &cap, &x);
	struct hand hand = { r, &s, &x, token, &sec, exec_stream_wanted(r), &x.slot, clock_ms() };
	if (x.detach) {
		if (!(rc = api_exec_detach(r, &s, &x, e)))
			x.slot = 0;        /* the detached exec's now */
	} else if (hand.streamed)
		rc = run_streamed(r, &s, &x, &cap, &hand, e);
	else
		rc = run_attached(r, &s, &x, &cap, &hand, e);
	if (rc && rc != ERR_CANCELLED && !r->responded) {
		int ended = ended_meanwhile(r, &s, e);
		rc = ended ? ended : rc;
	}
out:
	/* Past a cap or the agent's own slots: when to try again (SPEC §4 Exec). */
	if (rc == ERR_LIMIT && !r->responded) {
		char after[16];
		snprintf(after, sizeof(after), "%d", EXEC_SLOT_RETRY_S);
		http_header(r, "Retry-After", after);
	}
	if (have_cap)
		capture_release(&cap);
	/* A slot still held here: its exec never started (or, detached, did not start). */
	if (x.slot && !r->handed)
		exec_slot_release(r->db, x.slot);
	/* The audit row goes in a transaction of its own, begun after the run (the holder
	 * writes a handed exec's). */
	if (!r->db->in_tx && !r->handed) {
		struct err e2;
		if (db_begin(r->db, &e2))
			log_warn("exec in %s: %s", s.id, e2.msg);
	}
	if (rc == ERR_CANCELLED) {
		/* The run's end closed the exec's stdin: the container side ends the process
		 * tree. No one reads an answer; the status is for the audit row (nginx logs 499
		 * too). */
		log_info("exec in %s: the client went away; its process tree is being ended", s.id);
		return err_set(e, ERR_CANCELLED, "the client closed the connection");
	}
	return rc;
}
