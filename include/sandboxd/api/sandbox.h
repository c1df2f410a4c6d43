/* api_sandbox.h: what the sandbox handlers share (defined in api_sandboxes.c, api_exec.c
 * api_detach.c and api_files.c): finding the sandbox of the path for its caller, waiting for its
 * clone, and the 202 of a detached exec. Only handlers include it. */
#ifndef SANDBOXD_API_SANDBOX_H
#define SANDBOXD_API_SANDBOX_H
#include "sandboxd/forge/auth.h"
#include "sandboxd/http/http.h"
#include "sandboxd/sandbox/sandbox.h"

/* Starts a detached exec (api_detach.c) and answers 202 {execId}; the request's checks and
 * the idle deadline are done. */
struct exec_spec;
int api_exec_detach(struct req *r, const struct sandbox *s, const struct exec_spec *x,
		    struct err *e) __attribute__((warn_unused_result));
/* Waits for the sandbox's clone: 0 when it is done, else the answer's code (409 when it
 * failed or is still running, 499 when the client left), or ERR_HANDED when the call was
 * parked with the holder to wait there (park.h: the handler returns it as it is). */
int api_sandbox_ready(struct req *r, struct sandbox *s, struct err *e)
	__attribute__((warn_unused_result));
/* The same for a call with unread bytes of body still in the connection (a raw PUT). */
int api_sandbox_ready_body(struct req *r, struct sandbox *s, size_t unread, struct err *e)
	__attribute__((warn_unused_result));
/* The sandbox named by the path, if the caller may use it (creator or repository admin,
 * repository not archived; live: still running, else 410). 0 to go on, else the answer's
 * code. */
int api_sandbox_access(struct req *r, struct repo *repo, struct sandbox *s, int live,
		       struct err *e) __attribute__((warn_unused_result));

/* What the file handlers share (api_files.c): the answer to a files_read or files_write
 * that failed with rc (404, 413, 400, 403, 409; other codes as they are), and which way
 * the call went, in its audit row as an exec's (README "The agent"). */
struct files_via;
int api_files_read_failed(int rc, const char *path, int is_dir, struct err *e)
	__attribute__((warn_unused_result));
int api_files_write_failed(int rc, const char *path, struct err *e)
	__attribute__((warn_unused_result));
void api_files_via_audit(struct req *r, const struct files_via *via);
/* Where a file call reaches the sandbox's agent: its own network (sandbox_network); NULL
 * with the agent off (SANDBOXD_AGENT=0). */
const char *api_files_agent_network(const struct req *r, const struct sandbox *s);

#endif
