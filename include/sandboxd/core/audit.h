/* audit.h: rows of the audit log. The request's row is written inside the request's own
 * transaction, so a request never succeeds without its row and a row never records work
 * that was rolled back. */
#ifndef SANDBOXD_AUDIT_H
#define SANDBOXD_AUDIT_H
#include <json-c/json.h>
#include "sandboxd/core/db.h"

/* One row of the log, as its writer knows it: no HTTP request needed (the HTTP layer fills
 * one from its request, dispatch.h request_audit_row). NULL strings are NULL columns. */
struct audit_row {
	const char *action;
	int status;                 /* audit_write only */
	const char *account_id, *login, *token_id, *token_kind;
	const char *repository, *sandbox_id, *request_id, *remote_addr;
	const char *via;            /* the door: NULL for "rest" */
	long long duration_ms;      /* audit_write only */
	json_object *details;       /* masked here before it is written */
};

/* Writes a's row into audit_log. */
int audit_write(struct db *db, const struct audit_row *a, struct err *e)
	__attribute__((warn_unused_result));

/* One git.push.ref row: the pre-receive hook's decision on a ref (200 accepted, 403
 * refused), or the worker's note that git did not update a ref it accepted (500 failed). */
struct audit_ref {
	const char *status, *account_id, *login, *token_id, *token_kind, *repository,
		*request_id;
	const char *ref, *old, *new_, *result, *reason, *kind;
	const char *via;  /* the door: NULL for "git" (the hook), "rest" for a REST merge */
};
int audit_push_ref(struct db *db, const struct audit_ref *a, struct err *e)
	__attribute__((warn_unused_result));

/* A running exec handed to the holder: its row to be, in held_execs (a's row as
 * audit_write would write it, but for status and duration), committed; *id gets its
 * number. hold is the sandbox's busy_until the exec set ("": none). */
int audit_hold(struct db *db, const struct audit_row *a, const char *hold, long long *id,
	       struct err *e) __attribute__((warn_unused_result));

/* The held exec's end, in one statement: its row moves to audit_log with status, the
 * request's duration and details (JSON text, masked here, merged into the row's), its hold
 * on the sandbox is given back and the sandbox's idle deadline moves on (idle_timeout:
 * the setting). 0 also when the row was gone (ended by the reaper already). */
int audit_held_finish(struct db *db, long long id, int status, long long duration_ms,
		      json_object *details, int idle_timeout, struct err *e)
	__attribute__((warn_unused_result));

#endif
