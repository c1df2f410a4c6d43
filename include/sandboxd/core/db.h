/* db.h: one libpq connection per process, reused across requests and reconnected when
 * lost. Only parameterised queries. A lost connection is ERR_DB (the caller answers 503)
 * and the next db_ensure reconnects. */
#ifndef SANDBOXD_DB_H
#define SANDBOXD_DB_H
#include <libpq-fe.h>
#include "sandboxd/common/err.h"

/* A row id (a bigint) as text, with its NUL: the size of every id field. */
#define DB_ID_MAX 24
#define DB_PREPARED_MAX 64

struct db {
	PGconn *conn;
	const char *url;
	int in_tx;
	/* Set by db_request_start: until a statement succeeds, a connection found dead is
	 * reopened and the statement retried once (nothing has happened yet to lose). */
	int retry_ok;
	/* Statements prepared on this connection, keyed by the address of their SQL text (a
	 * string literal, so stable): parsing and planning once per connection, not per call. */
	const char *prepared[DB_PREPARED_MAX];
	int nprepared;
};

void db_init(struct db *db, const char *url);
void db_close(struct db *db);
/* Marks the start of a request (see retry_ok). */
void db_request_start(struct db *db);
/* Connects if there is no healthy connection. 0 or ERR_DB. */
int db_ensure(struct db *db, struct err *e) __attribute__((warn_unused_result));
/* Runs sql with n text parameters (each a const char *, NULL for SQL NULL). Returns a result
 * to PQclear, or NULL with e filled and *code (if not NULL) set: ERR_DB when the connection is
 * gone, ERR_EXISTS on a unique violation, ERR_FAIL otherwise. */
PGresult *db_exec(struct db *db, struct err *e, int *code, const char *sql, int n, ...);
/* Runs a statement and discards the result. 0 or the code as above. */
int db_run(struct db *db, struct err *e, const char *sql, int n, ...)
	__attribute__((warn_unused_result));
/* BEGIN, reconnecting once if the connection turns out to be dead (nothing has happened yet,
 * so the retry is safe). */
int db_begin(struct db *db, struct err *e) __attribute__((warn_unused_result));
int db_commit(struct db *db, struct err *e) __attribute__((warn_unused_result));
/* COMMIT without waiting for its WAL flush (synchronous_commit off): seen by every other
 * session at once, lost only if the server crashes before a later full commit (any
 * session's) flushes the WAL past it. For steps a full commit follows at once. */
int db_commit_lazy(struct db *db, struct err *e) __attribute__((warn_unused_result));
/* Never fails from the caller's point of view: a dead connection has no transaction. */
void db_rollback(struct db *db);

/* The value of row, col or NULL when SQL NULL. */
const char *db_val(const PGresult *res, int row, int col);
int db_bool(const PGresult *res, int row, int col) __attribute__((warn_unused_result));

#endif
