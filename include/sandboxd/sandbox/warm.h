/* warm.h: the warm pool (issue 13). SANDBOXD_POOL_SIZE containers of the runner image are
 * kept started ahead, with no repository and no credential in them: their clone.sh waits
 * for its parameters. A create claims one in one statement (any worker, any host), hands
 * it the parameters and answers; a claimed container never comes back. Crash safety as for
 * sandboxes: a row (warm_containers) exists before its container, and the container's
 * SANDBOX_LABEL says "pool:<row id>", so the reaper can always tell whose it is. */
#ifndef SANDBOXD_WARM_H
#define SANDBOXD_WARM_H
#include "sandboxd/core/config.h"
#include "sandboxd/sandbox/container.h"
#include "sandboxd/core/db.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/proto/engine_list.h"
#include "sandboxd/common/err.h"
#include "sandboxd/sandbox/sandbox.h"


/* What a claim learns of its container, all from the warm row: its agent, running since
 * the container's start (025), with its key (hex, "" for a container started before 025:
 * the parameters then go by the archive API) and its address as the engine reported it
 * (""); its user's home ("" before 026) and whether the engine limits its disk. The key is
 * the sandbox's from the claim on. */
struct warm_claimed {
	char key[SANDBOX_AGENT_KEY_HEX + 1];
	char ip[16];
	char home[16];
	int disk_enforced;
};
/* Claims a ready warm container of image on an active, healthy engine of this host's (none
 * that another host owns: engine.h) for sandbox_id (engine's first; skipping rows another
 * claim holds), in the caller's transaction: its container id into cid, its engine into
 * engine, the rest into got (the row keeps no key). ERR_NOTFOUND when the pool has
 * none, or ERR_DB. */
int warm_claim(struct db *db, const char *image, const char *sandbox_id,
	       char engine[ENGINE_NAME_MAX + 1], char cid[BOX_ID_MAX], struct warm_claimed *got,
	       struct err *e) __attribute__((warn_unused_result));
/* The reaper's pass over engine (outside any transaction; Docker calls already go to it):
 * fails warm rows whose start timed out or whose container is no longer running (removing
 * it: such a one is never handed out), then starts new ones until the engine has
 * cfg->pool_size live, or no room (engine.h). Returns how many were started, or an error
 * code (ERR_DB; an engine that fails is logged and the pass ends). */
int warm_refill(const struct config *cfg, struct db *db, const char *engine, struct err *e)
	__attribute__((warn_unused_result));
/* A claimed container that could not serve (why): its row failed, the container removed.
 * In the caller's transaction, if any; failures are logged (the reaper removes what is
 * left). */
void warm_discard(struct db *db, const char *cid, const char *why);
/* Whether the container labelled "pool:<id>" (owner without the prefix) is still wanted:
 * its row is starting or ready, or it was claimed by a live sandbox. 0 with *live set, or
 * ERR_DB. */
int warm_owned(struct db *db, const char *id, int *live, struct err *e)
	__attribute__((warn_unused_result));

#endif
