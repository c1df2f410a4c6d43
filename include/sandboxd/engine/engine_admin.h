/* engine_admin.h: an operator's changes to docker_engines (sandboxctl engine; SPEC §8):
 * add, drain, activate, remove, list. The service reads the table (engine.h); each
 * change is one statement, so workers on every host see it at their next placement. */
#ifndef SANDBOXD_ENGINE_ADMIN_H
#define SANDBOXD_ENGINE_ADMIN_H
#include <stdio.h>
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"

/* A new engine: ERR_INVALID for a bad name, URL, TLS triple (all three files or none;
 * https:// needs them, and tcp:// too unless insecure), max or runtime; ERR_EXISTS when the
 * name is taken. runtime (NULL: none) names its Docker runtime that is gVisor
 * (isolation.h); whether the engine has it is asked at each gVisor create. */
int engine_add(struct db *db, const char *name, const char *url, const char *ca,
	       const char *cert, const char *key, int max, int insecure, const char *runtime,
	       struct err *e) __attribute__((warn_unused_result));
/* An engine's gVisor runtime, the own one's too (the start's writes leave it); NULL: it
 * offers none from now (its gVisor sandboxes live on). ERR_INVALID for a bad name,
 * ERR_NOTFOUND for an unknown engine. */
int engine_set_runtime(struct db *db, const char *name, const char *runtime, struct err *e)
	__attribute__((warn_unused_result));
/* state "active" or "draining"; ERR_NOTFOUND for an unknown name. */
int engine_set_state(struct db *db, const char *name, const char *state, struct err *e)
	__attribute__((warn_unused_result));
/* Refused (ERR_EXISTS) while the engine runs live sandboxes or warm containers. */
int engine_remove(struct db *db, const char *name, struct err *e)
	__attribute__((warn_unused_result));
/* One line per engine: name, state, health, sandboxes, pooled, max, URL. */
int engine_print(struct db *db, FILE *out, struct err *e) __attribute__((warn_unused_result));

#endif
