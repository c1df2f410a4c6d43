/* githttp.h: git's smart HTTP protocol, served by `git http-backend` as a child process with
 * an environment built from scratch. The request body is streamed to the child and its answer
 * streamed back: no pack ever sits in a worker's memory. */
#ifndef SANDBOXD_GITHTTP_H
#define SANDBOXD_GITHTTP_H
#include "sandboxd/forge/auth.h"
#include "sandboxd/http/http.h"

enum git_service {
	GIT_NONE = 0, GIT_INFO_REFS, GIT_UPLOAD_PACK, GIT_RECEIVE_PACK,
	GIT_LFS_BATCH,                /* POST …/info/lfs/objects/batch */
	GIT_LFS_OBJECT,               /* GET (download) or PUT (upload) …/info/lfs/objects/{oid} */
};

struct git_route {
	char owner[ROUTER_PARAM_MAX];
	char name[ROUTER_PARAM_MAX];  /* without ".git" */
	enum git_service service;
	int push;                     /* receive-pack, or info/refs?service=git-receive-pack */
	const char *method;           /* the method the service needs: GET or POST; NULL for
				       * an LFS object (GET or PUT) */
	char oid[65];                 /* GIT_LFS_OBJECT: its oid as the path gives it (checked
				       * by the handler) */
};

/* Returns 1 when path has the shape /{owner}/{name}.git/..., with out filled (service is
 * GIT_NONE for parts of the dumb protocol and anything else we do not serve), 0 otherwise.
 * Segments are percent-decoded like the router's; names are not validated here. */
int githttp_match(const char *path, const char *query, struct git_route *out)
	__attribute__((warn_unused_result));

/* What the hook needs to know about the pusher, passed in the child's environment under
 * names that never start with HTTP_ (nginx makes those from client headers). */
struct git_pusher {
	const char *login;
	const char *account_id;
	int agent;
	const char *token_id;
	const char *token_kind;
	const char *namespace_;       /* "ephemeral" or NULL */
	const char *policies;         /* JSON array or NULL */
	int report_fd;                /* the hooks' report (pushreport.h), or -1 */
	/* The secret values of the sandbox that pushes, for the hook to search the push for
	 * (valscan.h: "NAME HEX" lines, offset 0), or -1: not a sandbox's push, or none. */
	int values_fd;
};

/* Runs http-backend for an authorised request and streams its answer to the client. Returns
 * 0 once the answer has begun (its status in r->status, r->streamed set: the dispatcher
 * writes nothing more), or an error when nothing was sent: ERR_NOMEM, or ERR_FAIL (the
 * child's environment would not fit in its bound, pipe, fork or poll failed, a bad CGI
 * header block, a time-out before any answer). The child's environment is built from
 * scratch and never cut short (strv.h). */
int githttp_serve(struct req *r, const struct git_route *g, const struct repo *repo,
		  const struct git_pusher *who, struct err *e) __attribute__((warn_unused_result));

#endif
