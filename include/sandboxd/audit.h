/* audit.h: rows of the audit log. The request's row is written inside the request's own
 * transaction, so a request never succeeds without its row and a row never records work
 * that was rolled back. */
#ifndef SANDBOXD_AUDIT_H
#define SANDBOXD_AUDIT_H
#include "sandboxd/http.h"

/* Writes the request's row: action, status, caller, repository, request id, address,
 * duration and details (method, path and the handler's details). */
int audit_request(struct req *r, const char *action, struct err *e);

#endif
