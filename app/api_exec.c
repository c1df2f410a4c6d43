/* api_exec.c: POST …/sandboxes/{id}/exec. The handler checks the caller and the request
 * and answers; running the command is the exec service's (exec.h): attached, streamed as
 * NDJSON (exec_stream.h) or detached (api_detach.c). */
#include <string.h>
#include "sandboxd/api.h"
#include "sandboxd/api_sandbox.h"
#include "sandboxd/capture.h"
#include "sandboxd/exec.h"
#include "sandboxd/exec_stream.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/banned.h"

/* How long an exec waits for a clone still running. */
#define CLONE_WAIT_MS 180000L

int api_sandbox_ready(struct req *r, struct sandbox *s, struct err *e)
{
	int rc = sandbox_clone_wait(r, s, CLONE_WAIT_MS, e);

	if (rc)
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

/* The exec's cancel test: its client went away (nginx closed the FastCGI connection). */
static int client_gone(void *arg)
{
	return http_client_gone(arg);
}

/* Which backend ran it, and why not the agent when it was asked: every run, also one that
 * failed (a silent fallback must not pass for the agent). */
static void audit_backend(struct req *r, const struct exec_result *x)
{
	json_add_str(r->audit_details, "backend", x->backend ? x->backend : "docker");
	if (x->agent_error[0])
		json_add_str(r->audit_details, "agent_error", x->agent_error);
}

static void audit_result(struct req *r, const struct exec_result *x)
{
	json_add_int(r->audit_details, "exit_code", x->exit_code);
	json_add_int(r->audit_details, "duration_ms", x->duration_ms);
	json_add_bool(r->audit_details, "timed_out", x->timed_out);
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

/* Runs x and answers with the whole result. */
static int run_attached(struct req *r, const struct sandbox *s, const struct exec_spec *x,
			struct capture *cap, struct err *e)
{
	struct exec_hooks h = { .sink = capture_feed_cb, .sink_arg = cap, .cancel = client_gone,
				.cancel_arg = r };
	struct exec_result res;
	struct buf out[2];
	uint64_t bytes[2] = { 0, 0 };
	int cut[2] = { 0, 0 }, rc;

	buf_init(&out[0], capture_text_max(&cap->opts));
	buf_init(&out[1], capture_text_max(&cap->opts));
	rc = exec_run(s, x, &h, &res, e);
	audit_backend(r, &res);
	if (rc) {
		if (rc == ERR_CANCELLED)
			json_add_int(r->audit_details, "duration_ms", res.duration_ms);
		goto out;
	}
	if ((res.exit_code == 126 || res.exit_code == 137) && (rc = ended_meanwhile(r, s, e)))
		goto out;
	for (int i = 0; i < 2 && !rc; i++)
		rc = capture_finish(cap, i + 1, &out[i], &bytes[i], &cut[i], e);
	exec_mark_done(r->db, s, x);
	if (rc || (rc = db_begin(r->db, e)) || (rc = sandbox_touch(r, s, e)))
		goto out;
	json_object *o = json_object_new_object();
	json_add_int(o, "exitCode", res.exit_code);
	json_object_object_add(o, "stdout", json_object_new_string_len(
		out[0].data ? out[0].data : "", (int)out[0].len));
	json_object_object_add(o, "stderr", json_object_new_string_len(
		out[1].data ? out[1].data : "", (int)out[1].len));
	json_add_bool(o, "timedOut", res.timed_out);
	json_add_bool(o, "truncated", cut[0] || cut[1]);
	json_add_int(o, "durationMs", res.duration_ms);
	json_add_int(o, "stdoutBytes", (int64_t)bytes[0]);
	json_add_int(o, "stderrBytes", (int64_t)bytes[1]);
	audit_result(r, &res);
	http_json(r, 200, o);
out:
	buf_release(&out[0]);
	buf_release(&out[1]);
	return rc;
}

static int begin_stream(void *arg)
{
	struct exec_stream *xs = arg;

	return exec_stream_begin(xs, xs->r, xs->cap);
}

/* Runs x and answers as NDJSON: errors before the engine took the exec are ordinary JSON
 * answers; after that, the last line says what went wrong. */
static int run_streamed(struct req *r, const struct sandbox *s, const struct exec_spec *x,
			struct capture *cap, struct err *e)
{
	struct exec_stream xs = { .r = r, .cap = cap };
	struct exec_hooks h = { .started = begin_stream, .started_arg = &xs,
				.sink = exec_stream_sink, .sink_arg = &xs,
				.cancel = exec_stream_tick, .cancel_arg = &xs };
	struct exec_result res;
	int rc = exec_run(s, x, &h, &res, e);

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
	json_object *o = json_object_new_object();
	json_add_int(o, "exitCode", res.exit_code);
	json_add_bool(o, "timedOut", res.timed_out);
	json_add_int(o, "durationMs", res.duration_ms);
	/* The last line could not be written: the client went away at the very end; the
	 * command's result stands and is audited. */
	if (exec_stream_end(&xs, o))
		log_info("exec in %s: the client left before the result line", s->id);
	audit_result(r, &res);
	exec_mark_done(r->db, s, x);
	if (db_begin(r->db, e) || sandbox_touch(r, s, e))
		log_warn("exec in %s: marking the call: %s", s->id, e->msg);
	return 0;
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

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) || (rc = auth_need_user_write(r, e)))
		return rc;
	if ((rc = secrets_for_sandbox(r->db, r->pool, s.id, &sec, e)))
		return rc;
	rc = exec_spec_parse(r->pool, r->json, &s,
			     pool_printf(r->pool, "%s/%s", repo.owner, repo.name), &sec, &x, e);
	if (rc == ERR_INVALID)
		return err_boxed(e, 400);
	x.agent = r->cfg->agent;
	x.network = r->cfg->sandbox_network;
	if (rc || (rc = api_sandbox_ready(r, &s, e)))
		goto out;
	if ((rc = exec_check_workdir(&s, &x, e)) == ERR_NOTFOUND || rc == ERR_NOTDIR)
		return err_boxed(e, 400);
	/* Committed: no transaction stays open while the command runs (up to an hour). */
	if (rc || (rc = exec_mark_running(r->db, &s, &x, r->cfg->idle_timeout, e)) ||
	    (rc = exec_token_for(r->db, &s, &x, &token, e)) || (rc = exec_capture_init(&cap, token, &sec, e)))
		goto out;
	have_cap = 1;
	audit_command(r, &cap, &x);
	if (x.detach)
		rc = api_exec_detach(r, &s, &x, e);
	else if (exec_stream_wanted(r))
		rc = run_streamed(r, &s, &x, &cap, e);
	else
		rc = run_attached(r, &s, &x, &cap, e);
	if (rc && rc != ERR_CANCELLED && !r->responded) {
		int ended = ended_meanwhile(r, &s, e);
		rc = ended ? ended : rc;
	}
out:
	if (have_cap)
		capture_release(&cap);
	/* The audit row goes in a transaction of its own, begun after the run. */
	if (!r->db->in_tx) {
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
