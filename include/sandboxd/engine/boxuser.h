/* boxuser.h: who commands and the file API run as inside a sandbox (SPEC.md §4 "Root
 * inside, nobody outside").
 *
 * Root, with Docker's default capabilities less NET_RAW and MKNOD, when the engine keeps
 * the sandbox's root from being the host's: dockerd --userns-remap (root inside is an
 * unprivileged host uid) or gVisor as the default runtime. Otherwise the fallback user
 * SANDBOXD_SANDBOX_UID (a uid no host account uses) with every capability dropped. Either
 * way no-new-privileges, seccomp and the limits stay (box.h).
 *
 * The engine is asked (GET /info) and the answer kept for BOXUSER_TTL_S seconds, for every
 * process of the service (boxuser_share): userns-remap is daemon-wide and changes only
 * with a restart of the engine. A failed question is not kept. A container is made with
 * the user chosen then, and every exec into it runs as the container's own user, so a
 * sandbox never changes user.
 */
#ifndef SANDBOXD_BOXUSER_H
#define SANDBOXD_BOXUSER_H
#include "sandboxd/core/config.h"
#include "sandboxd/common/err.h"

#define BOXUSER_TTL_S 30

struct boxuser {
	int root;                      /* 1: root inside (the engine keeps it from the host's) */
	const char *mode;              /* "userns", "runsc" or "fallback" (GET /healthz) */
	unsigned uid;                  /* 0, or cfg->sandbox_uid; the gid is the same */
	char user[24];                 /* "uid:gid", Docker's User */
	const char *home;              /* HOME: /root or /home/sandbox */
	const char *const *cap_drop;   /* box_spec.cap_drop: NULL (ALL) or NET_RAW, MKNOD */
};

/* The kept answers shared by the processes forked after it (the master calls it before
 * the first fork): 0, or -1 (then each process keeps its own). */
int boxuser_share(void) __attribute__((warn_unused_result));

/* Fills out from the engine's /info (or the kept answer). 0, or the Docker error
 * (ERR_FAIL, ERR_DOCKER: the engine did not answer); out then holds the fallback, which
 * the caller must not use to make a container. */
int boxuser_get(const struct config *cfg, struct boxuser *out, struct err *e)
	__attribute__((warn_unused_result));

/* HOME for an exec (whose environment is only what the service gives): the user's home
 * as boxuser_get would answer; /home/sandbox when the engine does not answer. */
const char *boxuser_home(void);

/* out for an engine whose isolation box_isolation answered ("userns", "runsc",
 * ""): no engine call (unit tests, and boxuser_get). */
void boxuser_for(const struct config *cfg, const char *isolation, struct boxuser *out);
#endif
