/* sandbox.c: using and ending sandboxes: loading one, its environment, its clone's state,
 * short internal commands in it, ending it (creating one is sandbox_create.c). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/common/banned.h"

#define STATE_DIR "/workspace/.sandboxd"

void sandbox_remove_container(const char *cid)
{
	struct err e;
	int rc = cid[0] ? box_remove(cid, BOX_CALL_MS, &e) : 0;

	if (rc && rc != ERR_NOTFOUND)
		log_warn("removing container %.12s: %s", cid, e.msg);
}

static int collect_sink(void *arg, int stream, const char *data, size_t len)
{
	struct sandbox_output *c = arg;

	if (stream == 1) {
		size_t take = len < sizeof(c->out) - 1 - c->len ? len : sizeof(c->out) - 1 - c->len;
		memcpy(c->out + c->len, data, take);
		c->len += take;
		c->out[c->len] = 0;
	}
	return 0;
}

int sandbox_run(const char *container, const char *const *argv, struct sandbox_output *c,
		int *exit_code, struct err *e)
{
	return sandbox_run_env(container, argv, NULL, c, exit_code, e);
}

int sandbox_run_env(const char *container, const char *const *argv, const char *const *env,
		    struct sandbox_output *c, int *exit_code, struct err *e)
{
	struct box_exec bx = { .argv = argv, .env = env, .sink = collect_sink, .sink_arg = c };
	int rc;

	c->len = 0;
	c->out[0] = 0;
	if ((rc = box_exec(container, &bx, BOX_CALL_MS, e)))
		return rc;
	if (exit_code)
		*exit_code = bx.exit_code;
	return 0;
}

int sandbox_end(struct db *db, const struct sandbox *s, const char *state, const char *reason,
		struct err *e)
{
	int rc;

	/* The row first: once it says ended, nobody (the reaper included) reads the missing
	 * container as a failure, and a container that outlives a failed removal is an orphan
	 * that the reaper removes on its next pass. */
	rc = db_run(db, e,
		    "UPDATE tokens SET revoked_at = now()"
		    " WHERE sandbox_id = $1 AND revoked_at IS NULL", 1, s->id);
	if (!rc)
		rc = db_run(db, e,
			    "UPDATE sandboxes SET state = $2, end_reason = $3, ended_at = now(),"
			    "       agent_key = NULL, token_sealed = NULL"
			    " WHERE id = $1 AND state IN ('starting', 'ready')",
			    3, s->id, state, reason);
	/* Visible to the other connections (the reaper's) before the container goes. */
	if (!rc && db->in_tx && !(rc = db_commit(db, e)))
		rc = db_begin(db, e);
	if (rc)
		return rc;
	sandbox_remove_container(s->container_id);
	return 0;
}

int sandbox_env(struct pool *p, const struct sandbox *s, const char *repo, size_t extra,
		const char ***out, size_t *n, struct err *e)
{
	const char **v = extra < 1024 ? pool_alloc(p, (7 + extra) * sizeof(*v)) : NULL;
	size_t i = 0;

	if (!v)
		return err_set(e, ERR_NOMEM, "out of memory");
	v[i++] = pool_printf(p, "SANDBOX_ID=%s", s->id);
	v[i++] = pool_printf(p, "SANDBOX_REPOSITORY=%s", repo);
	v[i++] = pool_printf(p, "SANDBOX_REF=%s", s->ref);
	v[i++] = pool_printf(p, "SANDBOX_COMMIT=%s", s->commit);
	/* The home of the user its container was made with; asked of the engine only for a
	 * sandbox made before 026. */
	v[i++] = pool_printf(p, "HOME=%s", s->home[0] ? s->home : boxuser_home());
	v[i++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	v[i] = NULL;
	for (size_t k = 0; k < i; k++)
		if (!v[k])
			return err_set(e, ERR_NOMEM, "out of memory");
	*out = v;
	*n = i;
	return 0;
}

int sandbox_load(struct db *db, const char *repo_id, const char *id, struct sandbox *out,
		 struct err *e)
{
	PGresult *res;
	int code = 0;

	memset(out, 0, sizeof(*out));
	res = db_exec(db, e, &code,
		      "SELECT s.id, s.repository_id, s.account_id, a.login, s.ref, s.commit_sha,"
		      "       s.state, s.clone_state, coalesce(s.clone_error, ''),"
		      "       coalesce(s.container_id, ''), rfc3339(s.created_at),"
		      "       rfc3339(s.last_used_at), rfc3339(s.idle_stop_at),"
		      "       coalesce(s.agent_key, ''), coalesce(s.saved_ref, ''),"
		      "       coalesce(s.image, ''), coalesce(s.egress, ''),"
		      "       coalesce(s.network, ''), coalesce(s.end_reason, ''),"
		      "       coalesce(s.nano_cpus, 0), coalesce(s.memory_bytes, 0),"
		      "       coalesce(s.disk_bytes, 0), coalesce(s.engine, ''),"
		      "       coalesce(d.relay_url, ''), coalesce(s.token_sealed, ''),"
		      "       coalesce(host(s.agent_ip), ''), coalesce(s.home, ''),"
		      "       s.isolation, coalesce(s.runtime, '')"
		      "  FROM sandboxes s JOIN accounts a ON a.id = s.account_id"
		      "  LEFT JOIN docker_engines d ON d.name = s.engine"
		      " WHERE s.id = $1 AND s.repository_id = $2",
		      2, id, repo_id);
	if (!res)
		return code;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOTFOUND, "sandbox not found");
	}
	/* The schema bounds each value within its field: one that does not fit is an error,
	 * never a silently shorter id. */
	int cut = 0;
	char *f[] = { out->id, out->repository_id, out->account_id, out->creator, out->ref,
		      out->commit, out->state, out->clone_state, out->clone_error,
		      out->container_id, out->created_at, out->last_used_at, out->idle_stop_at,
		      out->agent_key, out->saved_ref, out->image, out->egress, out->network };
	size_t n[] = { sizeof(out->id), sizeof(out->repository_id), sizeof(out->account_id),
		       sizeof(out->creator), sizeof(out->ref), sizeof(out->commit),
		       sizeof(out->state), sizeof(out->clone_state), sizeof(out->clone_error),
		       sizeof(out->container_id), sizeof(out->created_at),
		       sizeof(out->last_used_at), sizeof(out->idle_stop_at),
		       sizeof(out->agent_key), sizeof(out->saved_ref), sizeof(out->image),
		       sizeof(out->egress), sizeof(out->network) };
	size_t nf = sizeof(n) / sizeof(n[0]);
	for (size_t i = 0; i < nf; i++)
		cut |= str_copy(f[i], n[i], db_val(res, 0, i)) != 0;
	/* A reason may carry the engine's words (a failed start): shown cut, never refused. */
	snprintf(out->end_reason, sizeof(out->end_reason), "%s", db_val(res, 0, nf));
	cut |= num_parse(db_val(res, 0, nf + 1), 0, INT64_MAX, &out->nano_cpus) != 0;
	cut |= num_parse(db_val(res, 0, nf + 2), 0, INT64_MAX, &out->memory) != 0;
	cut |= num_parse(db_val(res, 0, nf + 3), 0, INT64_MAX, &out->disk) != 0;
	cut |= str_copy(out->engine, sizeof(out->engine), db_val(res, 0, nf + 4)) != 0;
	cut |= str_copy(out->token_sealed, sizeof(out->token_sealed), db_val(res, 0, nf + 6)) != 0;
	cut |= str_copy(out->agent_ip, sizeof(out->agent_ip), db_val(res, 0, nf + 7)) != 0;
	cut |= str_copy(out->home, sizeof(out->home), db_val(res, 0, nf + 8)) != 0;
	cut |= str_copy(out->isolation, sizeof(out->isolation), db_val(res, 0, nf + 9)) != 0;
	cut |= str_copy(out->runtime, sizeof(out->runtime), db_val(res, 0, nf + 10)) != 0;
	if (!engine_here(db_val(res, 0, nf + 5)))
		cut |= str_copy(out->host, sizeof(out->host), db_val(res, 0, nf + 5)) != 0;
	PQclear(res);
	if (cut)
		return err_set(e, ERR_FAIL, "sandbox %s: a value is longer than its field", id);
	/* Another host's: nothing here calls its engine (its handler relays the call). */
	if (out->host[0]) {
		engine_refuse("docker unavailable: the sandbox runs on another host");
		return 0;
	}
	/* Its Docker calls go to its engine from here; one that cannot be reached makes them
	 * fail with why (engine.h), not the load: its row is readable whatever its engine. */
	struct err ee;
	if (engine_use(db, out->engine, &ee))
		log_warn("sandbox %s: %s", id, ee.msg);
	return 0;
}

const char *sandbox_network(const struct config *cfg, const struct sandbox *s)
{
	return s->network[0] ? s->network : cfg->sandbox_network;
}

/* The idle limit counts from now, or from the end of the hold of its running execs
 * (busy_until, exec_mark_running): a call never shortens that hold. */
int sandbox_touch(struct db *db, int idle_timeout, const struct sandbox *s, struct err *e)
{
	char secs[24];

	snprintf(secs, sizeof(secs), "%d", idle_timeout);
	return db_run(db, e,
		      "UPDATE sandboxes SET last_used_at = now(),"
		      "       idle_stop_at = greatest(now(), busy_until) + make_interval(secs =>"
		      "                      coalesce(idle_timeout_seconds, $2::int))"
		      " WHERE id = $1 AND state = 'ready'", 2, s->id, secs);
}

int sandbox_clone_wait(struct db *db, const struct config *cfg, struct sandbox *s,
		       long wait_ms, int (*gone)(void *arg), void *arg, struct err *e)
{
	/* Through the agent when the sandbox has one: its state file read every 10 ms (a
	 * connection and a read, no process). Else, or when the agent has not answered for a
	 * second, one Docker exec waits inside the container (up to 5 s, polling every 50 ms),
	 * so that the call goes on as soon as the clone ends rather than on our next poll. */
	static const char script[] =
		"for i in $(seq 100); do [ -s " SANDBOX_CLONE_STATE " ] && break; sleep 0.05; done; "
		"cat " SANDBOX_CLONE_STATE;
	const char *argv[] = { "bash", "-c", script, NULL };
	struct sandbox_output c;
	struct timespec t0, t1;
	int exit_code, rc, agent = cfg->agent && strlen(s->agent_key) == SANDBOX_AGENT_KEY_HEX;
	struct err ea;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (strcmp(s->clone_state, "pending") == 0) {
		/* A client that left is noticed between waits (5 s at most), not at the end of
		 * the clone: the caller sees the clone still pending and answers 499. */
		if (wait_ms > 0 && gone && gone(arg))
			return 0;
		exit_code = 0;
		if (agent) {
			/* No file yet, or an agent not listening yet (a warm container starts it
			 * when its parameters come): still pending. */
			if ((rc = sbagent_read(s, sandbox_network(cfg, s), SANDBOX_CLONE_STATE,
					       &c, &ea)))
				c.out[0] = 0;
		} else if ((rc = sandbox_run(s->container_id, argv, &c, &exit_code, e))) {
			return rc;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long waited = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (agent && rc && rc != ERR_NOTFOUND && waited >= 1000) {
			log_info("sandbox %s: the clone's state through the agent: %s", s->id, ea.msg);
			agent = 0;
			continue;
		}
		if (exit_code == 0 && strncmp(c.out, "done", 4) == 0) {
			memcpy(s->clone_state, "done", 5);
		} else if (exit_code == 0 && strncmp(c.out, "failed", 6) == 0) {
			const char *log_argv[] = { "tail", "-n", "1", STATE_DIR "/clone.log", NULL };
			memcpy(s->clone_state, "failed", 7);
			if (sandbox_run(s->container_id, log_argv, &c, &exit_code, e) == 0) {
				c.out[strcspn(c.out, "\n")] = 0;
				if (str_copy(s->clone_error, sizeof(s->clone_error), c.out))
					log_info("sandbox %s: the clone's error cut to %zu bytes",
						 s->id, sizeof(s->clone_error) - 1);
			}
		} else if (waited >= wait_ms) {
			return 0;
		} else {
			usleep(agent ? 10000 : 50000);  /* never a busy loop, whatever happened */
			continue;
		}
		return db_run(db, e,
			      "UPDATE sandboxes SET clone_state = $2, clone_error = nullif($3, '')"
			      " WHERE id = $1", 3, s->id, s->clone_state, s->clone_error);
	}
	return 0;
}

json_object *sandbox_json(const struct sandbox *s)
{
	json_object *o = json_object_new_object(), *clone = json_object_new_object();

	json_add_str(o, "id", s->id);
	json_add_str(o, "ref", s->ref);
	json_add_str(o, "commit", s->commit);
	json_add_str(o, "state", s->state);
	/* Its SANDBOXD_IMAGES name; null for a sandbox made before images had names. */
	if (s->image[0])
		json_add_str(o, "image", s->image);
	else
		json_object_object_add(o, "image", NULL);
	/* Null for a sandbox made before egress was kept per sandbox (018). */
	if (s->egress[0])
		json_add_str(o, "egress", s->egress);
	else
		json_object_object_add(o, "egress", NULL);
	/* container or gvisor (031: every row has one; container before). */
	json_add_str(o, "isolation", s->isolation[0] ? s->isolation : "container");
	json_add_str(clone, "state", s->clone_state);
	if (s->clone_error[0])
		json_add_str(clone, "error", s->clone_error);
	json_object_object_add(o, "clone", clone);
	json_add_str(o, "created_at", s->created_at);
	json_add_str(o, "last_used_at", s->last_used_at);
	json_add_str(o, "idle_stop_at", s->idle_stop_at);
	/* Where a stop saved its unpushed work (sandbox_save.h); null when nothing was. */
	if (s->saved_ref[0])
		json_add_str(o, "saved_ref", s->saved_ref);
	else
		json_object_object_add(o, "saved_ref", NULL);
	/* Why it ended (closed, idle, lifetime reached, …); null while it lives. */
	if (s->end_reason[0])
		json_add_str(o, "end_reason", s->end_reason);
	else
		json_object_object_add(o, "end_reason", NULL);
	/* As created (019, 020; null before): CPUs as a number, memory and disk in MiB. */
	json_object *res = json_object_new_object();
	if (s->nano_cpus) {
		/* As many digits as a create may give (a billionth), never a binary tail. */
		char txt[32];
		snprintf(txt, sizeof(txt), "%.9g", s->nano_cpus / 1e9);
		json_object_object_add(res, "cpus", json_object_new_double_s(s->nano_cpus / 1e9, txt));
	} else
		json_object_object_add(res, "cpus", NULL);
	if (s->memory)
		json_add_int(res, "memoryMiB", s->memory >> 20);
	else
		json_object_object_add(res, "memoryMiB", NULL);
	if (s->disk)
		json_add_int(res, "diskMiB", s->disk >> 20);
	else
		json_object_object_add(res, "diskMiB", NULL);
	json_object_object_add(o, "resources", res);
	return o;
}
