/* sandboxctl migrate: applies the migrations compiled in from sql/, each once, in order. */
#include <stdio.h>
#include "sandboxd/core/migrations.h"
#include "ctl.h"
#include "sandboxd/common/banned.h"

int cmd_migrate(int argc, char **argv)
{
	struct err e;
	int rc, applied = 0;

	if (wants_help(argc, argv))
		return help("migrate");
	if (argc != 1)
		return usage("migrate takes no arguments");
	if ((rc = connect_db(&e)))
		return fail(rc, &e);
	/* One migrator at a time, across hosts: an advisory lock on a fixed key. */
	if ((rc = db_run(&db, &e, "SELECT pg_advisory_lock(7370001)", 0)))
		return fail(rc, &e);
	/* Only create the table when it is missing, so that a role that may not create
	 * anything can still ask whether the schema is up to date. */
	PGresult *have = db_exec(&db, &e, &rc, "SELECT to_regclass('schema_migrations') IS NOT NULL", 0);
	if (!have)
		return fail(rc, &e);
	int exists = db_bool(have, 0, 0);
	PQclear(have);
	if (!exists && (rc = db_run(&db, &e,
				    "CREATE TABLE schema_migrations ("
				    " version integer PRIMARY KEY, name text NOT NULL,"
				    " applied_at timestamptz NOT NULL DEFAULT now())", 0)))
		return fail(rc, &e);
	for (int i = 0; i < migrations_count; i++) {
		const struct migration *m = &migrations[i];
		char v[16];
		PGresult *res;
		int code = 0;

		snprintf(v, sizeof(v), "%d", m->version);
		res = db_exec(&db, &e, &code, "SELECT 1 FROM schema_migrations WHERE version = $1",
			      1, v);
		if (!res)
			return fail(code, &e);
		int done = PQntuples(res) > 0;
		PQclear(res);
		if (done)
			continue;
		if ((rc = db_begin(&db, &e)))
			return fail(rc, &e);
		/* Our own file, several statements: the one place without parameters. */
		res = PQexec(db.conn, m->sql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK) {
			fprintf(stderr, "sandboxctl: migration %s failed: %s", m->name,
				PQresultErrorMessage(res));
			PQclear(res);
			db_rollback(&db);
			return EXIT_FAIL;
		}
		PQclear(res);
		if ((rc = db_run(&db, &e, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
				 2, v, m->name)) ||
		    (rc = db_commit(&db, &e)))
			return fail(rc, &e);
		printf("applied %s\n", m->name);
		applied++;
	}
	if (!applied)
		printf("database is up to date\n");
	return EXIT_OK;
}
