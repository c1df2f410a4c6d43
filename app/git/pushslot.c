/* pushslot.c: an account's pushes in progress, as session advisory locks. */
#include <stdio.h>
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/git/pushslot.h"
#include "sandboxd/common/banned.h"

/* The account's id masked to 31 bits: two accounts share slots only when their ids differ
 * by a multiple of 2^31. One statement per slot, never a query that tries several: a LIMIT
 * does not stop PostgreSQL from taking locks in rows it then drops. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define KEY STR(PUSHSLOT_CLASS) " + $2::int, ($1::bigint & 2147483647)::int)"
#define TRY "SELECT pg_try_advisory_lock(" KEY
#define UNLOCK "SELECT pg_advisory_unlock(" KEY

int pushslot_take(struct db *db, const char *account_id, int max, int *slot, struct err *e)
{
	int64_t id;
	char s[16];
	int code = 0;

	if (num_parse(account_id, 1, INT64_MAX, &id))
		return err_set(e, ERR_INVALID, "account id '%s' is not a number", account_id);
	if (max < 1 || max > PUSHSLOT_MAX)
		return err_set(e, ERR_INVALID, "push slots must be between 1 and %d", PUSHSLOT_MAX);
	for (int k = 0; k < max; k++) {
		PGresult *res;
		int got;

		snprintf(s, sizeof(s), "%d", k);
		if (!(res = db_exec(db, e, &code, TRY, 2, account_id, s)))
			return code;
		got = db_bool(res, 0, 0);
		PQclear(res);
		if (got) {
			*slot = k;
			return 0;
		}
	}
	return err_set(e, ERR_LIMIT, "too many pushes in progress for this account: at most %d at "
		       "a time (SANDBOXD_GIT_PUSHES_PER_ACCOUNT); try again when one has ended", max);
}

void pushslot_release(struct db *db, const char *account_id, int slot)
{
	struct err e = { .msg = "" };
	char s[16];

	snprintf(s, sizeof(s), "%d", slot);
	if (db_run(db, &e, UNLOCK, 2, account_id, s))
		log_info("push slot %d of account %s not released (%s): its connection's end did",
			 slot, account_id, e.msg);
}
