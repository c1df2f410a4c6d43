/* api_detach.c: detached exec's routes (SPEC.md §4 "Detached exec", "Processes"): the 202
 * of POST …/exec with "detach": true, GET …/execs/{execId}, the list GET …/execs and POST
 * …/execs/{execId}/kill. The work is the exec service's (exec_detach.c, exec_procs.c); the
 * table detached_execs (sql/011) says which execs a sandbox has and which backend holds
 * each. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/sandbox.h"
#include "sandboxd/proto/detach.h"
#include "sandboxd/sandbox/exec.h"
#include "sandboxd/sandbox/exec_slots.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/redact.h"
#include "sandboxd/common/banned.h"

#define LIST_MAX 100               /* the newest execs a list shows */

/* Which backend kept it, and why not the agent when it was asked (as exec's rows say). */
static void audit_backend(struct req *r, const char *backend, const char *agent_error)
{
	json_add_str(r->audit_details, "backend", backend ? backend : "docker");
	if (agent_error[0])
		json_add_str(r->audit_details, "agent_error", agent_error);
}

/* The exec's row: its command as the audit row holds it (the sandbox token's forms masked
 * by the caller), every token of ours masked too. */
static int record(struct req *r, const struct sandbox *s, const char *id, const char *backend,
		  struct err *e)
{
	json_object *c;
	const char *cmd = json_object_object_get_ex(r->audit_details, "cmd", &c)
				  ? json_object_get_string(c) : "";
	char *masked = pool_strdup(r->pool, cmd ? cmd : "");

	masked[redact_tokens(masked, strlen(masked))] = 0;
	return db_run(r->db, e, "INSERT INTO detached_execs (sandbox_id, id, cmd, backend)"
			      " VALUES ($1, $2, $3, $4)", 4, s->id, id, masked, backend);
}

int api_exec_detach(struct req *r, const struct sandbox *s, const struct exec_spec *x,
		    struct err *e)
{
	char id[EXEC_ID_LEN + 1];
	struct exec_result res;
	int rc;

	rc = exec_detach_start(s, x, id, &res, e);
	audit_backend(r, res.backend, res.agent_error);
	if (rc)
		return rc;
	json_add_str(r->audit_details, "exec_id", id);
	json_add_bool(r->audit_details, "detached", 1);
	/* Its slot stays while it runs: a read that finds it ended gives it back. */
	if ((rc = db_begin(r->db, e)) || (rc = record(r, s, id, res.backend, e)) ||
	    (x->slot && (rc = exec_slot_detach(r->db, x->slot, id, e))) ||
	    (rc = sandbox_touch(r->db, r->cfg->idle_timeout, s, e)))
		return rc;
	json_object *o = json_object_new_object();
	json_add_str(o, "execId", id);
	http_json(r, 202, o);
	return 0;
}

static json_object *output_json(const struct exec_output *x)
{
	json_object *o = json_object_new_object();

	json_add_str(o, "state", x->ended ? "exited" : "running");
	if (x->ended) {
		json_add_int(o, "exitCode", x->exit_code);
		json_add_bool(o, "timedOut", x->exit_code == 124);
		json_add_bool(o, "killed", x->killed);
	}
	json_object_object_add(o, "stdout", json_object_new_string_len(
		x->text[0].data ? x->text[0].data : "", (int)x->text[0].len));
	json_object_object_add(o, "stderr", json_object_new_string_len(
		x->text[1].data ? x->text[1].data : "", (int)x->text[1].len));
	json_add_int(o, "stdoutOffset", (int64_t)x->next[0]);
	json_add_int(o, "stderrOffset", (int64_t)x->next[1]);
	json_add_int(o, "durationMs", x->duration_ms);
	return o;
}

int api_sandbox_exec_get(struct req *r, struct err *e)
{
	const char *id = http_path_param(r, 3);
	struct repo repo;
	struct sandbox s;
	struct exec_output x;
	struct secrets_set sec;
	uint64_t want[2];
	int rc;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)))
		return rc;
	json_add_str(r->audit_details, "exec_id", id);
	if (!exec_id_valid(id))
		return err_box(e, 404, "no such exec: %.64s", id);
	if (detach_query_offset(r->query, "stdoutOffset", &want[0]) ||
	    detach_query_offset(r->query, "stderrOffset", &want[1]))
		return err_box(e, 400, "stdoutOffset and stderrOffset must be byte counts");
	if ((rc = secrets_for_sandbox(r->db, r->pool, s.id, &sec, e)))
		return rc;
	rc = exec_detach_read(r->db, &s, r->cfg->agent ? sandbox_network(r->cfg, &s) : NULL, id, &sec,
			      want, &x, e);
	audit_backend(r, x.backend, x.agent_error);
	if (!rc && x.ended)
		exec_slot_detached_ended(r->db, s.id, id);
	if (rc == ERR_NOTFOUND || rc == ERR_INVALID)
		rc = err_boxed(e, rc == ERR_NOTFOUND ? 404 : 400);
	else if (!rc && !(rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e)))
		http_json(r, 200, output_json(&x));
	buf_release(&x.text[0]);
	buf_release(&x.text[1]);
	return rc;
}

/* The backend of exec id of s (its row), into *backend (pool memory): 404 without one. */
static int exec_backend(struct req *r, const struct sandbox *s, const char *id,
			const char **backend, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(r->db, e, &code, "SELECT backend FROM detached_execs"
					       " WHERE sandbox_id = $1 AND id = $2", 2, s->id, id);

	if (!res)
		return code;
	*backend = PQntuples(res) ? pool_strdup(r->pool, db_val(res, 0, 0)) : NULL;
	PQclear(res);
	return *backend ? 0 : err_box(e, 404, "no such exec: %.64s", id);
}

static json_object *list_item(PGresult *res, int i, const struct exec_state *st)
{
	json_object *o = json_object_new_object();

	json_add_str(o, "execId", db_val(res, i, 0));
	json_add_str(o, "cmd", db_val(res, i, 1));
	json_add_str(o, "state", st->ended ? "exited" : "running");
	if (st->ended) {
		json_add_int(o, "exitCode", st->exit_code);
		json_add_bool(o, "timedOut", st->timed_out);
		json_add_bool(o, "killed", st->killed);
	}
	json_add_str(o, "startedAt", db_val(res, i, 3));
	json_add_int(o, "durationMs", st->duration_ms);
	return o;
}

/* The states of the rows' execs, each asked of its backend (all of one backend at once). */
static int list_states(struct req *r, const struct sandbox *s, PGresult *res,
		       struct exec_state *st, struct err *e)
{
	static const char *const backends[] = { "agent", "docker" };
	const char *ids[LIST_MAX];
	int at[LIST_MAX], rc = 0;

	for (int b = 0; b < 2 && !rc; b++) {
		struct exec_state got[LIST_MAX];
		size_t n = 0;

		for (int i = 0; i < PQntuples(res); i++)
			if (strcmp(db_val(res, i, 2), backends[b]) == 0) {
				at[n] = i;
				ids[n++] = db_val(res, i, 0);
			}
		if (n && !(rc = exec_detach_states(s, sandbox_network(r->cfg, s), backends[b], ids,
						   n, got, e)))
			for (size_t k = 0; k < n; k++)
				st[at[k]] = got[k];
	}
	return rc;
}

int api_sandbox_execs_list(struct req *r, struct err *e)
{
	struct exec_state st[LIST_MAX];
	struct repo repo;
	struct sandbox s;
	PGresult *res;
	int rc, code = 0;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) || (rc = auth_user_write(&r->caller, e)))
		return rc;
	res = db_exec(r->db, e, &code,
		      "SELECT id, cmd, backend, rfc3339(started_at) FROM detached_execs"
		      " WHERE sandbox_id = $1 ORDER BY started_at DESC, id LIMIT 100", 1, s.id);
	if (!res)
		return code;
	memset(st, 0, sizeof(st));
	if (!(rc = list_states(r, &s, res, st, e)) && !(rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e))) {
		json_object *list = json_object_new_array();
		/* One its backend no longer knows (its files removed from inside) is left out. */
		for (int i = 0; i < PQntuples(res); i++) {
			if (st[i].found)
				json_object_array_add(list, list_item(res, i, &st[i]));
			if (!st[i].found || st[i].ended)
				exec_slot_detached_ended(r->db, s.id, db_val(res, i, 0));
		}
		http_json(r, 200, list);
	}
	PQclear(res);
	return rc;
}

static int parse_signal(json_object *body, int *sig, const char **name, struct err *e)
{
	static const char *const names[] = { "TERM", "KILL", "INT", "HUP", NULL };
	static const int sigs[] = { SIGTERM, SIGKILL, SIGINT, SIGHUP };
	int rc = json_field_enum(body, "signal", 0, names, name, e);

	if (rc < 0)
		return err_boxed(e, 400);
	if (rc > 0)
		*name = "TERM";
	for (int i = 0; names[i]; i++)
		if (strcmp(*name, names[i]) == 0)
			*sig = sigs[i];
	return 0;
}

int api_sandbox_exec_kill(struct req *r, struct err *e)
{
	const char *id = http_path_param(r, 3), *backend, *name = "TERM";
	struct exec_state st;
	struct repo repo;
	struct sandbox s;
	int rc, sig = SIGTERM;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) || (rc = auth_user_write(&r->caller, e)))
		return rc;
	json_add_str(r->audit_details, "exec_id", id);
	if (!exec_id_valid(id))
		return err_box(e, 404, "no such exec: %.64s", id);
	if ((rc = parse_signal(r->json, &sig, &name, e)) || (rc = exec_backend(r, &s, id, &backend, e)))
		return rc;
	json_add_str(r->audit_details, "signal", name);
	json_add_str(r->audit_details, "backend", backend);
	if ((rc = exec_detach_states(&s, sandbox_network(r->cfg, &s), backend, &id, 1, &st, e)))
		return rc;
	if (!st.found)
		return err_box(e, 404, "no such exec: %s", id);
	if (st.ended)
		return err_box(e, 409, "exec %s has already ended", id);
	if ((rc = exec_detach_kill(&s, sandbox_network(r->cfg, &s), backend, id, sig, e)) ||
	    (rc = db_run(r->db, e, "UPDATE detached_execs SET kill_signal = coalesce(kill_signal, $3),"
			 " killed_at = coalesce(killed_at, now()) WHERE sandbox_id = $1 AND id = $2",
			 3, s.id, id, name)) ||
	    (rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e)))
		return rc;
	json_object *o = json_object_new_object();
	json_add_str(o, "execId", id);
	json_add_str(o, "signal", name);
	http_json(r, 202, o);
	return 0;
}
