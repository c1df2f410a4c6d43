/* audit.c: the request's audit row. Whatever goes into a row's details is masked first:
 * every token of this service's formats and every git-URL JWT, wherever a caller or a
 * sandbox put it (SPEC.md §7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sandboxd/core/audit.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/redact.h"
#include "sandboxd/common/banned.h"

/* The details' JSON text, masked, malloc'd (a mask is valid inside a JSON string: tokens
 * and JWTs are made of characters JSON keeps as they are). */
static char *masked_details(json_object *d)
{
	size_t n;
	const char *t = json_object_to_json_string_length(d, JSON_C_TO_STRING_PLAIN, &n);
	char *c = t ? malloc(n + 1) : NULL;

	if (!c)
		return NULL;
	memcpy(c, t, n);
	c[redact_tokens(c, n)] = 0;
	return c;
}

int audit_write(struct db *db, const struct audit_row *a, struct err *e)
{
	char status[16], ms[24], *details = masked_details(a->details);
	int rc;

	if (!details)
		return err_set(e, ERR_NOMEM, "out of memory");
	snprintf(status, sizeof(status), "%d", a->status);
	snprintf(ms, sizeof(ms), "%lld", a->duration_ms);
	rc = db_run(db, e,
		    "INSERT INTO audit_log (action, status, account_id, login, token_id, token_kind,"
		    "  repository, request_id, remote_addr, via, duration_ms, details, sandbox_id)"
		    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $13, $10, $11, $12)",
		    13, a->action, status, a->account_id, a->login, a->token_id, a->token_kind,
		    a->repository, a->request_id, a->remote_addr, ms, details, a->sandbox_id,
		    a->via ? a->via : "rest");
	free(details);
	return rc;
}

int audit_hold(struct db *db, const struct audit_row *a, const char *hold, long long *id,
	       struct err *e)
{
	char *details = masked_details(a->details);
	int code = 0;
	PGresult *res;

	if (!details)
		return err_set(e, ERR_NOMEM, "out of memory");
	res = db_exec(db, e, &code,
		      "INSERT INTO held_execs (sandbox_id, hold, action, account_id, login, token_id,"
		      "  token_kind, repository, request_id, remote_addr, via, details)"
		      " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
		      12, a->sandbox_id, hold && *hold ? hold : NULL, a->action, a->account_id,
		      a->login, a->token_id, a->token_kind, a->repository, a->request_id,
		      a->remote_addr, a->via ? a->via : "rest", details);
	free(details);
	if (!res)
		return code;
	*id = PQntuples(res) == 1 ? strtoll(db_val(res, 0, 0), NULL, 10) : 0;
	PQclear(res);
	return *id > 0 ? 0 : err_set(e, ERR_DB, "no held_execs row");
}

int audit_held_finish(struct db *db, long long id, int status, long long duration_ms,
		      json_object *details, int idle_timeout, struct err *e)
{
	char sid[24], st[8], ms[24], idle[24], *text;
	size_t n;
	const char *t = json_object_to_json_string_length(details, JSON_C_TO_STRING_PLAIN, &n);
	int rc;

	if (!t || !(text = malloc(n + 1)))
		return err_set(e, ERR_NOMEM, "out of memory");
	memcpy(text, t, n);
	text[redact_tokens(text, n)] = 0;
	snprintf(sid, sizeof(sid), "%lld", id);
	snprintf(st, sizeof(st), "%d", status);
	snprintf(ms, sizeof(ms), "%lld", duration_ms);
	snprintf(idle, sizeof(idle), "%d", idle_timeout);
	/* One statement, so that the row moves once whoever (holder or reaper) gets there
	 * first; the hold goes back only if no later exec took a longer one (exec_mark_done). */
	rc = db_run(db, e,
		    "WITH h AS (DELETE FROM held_execs WHERE id = $1 RETURNING *),"
		    /* Its exec slot goes with it (exec_slots.h). */
		    " x AS (DELETE FROM exec_slots WHERE held_id = $1::bigint),"
		    " a AS (INSERT INTO audit_log (action, status, account_id, login, token_id,"
		    "         token_kind, repository, request_id, remote_addr, via, duration_ms,"
		    "         details, sandbox_id)"
		    "       SELECT action, $2, account_id, login, token_id, token_kind, repository,"
		    "              request_id, remote_addr, via, $3, details || $4::jsonb, sandbox_id"
		    "         FROM h)"
		    " UPDATE sandboxes s SET last_used_at = now(),"
		    "   busy_until = CASE WHEN s.busy_until::text = h.hold THEN now()"
		    "                     ELSE s.busy_until END,"
		    "   idle_stop_at = greatest(now(), CASE WHEN s.busy_until::text = h.hold"
		    "                                  THEN now() ELSE s.busy_until END)"
		    "                  + make_interval(secs => coalesce(s.idle_timeout_seconds,"
		    "                                                   $5::int))"
		    "  FROM h WHERE s.id = h.sandbox_id AND s.state = 'ready'",
		    5, sid, st, duration_ms >= 0 ? ms : NULL, text, idle);
	free(text);
	return rc;
}

int audit_push_ref(struct db *db, const struct audit_ref *a, struct err *e)
{
	json_object *d = json_object_new_object();
	size_t n;
	char *text = NULL;
	int rc;

	if (!d)
		return err_set(e, ERR_NOMEM, "out of memory");
	json_add_str(d, "ref", a->ref);
	json_add_str(d, "old", a->old);
	json_add_str(d, "new", a->new_);
	json_add_str(d, "result", a->result);
	json_add_str(d, "reason", a->reason);
	json_add_str(d, "kind", a->kind);
	const char *t = json_object_to_json_string_length(d, JSON_C_TO_STRING_PLAIN, &n);
	if (!t || !(text = malloc(n + 1))) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	memcpy(text, t, n);
	text[redact_tokens(text, n)] = 0;
	rc = db_run(db, e,
		    "INSERT INTO audit_log (action, status, account_id, login, token_id,"
		    "  token_kind, repository, request_id, via, details)"
		    " VALUES ('git.push.ref', $1, $2, $3, $4, $5, $6, $7, $8, $9)",
		    9, a->status, a->account_id, a->login, a->token_id, a->token_kind,
		    a->repository, a->request_id, a->via ? a->via : "git", text);
out:
	free(text);
	json_object_put(d);
	return rc;
}
