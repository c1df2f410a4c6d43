/* exec_slots.h: the caps on concurrent execs (issue 32 A.2, decision 0085), counted in the
 * database (table exec_slots, sql/032) so that every worker, the holder and every host see
 * the same count. The service keeps them, never the agent: the sandbox controls the agent.
 *
 * An exec takes a slot before it starts, in the caller's transaction (which the caller
 * commits), and gives it back at its end: exec_slot_release (its worker), the holder with
 * the held row (audit_held_finish, by request id), or for a detached exec
 * exec_slot_detached_ended once a read finds it ended. A slot of an owner that died stops
 * counting at its expiry (the exec's limit, its grace and a margin) and the reaper deletes
 * it (exec_slots_reap). */
#ifndef SANDBOXD_EXEC_SLOTS_H
#define SANDBOXD_EXEC_SLOTS_H
#include <stdint.h>
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"
#include "sandboxd/sandbox/sandbox.h"

/* Seconds past an exec's own limit and grace before its slot stops counting. */
#define EXEC_SLOT_MARGIN_S 60
/* The Retry-After of a refusal, in seconds. */
#define EXEC_SLOT_RETRY_S 5

struct exec_slot_caps {
	int per_sandbox;           /* SANDBOXD_EXECS_PER_SANDBOX (parked: _PARKED_PER_SANDBOX) */
	int per_account;           /* SANDBOXD_EXECS_PER_ACCOUNT (parked: _PARKED_PER_ACCOUNT) */
	int parked;                /* 0: running execs; 1: calls parked with the holder */
};

/* A slot for an exec of s that account_id asks for in request request_id, which may run
 * for up to secs seconds (its limit, its grace, any wait for the clone): *id. Inside a
 * transaction (the caller's; this takes advisory locks that its commit lets go). Past a
 * cap: ERR_LIMIT, boxed 429, e naming the cap ("too many execs running in this sandbox
 * (16)", "... for this account (64)"; parked: "too many calls waiting for the clone in this
 * sandbox (12)", ...). */
int exec_slot_take(struct db *db, const struct sandbox *s, const char *account_id,
		   const char *request_id, int64_t secs, const struct exec_slot_caps *caps,
		   long long *id, struct err *e) __attribute__((warn_unused_result));
/* A parked call's slot (caps->parked), by its request: the holder's, when the call leaves. */
void exec_slot_parked_done(struct db *db, const char *sandbox_id, const char *request_id);
/* The slot id given back (its exec ended, or never started); logged when it cannot be. */
void exec_slot_release(struct db *db, long long id);
/* Slot id is detached exec exec_id's now: it stays until a read finds that exec ended. */
int exec_slot_detach(struct db *db, long long id, const char *exec_id, struct err *e)
	__attribute__((warn_unused_result));
/* Slot id goes with held exec held_id now (the holder's, or the reaper's, end of it). */
int exec_slot_held(struct db *db, long long id, long long held_id, struct err *e)
	__attribute__((warn_unused_result));
/* Detached exec exec_id of sandbox_id has ended: its slot goes back. */
void exec_slot_detached_ended(struct db *db, const char *sandbox_id, const char *exec_id);
/* The slots of s's detached execs that have ended (asked of their backends, at most 64)
 * given back: a detached exec nobody read since it ended counts no more. Asks at most once
 * per 5 s per sandbox in each worker (30 s after an ask that failed); returns how many
 * went (0 also when this worker asked within that time). */
int exec_slots_refresh(struct db *db, const struct sandbox *s, const char *network)
	__attribute__((warn_unused_result));
/* The reaper's part: slots past their expiry or of sandboxes no longer live. Returns how
 * many went, or -1 (e says why). */
int exec_slots_reap(struct db *db, struct err *e) __attribute__((warn_unused_result));

#endif
