/* audit.c: the request's audit row. */
#include <stdio.h>
#include <time.h>
#include "sandboxd/audit.h"
#include "sandboxd/json.h"
#include "sandboxd/banned.h"

int audit_request(struct req *r, const char *action, struct err *e)
{
	struct timespec now;
	char status[8], ms[24];
	long elapsed;
	const char *details;

	clock_gettime(CLOCK_MONOTONIC, &now);
	elapsed = (now.tv_sec - r->started.tv_sec) * 1000 +
		  (now.tv_nsec - r->started.tv_nsec) / 1000000;
	snprintf(status, sizeof(status), "%d", r->status);
	snprintf(ms, sizeof(ms), "%ld", elapsed);
	json_add_str(r->audit_details, "method", r->method);
	json_add_str(r->audit_details, "path", r->path);
	if (r->error)
		json_add_str(r->audit_details, "error", r->error);
	if (r->auth_failure)
		json_add_str(r->audit_details, "reason", r->auth_failure);
	details = json_object_to_json_string_ext(r->audit_details, JSON_C_TO_STRING_PLAIN);
	return db_run(r->db, e,
		      "INSERT INTO audit_log (action, status, account_id, login, token_id, token_kind,"
		      "  repository, request_id, remote_addr, via, duration_ms, details, sandbox_id)"
		      " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $13, $10, $11, $12)",
		      13, action, status, r->caller.account_id[0] ? r->caller.account_id : NULL,
		      r->caller.login[0] ? r->caller.login : NULL,
		      r->caller.token_id[0] ? r->caller.token_id : NULL,
		      r->caller.kind ? token_kind_name(r->caller.kind) : NULL, r->audit_repo,
		      r->request_id, r->remote_addr, ms, details, r->audit_sandbox,
		      r->via ? r->via : "rest");
}

int audit_push_ref(struct db *db, const struct audit_ref *a, struct err *e)
{
	json_object *d = json_object_new_object();
	int rc;

	if (!d)
		return err_set(e, ERR_NOMEM, "out of memory");
	json_add_str(d, "ref", a->ref);
	json_add_str(d, "old", a->old);
	json_add_str(d, "new", a->new_);
	json_add_str(d, "result", a->result);
	json_add_str(d, "reason", a->reason);
	json_add_str(d, "kind", a->kind);
	rc = db_run(db, e,
		    "INSERT INTO audit_log (action, status, account_id, login, token_id,"
		    "  token_kind, repository, request_id, via, details)"
		    " VALUES ('git.push.ref', $1, $2, $3, $4, $5, $6, $7, 'git', $8)",
		    8, a->status, a->account_id, a->login, a->token_id, a->token_kind,
		    a->repository, a->request_id,
		    json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN));
	json_object_put(d);
	return rc;
}
