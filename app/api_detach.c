/* api_detach.c: detached exec's routes (SPEC.md §4 "Detached exec"): the 202 of POST …/exec
 * with "detach": true, and GET …/execs/{execId}. The work is the exec service's
 * (exec_detach.c). */
#include <string.h>
#include "sandboxd/api.h"
#include "sandboxd/api_sandbox.h"
#include "sandboxd/detach.h"
#include "sandboxd/exec.h"
#include "sandboxd/json.h"
#include "sandboxd/banned.h"

/* Which backend kept it, and why not the agent when it was asked (as exec's rows say). */
static void audit_backend(struct req *r, const char *backend, const char *agent_error)
{
	json_add_str(r->audit_details, "backend", backend ? backend : "docker");
	if (agent_error[0])
		json_add_str(r->audit_details, "agent_error", agent_error);
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
	if ((rc = db_begin(r->db, e)) || (rc = sandbox_touch(r, s, e)))
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
	rc = exec_detach_read(r->db, &s, r->cfg->agent ? r->cfg->sandbox_network : NULL, id, want,
			      &x, e);
	audit_backend(r, x.backend, x.agent_error);
	if (rc == ERR_NOTFOUND || rc == ERR_INVALID)
		rc = err_boxed(e, rc == ERR_NOTFOUND ? 404 : 400);
	else if (!rc && !(rc = sandbox_touch(r, &s, e)))
		http_json(r, 200, output_json(&x));
	buf_release(&x.text[0]);
	buf_release(&x.text[1]);
	return rc;
}
