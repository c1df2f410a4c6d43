/* exec_slots.c: the caps on concurrent execs, counted in the database (exec_slots.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/sandbox/exec_slots.h"
#include "sandboxd/sandbox/exec.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

int exec_slot_take(struct db *db, const struct sandbox *s, const char *account_id,
		   const char *request_id, int64_t secs, const struct exec_slot_caps *caps,
		   long long *id, struct err *e)
{
	char n[24];
	int code = 0;
	PGresult *res;

	*id = 0;
	snprintf(n, sizeof(n), "%lld", (long long)secs);
	/* The account's lock, then the sandbox's, always in that order: two execs of the same
	 * account, or of the same sandbox, count and insert one after the other. */
	if (db_run(db, e, "SELECT pg_advisory_xact_lock(hashtextextended('exec_slots:a:' || $1, 0)),"
			  "       pg_advisory_xact_lock(hashtextextended('exec_slots:s:' || $2, 0))",
		   2, account_id, s->id))
		return ERR_DB;
	const char *kind = caps->parked ? "parked" : "exec",
		   *what = caps->parked ? "calls waiting for the clone" : "execs running";
	res = db_exec(db, e, &code,
		      "SELECT (SELECT count(*) FROM exec_slots"
		      "         WHERE sandbox_id = $1 AND kind = $3 AND expires_at > now()),"
		      "       (SELECT count(*) FROM exec_slots x JOIN sandboxes s ON s.id = x.sandbox_id"
		      "         WHERE x.account_id = $2 AND x.kind = $3 AND x.expires_at > now()"
		      "           AND s.state IN ('starting', 'ready'))",
		      3, s->id, account_id, kind);
	if (!res)
		return code;
	long long in_sandbox = strtoll(db_val(res, 0, 0), NULL, 10),
		  in_account = strtoll(db_val(res, 0, 1), NULL, 10);
	PQclear(res);
	if (in_sandbox >= caps->per_sandbox)
		return err_box(e, 429, "too many %s in this sandbox (%d)", what, caps->per_sandbox);
	if (in_account >= caps->per_account)
		return err_box(e, 429, "too many %s for this account (%d)", what, caps->per_account);
	res = db_exec(db, e, &code,
		      "INSERT INTO exec_slots (sandbox_id, account_id, request_id, kind, expires_at)"
		      " VALUES ($1, $2, $3, $5, now() + make_interval(secs => $4::bigint)) RETURNING id",
		      5, s->id, account_id, request_id, n, kind);
	if (!res)
		return code;
	*id = PQntuples(res) == 1 ? strtoll(db_val(res, 0, 0), NULL, 10) : 0;
	PQclear(res);
	return *id > 0 ? 0 : err_set(e, ERR_DB, "no exec_slots row");
}

void exec_slot_release(struct db *db, long long id)
{
	char sid[24];
	struct err e;

	if (id <= 0)
		return;
	snprintf(sid, sizeof(sid), "%lld", id);
	if (db_ensure(db, &e) || db_run(db, &e, "DELETE FROM exec_slots WHERE id = $1", 1, sid))
		log_warn("exec slot %lld: not given back (it expires): %s", id, e.msg);
}

void exec_slot_parked_done(struct db *db, const char *sandbox_id, const char *request_id)
{
	struct err e;

	if (db_ensure(db, &e) ||
	    db_run(db, &e, "DELETE FROM exec_slots WHERE kind = 'parked' AND request_id = $1"
			   " AND sandbox_id = $2", 2, request_id, sandbox_id))
		log_warn("parked call %s: its slot not given back (it expires): %s", request_id,
			 e.msg);
}

int exec_slot_detach(struct db *db, long long id, const char *exec_id, struct err *e)
{
	char sid[24];

	snprintf(sid, sizeof(sid), "%lld", id);
	return db_run(db, e, "UPDATE exec_slots SET exec_id = $2 WHERE id = $1", 2, sid, exec_id);
}

int exec_slot_held(struct db *db, long long id, long long held_id, struct err *e)
{
	char sid[24], hid[24];

	snprintf(sid, sizeof(sid), "%lld", id);
	snprintf(hid, sizeof(hid), "%lld", held_id);
	return db_run(db, e, "UPDATE exec_slots SET held_id = $2 WHERE id = $1", 2, sid, hid);
}

void exec_slot_detached_ended(struct db *db, const char *sandbox_id, const char *exec_id)
{
	struct err e;

	if (db_run(db, &e, "DELETE FROM exec_slots WHERE sandbox_id = $1 AND exec_id = $2", 2,
		   sandbox_id, exec_id))
		log_warn("detached exec %s: its slot not given back (it expires): %s", exec_id,
			 e.msg);
}

#define REFRESH_MAX 64

/* When each worker may next ask a sandbox's agent (CLOCK_MONOTONIC ms): once per
 * REFRESH_EVERY_MS per sandbox and worker, REFRESH_AWAY_MS after an ask that failed. An
 * agent stopped or filled from inside makes an ask wait for its time-out (1.5 s), and
 * asked at every refusal a burst of them held every worker (bench abuse: another account's
 * GET p99 188 ms). Kept here, not in the database: a refusal rolls its transaction back. */
#define REFRESH_EVERY_MS 5000
#define REFRESH_AWAY_MS 30000
static struct {
	char sandbox_id[64];
	int64_t next_ms;
} asked[16];

/* 1: this worker asks s's agent now (and not again before next_ms). */
static int refresh_claim(const char *sandbox_id, int64_t now)
{
	size_t i, oldest = 0;

	for (i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
		if (strcmp(asked[i].sandbox_id, sandbox_id) == 0)
			break;
		if (asked[i].next_ms < asked[oldest].next_ms)
			oldest = i;
	}
	if (i == sizeof(asked) / sizeof(asked[0])) {
		i = oldest;
		snprintf(asked[i].sandbox_id, sizeof(asked[i].sandbox_id), "%s", sandbox_id);
		asked[i].next_ms = 0;
	}
	if (now < asked[i].next_ms)
		return 0;
	asked[i].next_ms = now + REFRESH_EVERY_MS;
	return 1;
}

static void refresh_defer(const char *sandbox_id, int64_t now)
{
	for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++)
		if (strcmp(asked[i].sandbox_id, sandbox_id) == 0)
			asked[i].next_ms = now + REFRESH_AWAY_MS;
}

int exec_slots_refresh(struct db *db, const struct sandbox *s, const char *network)
{
	static const char *const backends[] = { "agent", "docker" };
	struct exec_state st[REFRESH_MAX];
	const char *ids[REFRESH_MAX];
	int code = 0, gone = 0;
	struct err e;
	PGresult *res;

	if (!refresh_claim(s->id, clock_ms()))
		return 0;
	res = db_exec(db, &e, &code,
				"SELECT x.exec_id, d.backend FROM exec_slots x"
				"  JOIN detached_execs d ON d.sandbox_id = x.sandbox_id AND d.id = x.exec_id"
				" WHERE x.sandbox_id = $1 AND x.expires_at > now()"
				" ORDER BY x.id LIMIT 64", 1, s->id);

	if (!res) {
		log_warn("sandbox %s: its detached execs' slots: %s", s->id, e.msg);
		return 0;
	}
	for (int b = 0; b < 2; b++) {
		size_t n = 0;

		for (int i = 0; i < PQntuples(res); i++)
			if (strcmp(db_val(res, i, 1), backends[b]) == 0)
				ids[n++] = db_val(res, i, 0);
		if (!n)
			continue;
		if (exec_detach_states(s, network, backends[b], ids, n, st, &e)) {
			log_info("sandbox %s: its detached execs' states: %s", s->id, e.msg);
			refresh_defer(s->id, clock_ms());
			continue;
		}
		for (size_t k = 0; k < n; k++)
			if (!st[k].found || st[k].ended) {
				exec_slot_detached_ended(db, s->id, ids[k]);
				gone++;
			}
	}
	PQclear(res);
	return gone;
}

int exec_slots_reap(struct db *db, struct err *e)
{
	int code = 0, n;
	PGresult *res = db_exec(db, e, &code,
				"DELETE FROM exec_slots x WHERE x.expires_at <= now()"
				"    OR NOT EXISTS (SELECT 1 FROM sandboxes s WHERE s.id = x.sandbox_id"
				"                     AND s.state IN ('starting', 'ready'))", 0);

	if (!res)
		return -1;
	n = (int)strtol(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return n;
}
