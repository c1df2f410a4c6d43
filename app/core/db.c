/* db.c: the process's PostgreSQL connection. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sandboxd/core/db.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

/* The most a statement takes; a sandbox's INSERT (sandbox_create.c) has 17. */
#define DB_MAX_PARAMS 24

void db_init(struct db *db, const char *url)
{
	db->conn = NULL;
	db->url = url;
	db->in_tx = 0;
	db->nprepared = 0;
	db->retry_ok = 0;
}

void db_close(struct db *db)
{
	if (db->conn)
		PQfinish(db->conn);
	db->conn = NULL;
	db->in_tx = 0;
	db->nprepared = 0;
}

/* Runs sql as a prepared statement, preparing it on first use. Falls back to a one-off
 * PQexecParams when the cache is full. */
static PGresult *run_prepared(struct db *db, const char *sql, int n, const char *const *params)
{
	char name[16];
	int i;

	for (i = 0; i < db->nprepared; i++)
		if (db->prepared[i] == sql)
			break;
	if (i == db->nprepared) {
		if (i == DB_PREPARED_MAX)
			return PQexecParams(db->conn, sql, n, NULL, params, NULL, NULL, 0);
		snprintf(name, sizeof(name), "s%d", i);
		PGresult *res = PQprepare(db->conn, name, sql, n, NULL);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			return res;
		PQclear(res);
		db->prepared[db->nprepared++] = sql;
	}
	snprintf(name, sizeof(name), "s%d", i);
	return PQexecPrepared(db->conn, name, n, params, NULL, NULL, 0);
}

static void notice(void *arg, const char *msg)
{
	(void)arg;
	(void)msg; /* NOTICEs (e.g. "relation already exists, skipping") are not events */
}

int db_ensure(struct db *db, struct err *e)
{
	if (db->conn && PQstatus(db->conn) == CONNECTION_OK)
		return 0;
	db_close(db);
	/* A short connect timeout: a request waiting on a dead server should get its 503 soon. */
	const char *keys[] = { "dbname", "connect_timeout", "application_name", NULL };
	const char *vals[] = { db->url, "5", "sandboxd", NULL };
	db->conn = PQconnectdbParams(keys, vals, 1);
	if (!db->conn || PQstatus(db->conn) != CONNECTION_OK) {
		err_set(e, ERR_DB, "database unavailable: %s",
			db->conn ? PQerrorMessage(db->conn) : "out of memory");
		db_close(db);
		return ERR_DB;
	}
	PQsetNoticeProcessor(db->conn, notice, NULL);
	return 0;
}

void db_request_start(struct db *db)
{
	db->retry_ok = 1;
}

static PGresult *vexec(struct db *db, struct err *e, int *code, const char *sql, int n,
		       va_list ap)
{
	const char *params[DB_MAX_PARAMS];
	PGresult *res;
	ExecStatusType st;
	int c;

	if (n > DB_MAX_PARAMS) {
		c = err_set(e, ERR_FAIL, "too many query parameters");
		goto fail;
	}
	for (int i = 0; i < n; i++)
		params[i] = va_arg(ap, const char *);
	if (!db->conn) {
		c = err_set(e, ERR_DB, "database unavailable: not connected");
		goto fail;
	}
	res = run_prepared(db, sql, n, params);
	st = PQresultStatus(res);
	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && db->retry_ok && !db->in_tx &&
	    PQstatus(db->conn) != CONNECTION_OK) {
		/* The server went away between requests (a restart): reconnect once. */
		PQclear(res);
		log_warn("database connection lost, reconnecting");
		db_close(db);
		if (db_ensure(db, e)) {
			c = ERR_DB;
			goto fail;
		}
		res = run_prepared(db, sql, n, params);
		st = PQresultStatus(res);
	}
	db->retry_ok = 0;
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
		return res;
	if (PQstatus(db->conn) != CONNECTION_OK) {
		c = err_set(e, ERR_DB, "database unavailable: %s", PQerrorMessage(db->conn));
		db->in_tx = 0;
	} else {
		const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
		c = state && strcmp(state, "23505") == 0 ? ERR_EXISTS : ERR_FAIL;
		err_set(e, c, "database error: %s",
			res ? PQresultErrorMessage(res) : PQerrorMessage(db->conn));
	}
	PQclear(res);
fail:
	if (code)
		*code = c;
	return NULL;
}

PGresult *db_exec(struct db *db, struct err *e, int *code, const char *sql, int n, ...)
{
	va_list ap;
	PGresult *res;

	va_start(ap, n);
	res = vexec(db, e, code, sql, n, ap);
	va_end(ap);
	return res;
}

int db_run(struct db *db, struct err *e, const char *sql, int n, ...)
{
	va_list ap;
	PGresult *res;
	int code = 0;

	va_start(ap, n);
	res = vexec(db, e, &code, sql, n, ap);
	va_end(ap);
	PQclear(res);
	return res ? 0 : code;
}

int db_begin(struct db *db, struct err *e)
{
	int rc;

	for (int attempt = 0; attempt < 2; attempt++) {
		if ((rc = db_ensure(db, e)))
			return rc;
		rc = db_run(db, e, "BEGIN", 0);
		if (rc == 0) {
			db->in_tx = 1;
			return 0;
		}
		if (rc != ERR_DB)
			return rc;
		log_warn("database connection lost, reconnecting");
		db_close(db);
	}
	return rc;
}

/* How long a COMMIT whose answer was lost waits for the server to tell its outcome: a
 * restart takes a few seconds; a server away for longer leaves the outcome unknown. */
#define OUTCOME_WAIT_MS 20000

/* The connection died with the COMMIT in flight (a restart, pg_terminate_backend): the
 * server may have committed before it went. Asks a new connection what became of xid, so
 * that a request is never answered 503 for work that was done. 0 when it committed. */
static int commit_outcome(struct db *db, const char *xid)
{
	struct err e2 = { .msg = "" };
	const char *st = NULL;
	PGresult *res = NULL;
	struct timespec t0, now;

	/* On the clock, not by counting tries: a connect may itself take its 5 s timeout. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		db_close(db);
		if (db_ensure(db, &e2) == 0 &&
		    (res = db_exec(db, &e2, NULL, "SELECT pg_xact_status($1::xid8)", 1, xid))) {
			st = db_val(res, 0, 0);
			/* "in progress": the old backend is still on its way out. */
			if (!st || strcmp(st, "in progress"))
				break;
			PQclear(res);
			res = NULL;
			st = NULL;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >=
		    OUTCOME_WAIT_MS)
			break;
		usleep(200000);
	}
	if (st && !strcmp(st, "committed")) {
		log_warn("transaction %s committed though its COMMIT's answer was lost", xid);
		PQclear(res);
		return 0;
	}
	if (!st || strcmp(st, "aborted"))
		log_error("transaction %s: its COMMIT's answer was lost and its outcome is "
			  "unknown (%s); it may have committed", xid, st ? st : e2.msg);
	PQclear(res);
	return ERR_DB;
}

/* The COMMIT, after the statement sql that names the transaction (its first column). */
static int commit_after(struct db *db, const char *sql, struct err *e)
{
	PGresult *res;
	char xid[24] = "";
	int rc = 0;

	if (!db->in_tx)
		return 0;
	/* Which transaction this is, to look it up if the COMMIT's answer is lost. NULL when
	 * it wrote nothing (then there is nothing to lose); an error here is a transaction that
	 * failed earlier, which the COMMIT below rolls back. */
	res = db_exec(db, e, &rc, sql, 0);
	if (!res && rc == ERR_DB)
		return rc; /* lost before the COMMIT was sent: nothing committed */
	if (res && db_val(res, 0, 0))
		snprintf(xid, sizeof(xid), "%s", db_val(res, 0, 0));
	PQclear(res);
	db->in_tx = 0;
	res = db_exec(db, e, &rc, "COMMIT", 0);
	if (!res)
		return rc == ERR_DB && xid[0] ? commit_outcome(db, xid) : rc;
	/* A transaction that failed earlier answers COMMIT with the tag ROLLBACK. */
	if (strcmp(PQcmdStatus(res), "COMMIT"))
		rc = err_set(e, ERR_FAIL, "transaction rolled back");
	PQclear(res);
	return rc;
}

int db_commit(struct db *db, struct err *e)
{
	return commit_after(db, "SELECT pg_current_xact_id_if_assigned()", e);
}

int db_commit_lazy(struct db *db, struct err *e)
{
	/* set_config(…, true) is SET LOCAL, in the round trip the COMMIT needs anyway. */
	return commit_after(db, "SELECT pg_current_xact_id_if_assigned(),"
				" set_config('synchronous_commit', 'off', true)", e);
}

void db_rollback(struct db *db)
{
	if (!db->in_tx)
		return;
	db->in_tx = 0;
	PQclear(PQexec(db->conn, "ROLLBACK"));
}

const char *db_val(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

int db_bool(const PGresult *res, int row, int col)
{
	const char *v = db_val(res, row, col);
	return v && v[0] == 't';
}
