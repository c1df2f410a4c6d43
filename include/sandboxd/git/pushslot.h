/* pushslot.h: pushes in progress per account. A push's body streams to one of the few git
 * workers (nginx buffers nothing for receive-pack: README "Slow clients"), and that worker
 * is the push's until git is done, so one account may hold at most max of them at a time
 * (SANDBOXD_GIT_PUSHES_PER_ACCOUNT, fewer than the git workers), whatever credential it
 * pushes with: personal, job and sandbox tokens and git URLs all act as an account.
 *
 * A slot is a PostgreSQL session advisory lock on (PUSHSLOT_CLASS + slot, the account's id)
 * taken on the worker's own connection: it holds across workers and hosts, and PostgreSQL
 * lets it go when the worker releases it, when the worker dies, or when its connection
 * does. The key space is the two-int one, apart from every other lock of ours. */
#ifndef SANDBOXD_PUSHSLOT_H
#define SANDBOXD_PUSHSLOT_H
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"

/* "pus" and a zero byte: the slot is added to it, so at most 256 slots. */
#define PUSHSLOT_CLASS 1886745344
#define PUSHSLOT_MAX 256

/* Takes a free one of the account's max slots (1..PUSHSLOT_MAX) on db's connection: 0 with
 * *slot set, ERR_LIMIT when all max are held (e says how many), ERR_DB, or ERR_INVALID for
 * an account id that is not a number. */
int pushslot_take(struct db *db, const char *account_id, int max, int *slot, struct err *e)
	__attribute__((warn_unused_result));
/* Lets slot go (nothing when the connection is gone: PostgreSQL let it go then). */
void pushslot_release(struct db *db, const char *account_id, int slot);

#endif
