/* auth_req.h: forge/auth.h for an HTTP request. The caller is resolved from the request's
 * Authorization header into r->caller, and a repository's access decided for r's caller,
 * with the request's side effects: why a credential was refused and the repository in the
 * audit row, and Location for a repository that moved. */
#ifndef SANDBOXD_AUTH_REQ_H
#define SANDBOXD_AUTH_REQ_H
#include "sandboxd/forge/auth.h"
#include "sandboxd/http/http.h"

/* Resolves r->caller from the Authorization header (auth_credential). Returns 0 (possibly
 * anonymous), ERR_DENIED when a credential was given but refused (r->auth_failure says
 * why), or ERR_DB. A git URL token's jti and kid go into the audit row's details. */
int auth_resolve(struct req *r, struct err *e) __attribute__((warn_unused_result));

/* auth_access for r's caller (AUTH_GIT for a git client, no redirect for MCP): a name the
 * repository left answers 301 with the request's path under the new name in Location. */
int auth_repo(struct req *r, const char *owner, const char *name, enum role need, int writes,
	      struct repo *out, struct err *e) __attribute__((warn_unused_result));

/* The caller of a git request (auth_resolve; a git URL token only on its own repository,
 * else ERR_AUTH "bad credentials") and its role on owner/name: read, or with push write
 * and not archived (auth_repo). Smart HTTP and Git LFS share it. */
int auth_git(struct req *r, const char *owner, const char *name, int push, struct repo *out,
	     struct err *e) __attribute__((warn_unused_result));

#endif
