/* dispatch.h: one request from its FastCGI parameters to its answer (dispatch.c), and the
 * steps that a handler serving several calls in one HTTP request (MCP) runs once per call. */
#ifndef SANDBOXD_DISPATCH_H
#define SANDBOXD_DISPATCH_H
#include "sandboxd/core/audit.h"
#include "sandboxd/http/http.h"

/* Serves the request the worker accepted into r (made anew for it): routes it by the table
 * (kept in r, for MCP's calls), runs it in its transaction with its audit row, and sends the
 * answer unless the handler streamed it. The table comes from above (worker.c), so that
 * nothing here depends on the handlers that depend on it. */
void dispatch(struct req *r, const struct route *routes, size_t nroutes);
/* Checks route's demands on the (resolved) caller, then runs its handler with the request
 * as it is (path parameters in r->match, body in r->json); the response is in r. */
void request_call(struct req *r, const struct route *route);
/* Writes the audit row for action and ends the transaction: committed, or rolled back when
 * the response is an error (the row then commits on its own). */
void request_finish(struct req *r, const char *action);
/* r's audit row for action, as of now (its duration so far, its status): the method, the
 * path, and an error or a refused credential's reason go into r's details. a points into r
 * and its pool. */
void request_audit_row(struct req *r, const char *action, struct audit_row *a);
/* Forgets what a handler left in r (status, body and headers, error, parsed JSON, audit
 * details, abort hooks, path parameters), so that the next call starts clean; the caller,
 * the path and the pool stay. */
void request_clear_answer(struct req *r);

#endif
