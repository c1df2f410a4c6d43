/* gitenv.h: the environment of `git http-backend` for one request (githttp.h), built from
 * scratch: nothing of the worker's or of the client's headers leaks in but what git reads
 * (Git-Protocol, Content-Encoding), the configuration is given for this run only
 * (GIT_CONFIG_COUNT: core.hooksPath, receive.fsckObjects, ...), and the trusted values for
 * the hook travel under SANDBOXD_HOOK_* names that no header can forge (nginx turns
 * headers into HTTP_*). Every hook variable is set, empty when there is nothing to say:
 * the hook refuses a push when one it needs is missing. */
#ifndef SANDBOXD_GITENV_H
#define SANDBOXD_GITENV_H
#include "sandboxd/http/githttp.h"
#include "sandboxd/lib/strv.h"

/* The child's whole environment in env (the request's pool). who is NULL for an anonymous
 * request; scanned says the push's scanner runs (its descriptors 4 and 5 for the hook:
 * streamscan.h). 0, or ERR_FAIL when a variable did not fit or memory ran out: the request
 * is refused (logged: a bug to fix), never run with a variable left out. */
int gitenv_build(struct req *r, const struct git_route *g, const struct repo *repo,
		 const struct git_pusher *who, int scanned, struct strv *env, struct err *e)
	__attribute__((warn_unused_result));

/* git's own directory of programs (`git --exec-path`, e.g. /usr/lib/git-core) for the git
 * at path git, asked once per process (one short run of git), "" when that failed: then
 * http-backend runs as `git http-backend`, one more exec of git a request (githttp.c).
 * The child's PATH starts with it, as git itself sets it for the programs it runs. */
const char *gitenv_exec_path(const char *git);

#endif
