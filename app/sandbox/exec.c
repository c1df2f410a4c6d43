/* exec.c: the exec service (exec.h): the request's command as a spec, the sandbox's token for
 * masking, and attached runs through the sandbox's agent (agent_client.h: it keeps the
 * limit and ends the whole tree) or the Docker engine (app/sandbox/sh/exec.sh in the container does
 * it). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/sandbox/exec.h"
#include "sandboxd/proto/gitcred.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/lib/pool.h"
#include "sandboxd/sandbox/scripts.h"
#include "sandboxd/sandbox/secrets.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/common/banned.h"

#define TOKEN_CACHE 8

static int valid_env_name(const char *k)
{
	size_t n = strlen(k);

	if (n == 0 || n > 256 || (k[0] >= '0' && k[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= 'a' && k[i] <= 'z') ||
		      (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
			return 0;
	return 1;
}

/* The caller's env object after the sandbox's variables (which it may override). */
static int add_env(struct pool *p, json_object *env, const char **v, size_t *i, struct err *e)
{
	json_object_object_foreach(env, k, val) {
		if (!valid_env_name(k))
			return err_set(e, ERR_INVALID, "env name '%.64s' must be letters, digits "
				       "and '_', not starting with a digit, at most 256", k);
		if (!json_object_is_type(val, json_type_string) ||
		    json_object_get_string_len(val) > EXEC_ENV_VALUE_MAX ||
		    memchr(json_object_get_string(val), 0,
			   (size_t)json_object_get_string_len(val)))
			return err_set(e, ERR_INVALID, "env '%s' must be a string of at most %d "
				       "bytes without NUL", k, EXEC_ENV_VALUE_MAX);
		if (!(v[(*i)++] = pool_printf(p, "%s=%s", k, json_object_get_string(val))))
			return err_set(e, ERR_NOMEM, "out of memory");
	}
	return 0;
}

int exec_spec_parse(struct pool *p, json_object *body, const struct sandbox *s,
		    const char *repo, const struct secrets_set *sec, struct exec_spec *x,
		    struct err *e)
{
	json_object *env = NULL;
	size_t n = 0, i = 0;
	int rc;

	memset(x, 0, sizeof(*x));
	x->timeout_ms = EXEC_DEFAULT_MS;
	if ((rc = json_field_string(body, "cmd", 1, EXEC_CMD_MAX, &x->cmd, e)) < 0 ||
	    (rc = json_field_string(body, "cwd", 0, EXEC_CWD_MAX, &x->cwd, e)) < 0 ||
	    (rc = json_field_int(body, "timeoutMs", 0, 1, EXEC_MAX_MS, &x->timeout_ms, e)) < 0 ||
	    (rc = json_field_bool(body, "detach", 0, &x->detach, e)) < 0)
		return ERR_INVALID;
	if (json_object_object_get_ex(body, "env", &env) &&
	    !json_object_is_type(env, json_type_null)) {
		if (!json_object_is_type(env, json_type_object) ||
		    json_object_object_length(env) > EXEC_ENV_MAX_VARS)
			return err_set(e, ERR_INVALID, "field 'env' must be an object of at most %d "
				       "strings", EXEC_ENV_MAX_VARS);
		n = (size_t)json_object_object_length(env);
	} else {
		env = NULL;
	}
	if ((rc = sandbox_env(p, s, repo, n + (sec ? sec->n : 0), &x->env, &i, e)))
		return rc;
	/* The secrets it asked for at create, after the sandbox's variables and before the
	 * caller's (which may override them). */
	for (size_t k = 0; sec && k < sec->n; k++)
		if (!(x->env[i++] = pool_printf(p, "%s=%s", sec->names[k], sec->values[k])))
			return err_set(e, ERR_NOMEM, "out of memory");
	if (env && (rc = add_env(p, env, x->env, &i, e)))
		return rc;
	x->env[i] = NULL;
	x->workdir = !x->cwd || !*x->cwd ? "/workspace/repo"
		     : x->cwd[0] == '/' ? x->cwd : pool_printf(p, "/workspace/repo/%s", x->cwd);
	return x->workdir ? 0 : err_set(e, ERR_NOMEM, "out of memory");
}

int exec_check_workdir(const struct sandbox *s, const struct exec_spec *x, struct err *e)
{
	struct box_path_stat ps;
	int rc;

	if (!x->cwd || !*x->cwd)
		return 0;
	/* A HEAD of the archive API: about 2 ms. */
	rc = box_path_stat(s->container_id, x->workdir, &ps, BOX_CALL_MS, e);
	if (rc == ERR_NOTFOUND)
		return err_set(e, ERR_NOTFOUND, "no such directory: %s", x->cwd);
	if (rc == 0 && !ps.is_dir)
		return err_set(e, ERR_NOTDIR, "not a directory: %s", x->cwd);
	return rc;
}

int exec_mark_running(struct db *db, const struct sandbox *s, struct exec_spec *x,
		      int idle_timeout, struct err *e)
{
	char limit[24], idle[24];
	int code = 0;
	PGresult *res;

	/* Its limit, its grace, then the sandbox's own idle limit (PATCH) or the setting. */
	snprintf(limit, sizeof(limit), "%lld", (long long)(x->timeout_ms / 1000 + EXEC_GRACE_S));
	snprintf(idle, sizeof(idle), "%d", idle_timeout);
	res = db_exec(db, e, &code,
		      "UPDATE sandboxes SET last_used_at = now(),"
		      "       busy_until = greatest(busy_until, now() + make_interval(secs => $2::int)),"
		      "       idle_stop_at = greatest(busy_until, now() + make_interval(secs => $2::int))"
		      "                      + make_interval(secs =>"
		      "                          coalesce(idle_timeout_seconds, $3::int))"
		      " WHERE id = $1 AND state = 'ready'"
		      " RETURNING now() + make_interval(secs => $2::int) = busy_until, busy_until::text",
		      3, s->id, limit, idle);
	if (!res)
		return code;
	/* Its own hold, when it is the longest: the one its end may give back. */
	x->hold[0] = 0;
	if (PQntuples(res) == 1 && strcmp(db_val(res, 0, 0), "t") == 0)
		snprintf(x->hold, sizeof(x->hold), "%s", db_val(res, 0, 1));
	PQclear(res);
	/* Visible to the reaper at once, but not worth a WAL flush of its own: the exec's
	 * audit row, committed in full, flushes it with it; only a database crash while the
	 * command runs could lose it (the hold then ends early). One fsync less per exec. */
	return db_commit_lazy(db, e);
}

void exec_mark_done(struct db *db, const struct sandbox *s, const struct exec_spec *x)
{
	struct err e;

	/* Only the hold this exec set: one a later, longer exec set stays. */
	if (x->hold[0] && db_run(db, &e, "UPDATE sandboxes SET busy_until = now()"
				       " WHERE id = $1 AND busy_until::text = $2", 2, s->id, x->hold))
		log_warn("exec in %s: ending its hold: %s", s->id, e.msg);
}

/* The token in the clone's credential file, cached per worker: one short exec per
 * sandbox. */
static struct {
	char sandbox[SANDBOX_ID_LEN + 1];
	char token[TOKEN_LEN + 1];
} token_cache[TOKEN_CACHE];
static unsigned token_next;

/* Whether t (TOKEN_LEN bytes) is s's own token in the database. */
static int token_is_ours(struct db *db, const struct sandbox *s, const char *t, int *ours,
			 struct err *e)
{
	char hash[TOKEN_HASH_LEN + 1];
	int code = 0;
	PGresult *res;

	token_hash(t, TOKEN_LEN, hash);
	res = db_exec(db, e, &code, "SELECT 1 FROM tokens WHERE sandbox_id = $1 AND hash = $2",
		      2, s->id, hash);
	if (!res)
		return code;
	*ours = PQntuples(res) == 1;
	PQclear(res);
	return 0;
}

/* The first 4 KiB of the clone's config, read through the agent into g; non-zero when it
 * could not (no agent, a symbolic link, ...): the caller asks Docker. */
static int agent_config(const struct sandbox *s, const char *network, struct sandbox_output *g)
{
	struct err e;
	int rc = sbagent_read(s, network, SANDBOX_GIT_CONFIG, g, &e);

	if (rc)
		log_info("sandbox %s: the git config through the agent: %s", s->id, e.msg);
	return rc;
}

/* Into the cache, its slot's old token wiped; *out the cached copy. */
static void token_keep(const struct sandbox *s, const char *t, const char **out)
{
	unsigned i = token_next++ % TOKEN_CACHE;

	OPENSSL_cleanse(token_cache[i].token, sizeof(token_cache[i].token));
	snprintf(token_cache[i].sandbox, sizeof(token_cache[i].sandbox), "%s", s->id);
	memcpy(token_cache[i].token, t, TOKEN_LEN);
	token_cache[i].token[TOKEN_LEN] = 0;
	*out = token_cache[i].token;
}

/* The token sealed in s's row (023), opened: it must be one of ours, whole. */
static int token_unseal(const struct sandbox *s, const char **out, struct err *e)
{
	struct pool p;
	char *t = NULL;
	int rc;

	pool_init(&p, 4096);
	rc = secrets_open(&p, s->id, SANDBOX_TOKEN_SEALED_AS, s->token_sealed, &t, e);
	if (!rc && (strlen(t) != TOKEN_LEN || strncmp(t, "dst_", 4)))
		rc = err_set(e, ERR_FAIL, "sandbox %s: its sealed token is not a sandbox token", s->id);
	if (!rc)
		token_keep(s, t, out);
	if (t)
		OPENSSL_cleanse(t, strlen(t));
	pool_release(&p);
	return rc;
}

int exec_token_for(struct db *db, const struct sandbox *s, const struct exec_spec *x,
		   const char **out, struct err *e)
{
	/* The clone's config holds it as an Authorization header (app/sandbox/sh/clone.sh), written
	 * right after the clone: within the first 4 KiB that sandbox_run keeps. */
	const char *argv[] = { "head", "-c", "4096", SANDBOX_GIT_CONFIG, NULL };
	struct sandbox_output g;
	char t[TOKEN_LEN + 1];
	int rc = 0, ours = 0;

	*out = NULL;
	for (int i = 0; i < TOKEN_CACHE; i++)
		if (strcmp(token_cache[i].sandbox, s->id) == 0) {
			*out = token_cache[i].token;
			return 0;
		}
	/* Sealed in its row when the service has a secrets key: nothing to ask the sandbox. */
	if (s->token_sealed[0] && secrets_configured())
		return token_unseal(s, out, e);
	/* Through the agent when it answers (a connection, no Docker exec), else as always. */
	if ((!x || !x->agent || agent_config(s, x->network, &g)) &&
	    (rc = sandbox_run(s->container_id, argv, &g, NULL, e)))
		return rc;
	/* Only the sandbox's own token: the user may rewrite the config, and a look-alike with
	 * a valid checksum must not take the real one's place in the mask. */
	if (gitcred_token(g.out, g.len, t))
		rc = token_is_ours(db, s, t, &ours, e);
	if (!rc && ours)
		token_keep(s, t, out);
	OPENSSL_cleanse(g.out, sizeof(g.out));
	OPENSSL_cleanse(t, sizeof(t));
	return rc;
}

int exec_token(struct db *db, const struct sandbox *s, const char **out, struct err *e)
{
	return exec_token_for(db, s, NULL, out, e);
}

int exec_capture_init(struct capture *c, const char *token, const struct secrets_set *sec,
		      struct err *e)
{
	int rc = 0;

	capture_init(c, NULL);
	if (token)
		rc = capture_add_token(c, token, strlen(token), e);
	for (size_t k = 0; !rc && sec && k < sec->n; k++)
		rc = capture_add_secret(c, sec->values[k], strlen(sec->values[k]), e);
	if (rc)
		capture_release(c);
	return rc;
}

/* Through Docker exec of app/sandbox/sh/exec.sh. */
static int docker_run(const struct sandbox *s, const struct exec_spec *x,
		      const struct exec_hooks *h, struct exec_result *out, struct err *e)
{
	char ms[24];
	struct timespec t0;
	int rc;

	snprintf(ms, sizeof(ms), "%lld", (long long)x->timeout_ms);
	/* app/sandbox/sh/exec.sh: the limit and the tree kill (SPEC.md §4 Exec). */
	const char *argv[] = { "bash", "-c", sh_exec, "sandboxd-exec", ms, x->cmd, NULL };
	struct box_exec bx = { .argv = argv, .env = x->env, .workdir = x->workdir,
			       .stdin_tied = 1, .sink = h->sink, .sink_arg = h->sink_arg,
			       .cancel = h->cancel, .cancel_arg = h->cancel_arg,
			       .started = h->started, .started_arg = h->started_arg };

	out->backend = "docker";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The service's own deadline, past the script's: a tree that escaped it still ends. */
	rc = box_exec(s->container_id, &bx, (long)x->timeout_ms + (EXEC_GRACE_S + 10) * 1000L, e);
	out->duration_ms = clock_ms_since(&t0);
	if (bx.cancelled)
		return err_set(e, ERR_CANCELLED, "the caller stopped waiting");
	if (rc && !bx.timed_out)
		return rc;
	out->timed_out = bx.exit_code == 124 || bx.timed_out;
	out->exit_code = out->timed_out ? 124 : bx.exit_code;
	return 0;
}

/* The caller's started hook, and whether the agent said the command started. */
struct agent_started {
	const struct exec_hooks *h;
	int started;
};

static int agent_started_cb(void *arg)
{
	struct agent_started *a = arg;

	a->started = 1;
	return a->h->started ? a->h->started(a->h->started_arg) : 0;
}

/* Through the agent; *fallback set (with out->agent_error) when Docker exec must run it. */
static int agent_run(const struct sandbox *s, const struct exec_spec *x,
		     const struct exec_hooks *h, struct exec_result *out, int *fallback,
		     struct err *e)
{
	struct agent_conn c = { .fd = -1 };
	struct agent_started st = { h, 0 };
	struct agent_exit ax;
	struct timespec t0;
	struct err ea;
	int rc;

	*fallback = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((rc = sbagent_connect(s, x->network, &c, &ea))) {
		snprintf(out->agent_error, sizeof(out->agent_error), "%.255s", ea.msg);
		out->agent_code = rc;
		return 0;
	}
	const struct agent_exec_req r = { .cmd = x->cmd, .cwd = x->workdir, .env = x->env,
					  .timeout_ms = x->timeout_ms,
					  .clone_state = x->clone_wait_ms ? SANDBOX_CLONE_STATE : NULL,
					  .clone_wait_ms = x->clone_wait_ms };
	const struct agent_exec_hooks ah = { .started = agent_started_cb, .started_arg = &st,
					     .sink = h->sink, .sink_arg = h->sink_arg,
					     .cancel = h->cancel, .cancel_arg = h->cancel_arg,
					     .handover = h->handover, .handover_arg = h->handover_arg,
					     .handover_after_ms = h->handover_after_ms,
					     .handover_at_output = h->handover_at_output };
	rc = agent_exec(&c, &r, &ah, &ax, &ea);
	agent_close(&c);
	out->duration_ms = clock_ms_since(&t0);
	/* Refused or broken before the command started (busy, garbage, gone): nothing ran. */
	if (rc && !st.started && (rc == ERR_FAIL || rc == ERR_LIMIT || rc == ERR_DENIED)) {
		snprintf(out->agent_error, sizeof(out->agent_error), "%.255s", ea.msg);
		out->agent_code = rc;
		return 0;
	}
	*fallback = 0;
	out->backend = "agent";
	out->handed = !rc && ax.handed;
	if (out->handed)
		return 0;
	if (rc == ERR_CANCELLED)
		return err_set(e, ERR_CANCELLED, "the caller stopped waiting");
	if (rc == ERR_FAIL)
		return err_box(e, 502, "the sandbox's agent broke off the exec: %s", ea.msg);
	/* Refusals before the start, in the words the worker's own checks use: the clone
	 * (409, api_sandbox_ready's texts), the working directory (400, exec_check_workdir's). */
	const char *why = strncmp(ea.msg, "agent: ", 7) ? ea.msg : ea.msg + 7;
	if (rc == ERR_EXISTS && !st.started)
		return err_box(e, 409, "%s", why);
	if ((rc == ERR_NOTFOUND || rc == ERR_NOTDIR) && !st.started)
		return err_box(e, 400, "%s", why);
	if (rc) {
		*e = ea;
		return rc;
	}
	out->timed_out = ax.timed_out;
	out->exit_code = ax.timed_out ? 124 : ax.exit_code;
	return 0;
}

int exec_agent_refusal(const struct sandbox *s, int code, const char *why, struct err *e)
{
	const char *msg = strncmp(why, "agent: ", 7) ? why : why + 7;

	log_info("exec in %s: the agent did not take it: %s", s->id, why);
	if (code == ERR_LIMIT)
		return err_box(e, 429, "%s%.400s", strncmp(msg, "agent busy", 10) ? "agent busy: " : "",
			       msg);
	return err_box(e, 502, "the sandbox's agent cannot be reached: %.400s", msg);
}

int exec_agent_only(const struct sandbox *s, const struct exec_spec *x)
{
	return x->agent && strlen(s->agent_key) == SANDBOX_AGENT_KEY_HEX;
}

int exec_run(const struct sandbox *s, const struct exec_spec *x, const struct exec_hooks *h,
	     struct exec_result *out, struct err *e)
{
	struct timespec t0;
	int rc, fallback = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(out, 0, sizeof(*out));
	out->backend = "docker";
	if (!x->agent || (!(rc = agent_run(s, x, h, out, &fallback, e)) && fallback)) {
		/* With the agent on, a sandbox that has one runs nothing through Docker exec: its
		 * agent busy or gone is the sandbox's own doing, and a command it pushed back into
		 * a worker would hold that worker for the command's life (issue 32 A.2, decision
		 * 0086). Only a sandbox made before the agent (no key) still goes through Docker. */
		if (exec_agent_only(s, x)) {
			out->backend = "agent";
			return exec_agent_refusal(s, out->agent_code, out->agent_error, e);
		}
		if (x->clone_wait_ms) {
			out->clone_pending = 1;
			return 0;
		}
		if (out->agent_error[0])
			log_info("exec in %s: through Docker exec: the agent: %s", s->id,
				 out->agent_error);
		rc = docker_run(s, x, h, out, e);
	}
	/* Execs that ran, to their end or their time limit; not those refused before (nor
	 * those handed over: the holder counts them at their end). */
	if (rc == 0 && !out->handed)
		metrics_observe_exec(clock_us_since(&t0));
	return rc;
}

json_object *exec_answer(const struct exec_result *res, struct capture *cap, struct err *e)
{
	struct buf out[2];
	uint64_t bytes[2] = { 0, 0 };
	int cut[2] = { 0, 0 }, rc = 0;
	json_object *o = NULL;

	buf_init(&out[0], capture_text_max(&cap->opts));
	buf_init(&out[1], capture_text_max(&cap->opts));
	for (int i = 0; i < 2 && !rc; i++)
		rc = capture_finish(cap, i + 1, &out[i], &bytes[i], &cut[i], e);
	if (!rc && (o = json_object_new_object())) {
		json_add_int(o, "exitCode", res->exit_code);
		json_object_object_add(o, "stdout", json_object_new_string_len(
			out[0].data ? out[0].data : "", (int)out[0].len));
		json_object_object_add(o, "stderr", json_object_new_string_len(
			out[1].data ? out[1].data : "", (int)out[1].len));
		json_add_bool(o, "timedOut", res->timed_out);
		json_add_bool(o, "truncated", cut[0] || cut[1]);
		json_add_int(o, "durationMs", res->duration_ms);
		json_add_int(o, "stdoutBytes", (int64_t)bytes[0]);
		json_add_int(o, "stderrBytes", (int64_t)bytes[1]);
	} else if (!rc) {
		err_set(e, ERR_NOMEM, "out of memory");
	}
	buf_release(&out[0]);
	buf_release(&out[1]);
	return o;
}

json_object *exec_stream_result(const struct exec_result *res)
{
	json_object *o = json_object_new_object();

	json_add_int(o, "exitCode", res->exit_code);
	json_add_bool(o, "timedOut", res->timed_out);
	json_add_int(o, "durationMs", res->duration_ms);
	return o;
}

void exec_audit_result(json_object *details, const struct exec_result *res)
{
	json_add_int(details, "exit_code", res->exit_code);
	json_add_int(details, "duration_ms", res->duration_ms);
	json_add_bool(details, "timed_out", res->timed_out);
}
