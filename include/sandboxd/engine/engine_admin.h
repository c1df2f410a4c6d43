/* engine_admin.h: an operator's changes to docker_engines (sandboxctl engine; SPEC §8):
 * add, drain, activate, remove, list. The service reads the table (engine.h); each
 * change is one statement, so workers on every host see it at their next placement. */
#ifndef SANDBOXD_ENGINE_ADMIN_H
#define SANDBOXD_ENGINE_ADMIN_H
#include <stdio.h>
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"

/* A new engine: ERR_INVALID for a bad name, URL, TLS triple (all three files or none;
 * https:// needs them, and tcp:// too unless insecure) or max; ERR_EXISTS when the name is
 * taken. */
int engine_add(struct db *db, const char *name, const char *url, const char *ca,
	       const char *cert, const char *key, int max, int insecure, struct err *e)
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
