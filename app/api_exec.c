/* api_exec.c: running a command in a sandbox. Each call is `bash -c` on its own, under
 * `timeout -k 5`; the whole process group is killed past the limit; output is capped and
 * its credentials masked as it streams in, so an endless writer costs bounded memory. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "sandboxd/api.h"
#include "sandboxd/capture.h"
#include "sandboxd/docker.h"
#include "sandboxd/exec_stream.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/scripts.h"
#include "sandboxd/banned.h"

#define EXEC_DEFAULT_MS 600000
#define EXEC_MAX_MS 3600000
#define ENV_MAX_VARS 100
#define ENV_VALUE_MAX 32768
#define GRACE_S 5
#define CALL_MS 30000L
/* How long an exec waits for a clone still running. */
#define CLONE_WAIT_MS 180000L

static long long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The token in the clone's credential file, cached per worker: one short exec per
 * sandbox. */
static struct {
	char sandbox[SANDBOX_ID_LEN + 1];
	char token[TOKEN_LEN + 1];
} token_cache[8];
static unsigned token_next;

/* Fills *out with the sandbox's token, or NULL when its credential file holds none of its
 * own (the user may rewrite it). Fails when it cannot tell (the engine or the database
 * did not answer): the caller must not run a command whose output it could not mask. */
int api_sandbox_token(struct db *db, const struct sandbox *s, const char **out, struct err *e)
{
	char hash[TOKEN_HASH_LEN + 1];
	PGresult *res;
	int code = 0, rc;
	/* The credential file git's store helper reads (app/sh/clone.sh). */
	const char *argv[] = { "head", "-c", "4096", SANDBOX_CREDENTIALS, NULL };
	struct sandbox_output g;

	*out = NULL;
	for (int i = 0; i < 8; i++)
		if (strcmp(token_cache[i].sandbox, s->id) == 0) {
			*out = token_cache[i].token;
			return 0;
		}
	if ((rc = sandbox_run(s->container_id, argv, &g, NULL, e)))
		return rc;
	const char *t = strstr(g.out, "dst_");
	if (!t || strlen(t) < TOKEN_LEN || token_classify(t, TOKEN_LEN) != TOKEN_SANDBOX) {
		OPENSSL_cleanse(g.out, sizeof(g.out));
		return 0;
	}
	/* Only the sandbox's own token: the user may rewrite the config, and a look-alike
	 * with a valid checksum must not take the real one's place in the mask. */
	token_hash(t, TOKEN_LEN, hash);
	res = db_exec(db, e, &code, "SELECT 1 FROM tokens WHERE sandbox_id = $1 AND hash = $2", 2,
		      s->id, hash);
	if (!res) {
		OPENSSL_cleanse(g.out, sizeof(g.out));
		return code;
	}
	int ours = PQntuples(res) == 1;
	PQclear(res);
	if (!ours) {
		OPENSSL_cleanse(g.out, sizeof(g.out));
		return 0;
	}
	unsigned i = token_next++ % 8;
	OPENSSL_cleanse(token_cache[i].token, sizeof(token_cache[i].token));
	snprintf(token_cache[i].sandbox, sizeof(token_cache[i].sandbox), "%s", s->id);
	memcpy(token_cache[i].token, t, TOKEN_LEN);
	token_cache[i].token[TOKEN_LEN] = 0;
	OPENSSL_cleanse(g.out, sizeof(g.out));
	*out = token_cache[i].token;
	return 0;
}

/* The exec's cancel test: its client went away (nginx closed the FastCGI connection). */
static int client_gone(void *arg)
{
	return http_client_gone(arg);
}

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

/* The exec's environment: the sandbox's, then the caller's (which may override it). */
static const char **build_env(struct req *r, const struct sandbox *s, const char *repo,
			      json_object *env, struct err *e)
{
	size_t n = env ? (size_t)json_object_object_length(env) : 0, i = 0;
	const char **v = pool_alloc(r->pool, (n + 8) * sizeof(*v));

	if (!v) {
		err_set(e, ERR_NOMEM, "out of memory");
		return NULL;
	}
	v[i++] = pool_printf(r->pool, "SANDBOX_ID=%s", s->id);
	v[i++] = pool_printf(r->pool, "SANDBOX_REPOSITORY=%s", repo);
	v[i++] = pool_printf(r->pool, "SANDBOX_REF=%s", s->ref);
	v[i++] = pool_printf(r->pool, "SANDBOX_COMMIT=%s", s->commit);
	v[i++] = "HOME=/home/sandbox";
	v[i++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	if (env) {
		json_object_object_foreach(env, k, val) {
			if (!valid_env_name(k)) {
				err_set(e, ERR_INVALID, "env name '%.64s' must be letters, digits and "
					"'_', not starting with a digit, at most 256", k);
				return NULL;
			}
			if (!json_object_is_type(val, json_type_string) ||
			    json_object_get_string_len(val) > ENV_VALUE_MAX ||
			    memchr(json_object_get_string(val), 0, (size_t)json_object_get_string_len(val))) {
				err_set(e, ERR_INVALID, "env '%s' must be a string of at most %d bytes "
					"without NUL", k, ENV_VALUE_MAX);
				return NULL;
			}
			v[i++] = pool_printf(r->pool, "%s=%s", k, json_object_get_string(val));
		}
	}
	v[i] = NULL;
	return v;
}

void api_sandbox_error(struct req *r, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	http_verror(r, status, "error", fmt, ap);
	va_end(ap);
}

int api_sandbox_ready(struct req *r, struct sandbox *s)
{
	struct err e;
	int rc = sandbox_clone_wait(r, s, CLONE_WAIT_MS, &e);

	if (rc)
		return http_fail(r, rc, &e) + 1;
	if (strcmp(s->clone_state, "failed") == 0) {
		api_sandbox_error(r, 409, "clone failed: %s", s->clone_error[0] ? s->clone_error
										 : "unknown error");
		return 1;
	}
	if (strcmp(s->clone_state, "done")) {
		/* A client gone reads no answer; the status is for the audit row (as for an
		 * exec). */
		if (http_client_gone(r))
			http_error(r, HTTP_CLIENT_CLOSED, "the client closed the connection");
		else
			api_sandbox_error(r, 409, "the clone is still running; try again");
		return 1;
	}
	return 0;
}

int api_sandbox_exec(struct req *r)
{
	const char *cmd, *cwd = NULL;
	int64_t timeout_ms = EXEC_DEFAULT_MS;
	json_object *env = NULL;
	struct repo repo;
	struct sandbox s;
	struct err e = { "" };
	struct capture cap;
	struct capture_opts copts = CAPTURE_OPTS_INIT;
	struct timespec t0;
	char secs[24], exec_id[DOCKER_ID_MAX];
	int rc;

	if (api_sandbox_access(r, &repo, &s, 1) || auth_need_user_write(r))
		return 0;
	if ((rc = json_field_string(r->json, "cmd", 1, 1 << 20, &cmd, &e)) < 0 ||
	    (rc = json_field_string(r->json, "cwd", 0, 4096, &cwd, &e)) < 0 ||
	    (rc = json_field_int(r->json, "timeoutMs", 0, 1, EXEC_MAX_MS, &timeout_ms, &e)) < 0) {
		api_sandbox_error(r, 400, "%s", e.msg);
		return 0;
	}
	int detach = 0;
	if ((rc = json_field_bool(r->json, "detach", 0, &detach, &e)) < 0) {
		api_sandbox_error(r, 400, "%s", e.msg);
		return 0;
	}
	if (json_object_object_get_ex(r->json, "env", &env) &&
	    !json_object_is_type(env, json_type_null)) {
		if (!json_object_is_type(env, json_type_object) ||
		    json_object_object_length(env) > ENV_MAX_VARS) {
			api_sandbox_error(r, 400, "field 'env' must be an object of at most %d strings",
					  ENV_MAX_VARS);
			return 0;
		}
	} else {
		env = NULL;
	}
	const char *repo_name = pool_printf(r->pool, "%s/%s", repo.owner, repo.name);
	const char **envv = build_env(r, &s, repo_name, env, &e);
	if (!envv) {
		api_sandbox_error(r, 400, "%s", e.msg);
		return 0;
	}
	const char *workdir = !cwd || !*cwd ? "/workspace/repo"
			      : cwd[0] == '/' ? cwd : pool_printf(r->pool, "/workspace/repo/%s", cwd);
	if (api_sandbox_ready(r, &s))
		return 0;
	/* Docker reports a missing working directory inside the output stream; ask first
	 * (a HEAD of the archive API, about 2 ms). */
	if (cwd && *cwd) {
		struct docker_path_stat ps;
		rc = docker_archive_stat(s.container_id, workdir, &ps, CALL_MS, &e);
		if (rc == ERR_NOTFOUND || (rc == 0 && !ps.is_dir)) {
			api_sandbox_error(r, 400, "%s: %s", rc ? "no such directory" : "not a directory",
					  cwd);
			return 0;
		}
		if (rc)
			return http_fail(r, rc, &e);
	}
	/* A running exec counts as activity: the deadline moves past its own limit. */
	snprintf(secs, sizeof(secs), "%lld", (long long)(timeout_ms / 1000 + GRACE_S + r->cfg->idle_timeout));
	if ((rc = db_run(r->db, &e,
			 "UPDATE sandboxes SET last_used_at = now(),"
			 "       idle_stop_at = now() + make_interval(secs => $2::int)"
			 " WHERE id = $1 AND state = 'ready'", 2, s.id, secs)) ||
	    (rc = db_commit(r->db, &e)))
		return http_fail(r, rc, &e);

	const char *token;
	if ((rc = api_sandbox_token(r->db, &s, &token, &e))) {
		struct err e2;
		db_begin(r->db, &e2);
		return http_fail(r, rc, &e);
	}
	capture_init(&cap, &copts);
	/* Output that could not be masked is never shown: fail closed. */
	if (token && (rc = capture_add_token(&cap, token, strlen(token), &e))) {
		struct err e2;
		capture_release(&cap);
		db_begin(r->db, &e2);
		return http_fail(r, rc, &e);
	}
	struct buf masked;
	buf_init(&masked, (1 << 20) + 4096);
	if (capture_mask_text(&cap, cmd, strlen(cmd), &masked, &e) == 0)
		json_add_str(r->audit_details, "cmd", masked.data ? masked.data : "");
	buf_release(&masked);
	if (cwd)
		json_add_str(r->audit_details, "cwd", workdir);
	if (detach) {
		capture_release(&cap);
		return api_exec_detach(r, &s, envv, workdir, cmd, timeout_ms);
	}

	char ms[24];
	snprintf(ms, sizeof(ms), "%lld", (long long)timeout_ms);
	/* app/sh/exec.sh: the limit and the tree kill (SPEC.md §4 Exec). */
	const char *argv[] = { "bash", "-c", sh_exec, "sandboxd-exec", ms, cmd, NULL };
	struct docker_exec_opts o = { .cmd = argv, .env = envv, .workdir = workdir,
				      .attach_stdin = 1 };
	struct docker_exec_io io = { .sink = capture_feed_cb, .sink_arg = &cap,
				     .cancel = client_gone, .cancel_arg = r };
	struct docker_exec_state st = { 0, -1, 0 };
	struct exec_stream xs = { 0 };
	int streaming = exec_stream_wanted(r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = docker_exec_create(s.container_id, &o, exec_id, CALL_MS, &e);
	/* Streamed from here on: errors before this point are ordinary JSON answers. */
	if (!rc && streaming) {
		exec_stream_begin(&xs, r, &cap);
		io.sink = exec_stream_sink;
		io.sink_arg = &xs;
		io.cancel = exec_stream_tick;
		io.cancel_arg = &xs;
	}
	/* The service's own deadline, past timeout's: a tree that escaped it still ends. */
	if (!rc && !xs.broken)
		rc = docker_exec_start(exec_id, &io, (long)timeout_ms + (GRACE_S + 10) * 1000L, &e);
	if (io.cancelled || xs.broken) {
		/* The call's end closed the exec's stdin: the wrapper ends the process tree. No
		 * one reads an answer; the status is for the audit row (nginx logs 499 too). */
		capture_release(&cap);
		log_info("exec in %s: the client went away after %lld ms; its process tree is "
			 "being ended", s.id, ms_since(&t0));
		json_add_int(r->audit_details, "duration_ms", ms_since(&t0));
		if (streaming)
			json_add_bool(r->audit_details, "streamed", 1);
		db_begin(r->db, &e);
		http_error(r, HTTP_CLIENT_CLOSED, "the client closed the connection");
		return 0;
	}
	if (!rc || io.timed_out)
		rc = docker_exec_inspect(exec_id, &st, CALL_MS, &e);
	long long duration = ms_since(&t0);
	int timed_out = st.exit_code == 124 || io.timed_out;
	if (rc && !io.timed_out) {
		capture_release(&cap);
		db_begin(r->db, &e);
		if (streaming) {
			log_warn("exec in %s: %s", s.id, e.msg);
			exec_stream_fail(&xs, "the exec failed: the container engine did not answer");
			return 0;
		}
		if (strstr(e.msg, "no such file or directory") || strstr(e.msg, "not a directory")) {
			api_sandbox_error(r, 400, "no such directory: %s", workdir);
			return 0;
		}
		return http_fail(r, rc, &e);
	}
	/* Background jobs of a command that ended by itself keep running; past the limit the
	 * wrapper has ended the whole tree. */
	if (streaming) {
		int exit_code = timed_out ? 124 : st.exit_code;
		json_object *res = json_object_new_object();
		json_add_int(res, "exitCode", exit_code);
		json_add_bool(res, "timedOut", timed_out);
		json_add_int(res, "durationMs", duration);
		exec_stream_end(&xs, res);
		capture_release(&cap);
		json_add_bool(r->audit_details, "streamed", 1);
		json_add_int(r->audit_details, "exit_code", exit_code);
		json_add_int(r->audit_details, "duration_ms", duration);
		json_add_bool(r->audit_details, "timed_out", timed_out);
		if (db_begin(r->db, &e) || sandbox_touch(r, &s, &e))
			log_warn("exec in %s: marking the call: %s", s.id, e.msg);
		return 0;
	}

	struct buf out, errb;
	uint64_t nout = 0, nerr = 0;
	int tout = 0, terr = 0;
	buf_init(&out, capture_text_max(&copts));
	buf_init(&errb, capture_text_max(&copts));
	rc = capture_finish(&cap, CAPTURE_STDOUT, &out, &nout, &tout, &e);
	if (!rc)
		rc = capture_finish(&cap, CAPTURE_STDERR, &errb, &nerr, &terr, &e);
	capture_release(&cap);
	if ((rc = rc ? rc : db_begin(r->db, &e)) == 0)
		rc = sandbox_touch(r, &s, &e);
	if (rc) {
		buf_release(&out);
		buf_release(&errb);
		return http_fail(r, rc, &e);
	}
	int exit_code = timed_out ? 124 : st.exit_code;
	json_object *res = json_object_new_object();
	json_add_int(res, "exitCode", exit_code);
	json_object_object_add(res, "stdout", json_object_new_string_len(out.data ? out.data : "", (int)out.len));
	json_object_object_add(res, "stderr", json_object_new_string_len(errb.data ? errb.data : "", (int)errb.len));
	json_add_bool(res, "timedOut", timed_out);
	json_add_bool(res, "truncated", tout || terr);
	json_add_int(res, "durationMs", duration);
	json_add_int(res, "stdoutBytes", (int64_t)nout);
	json_add_int(res, "stderrBytes", (int64_t)nerr);
	buf_release(&out);
	buf_release(&errb);
	json_add_int(r->audit_details, "exit_code", exit_code);
	json_add_int(r->audit_details, "duration_ms", duration);
	json_add_bool(r->audit_details, "timed_out", timed_out);
	http_json(r, 200, res);
	return 0;
}
