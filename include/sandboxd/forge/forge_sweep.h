/* forge_sweep.h: the reaper's work for the forge: ephemeral refs that outlived
 * SANDBOXD_EPHEMERAL_TTL deleted and audited (SPEC §5), and the directories of deleted
 * repositories removed once their deletion committed (repo_delete). The unreachable
 * objects an expired ref leaves go with git's own gc. */
#ifndef SANDBOXD_FORGE_SWEEP_H
#define SANDBOXD_FORGE_SWEEP_H
#include <stdint.h>
#include "sandboxd/core/config.h"
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"

/* The audit action of an expired ephemeral ref (via "reaper", status 200, details ref,
 * old, last_update, ttl). */
#define FORGE_EXPIRE_ACTION "ref.expire"

/* Deletes every ref under refs/namespaces/ephemeral/ of every repository that was last
 * updated ttl seconds or more before now, each with its audit row. A ref's last update is
 * the newest of its loose file's mtime and its last accepted git.push.ref row (under the
 * repository's current or any old name); with neither (packed, and older than the audit
 * log keeps), its commit's committer time. Deletion is compare-and-swap on the value seen,
 * so a push in between wins. Returns the number deleted, or a negative ERR_* when the
 * repositories cannot be listed (a repository that cannot be read is logged and skipped). */
int forge_expire_refs(const struct config *cfg, struct db *db, int64_t now, struct err *e)
	__attribute__((warn_unused_result));

/* Removes each <repos_dir>/.trash/<id>.git whose id no repository row has any more (its
 * delete committed). Returns the number removed, or a negative ERR_* (database). */
int forge_sweep_trash(const struct config *cfg, struct db *db, struct err *e)
	__attribute__((warn_unused_result));

/* Seconds between two forge_expire_refs: a tenth of the TTL, within [1, 3600]. */
int forge_expire_interval(int ttl) __attribute__((warn_unused_result));

#endif
