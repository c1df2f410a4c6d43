/* container.h: a sandbox's container, hardened and labelled, the same for a create and for
 * the warm pool (warm.h), and the clone's parameters handed to it. */
#ifndef SANDBOXD_CONTAINER_H
#define SANDBOXD_CONTAINER_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/core/config.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/common/err.h"
#include "sandboxd/sandbox/sandbox.h"

/* The SANDBOX_LABEL value of a warm container (warm.h): "pool:" and its row's id. One
 * label key for every container of ours, so that one filter lists them all; a warm one
 * also carries POOL_LABEL=<row id>, for people who look with docker ps. */
#define WARM_OWNER_PREFIX "pool:"
#define POOL_LABEL "sandboxd.pool"

/* Creates (does not start) a sandbox's container, hardened, on its network (lim's, else
 * SANDBOXD_SANDBOX_NETWORK), running as bu (the caller's boxuser_get, which it also
 * records: the row's home is that user's), its first process app/sandbox/sh/clone.sh waiting for
 * its parameters: labelled SANDBOX_LABEL=owner (a sandbox id, or WARM_OWNER_PREFIX<id> for
 * a warm one, which also gets POOL_LABEL=<id>) and with the instance; /workspace is in its
 * writable layer. env: the container's environment (NULL-terminated). ERR_NOIMAGE when the
 * engine lacks the image.
 * lim NULL: the defaults (the warm pool's containers have them). The disk limit goes to
 * the engine (box_create); an engine whose storage cannot limit a box gets
 * the container without, and *disk_enforced (NULL: not asked) says which: 1 the engine
 * enforces it, 0 the reaper measures it (reaper.c). The answer is kept for the process:
 * an engine's storage does not change under it. */
int sandbox_container_new(const struct config *cfg, const struct boxuser *bu, const char *owner,
			  const char **env, const struct sandbox_limits *lim, long timeout_ms,
			  char cid[BOX_ID_MAX], int *disk_enforced, struct err *e)
	__attribute__((warn_unused_result));
/* Where clone.sh reads the clone's parameters, and the marker it waits for. */
#define CLONE_PARAMS_PATH "/tmp/.sandboxd/clone"
#define CLONE_GO_PATH     "/tmp/.sandboxd/go"
/* The clone's parameters into a container. One not started yet (started 0) reads them on
 * its input (box_input, about a millisecond); else, or when that fails (a warning
 * in the log), they go in by the archive API (tens of milliseconds): one archive, the
 * parameters file, then the marker clone.sh waits for, so that it never reads a file half
 * written; both 0600 and owner's (the uid the container runs as, boxuser.h). *how says
 * which way: "stdin" or "archive". params is cleansed by the caller. */
int sandbox_put_clone(const char *cid, unsigned owner, const char *params, size_t len,
		      int started, const char **how, struct err *e)
	__attribute__((warn_unused_result));
/* A fresh agent key: 32 random bytes as hex (the agent's key file holds the hex text). */
int sandbox_agent_key_new(char hex[SANDBOX_AGENT_KEY_HEX + 1]) __attribute__((warn_unused_result));
/* A warm container's agent key into it before its start: on its input (the line "key",
 * then the key), else, with a warning, where clone.sh also looks (/tmp/.sandboxd/agent.key,
 * 0400, owner's, by the archive API); its agent then starts with the container. */
int sandbox_put_agent_key(const char *cid, unsigned owner, const char *key, struct err *e)
	__attribute__((warn_unused_result));
#endif
