/* engine_admin.c: sandboxctl engine's changes to docker_engines (engine_admin.h). */
#include <stdio.h>
#include <string.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/engine/engine_admin.h"
#include "sandboxd/proto/engine_list.h"
#include "sandboxd/common/banned.h"

/* Docker's runtime names as daemon.json keys go (sql/031 checks the same). */
static int runtime_valid(const char *r)
{
	size_t n = strlen(r);

	if (n < 1 || n > 63 || !((r[0] >= 'a' && r[0] <= 'z') || (r[0] >= 'A' && r[0] <= 'Z') ||
				 (r[0] >= '0' && r[0] <= '9')))
		return 0;
	return strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int runtime_refused(const char *r, struct err *e)
{
	return err_set(e, ERR_INVALID, "the runtime name '%.80s' must be 1 to 63 of "
		       "[A-Za-z0-9._-], starting with a letter or digit", r);
}

int engine_add(struct db *db, const char *name, const char *url, const char *ca,
	       const char *cert, const char *key, int max, int insecure, const char *runtime,
	       struct err *e)
{
	int ntls = !!str_or_null(ca) + !!str_or_null(cert) + !!str_or_null(key);
	char room[16];
	int rc;

	if (!engine_name_valid(name))
		return err_set(e, ERR_INVALID, "the engine name '%.80s' must be 1 to 63 of "
			       "[a-z0-9._-], starting with a letter or digit", name);
	if (!engine_url_valid(url))
		return err_set(e, ERR_INVALID, "the engine URL '%.80s' must be unix:///path, "
			       "tcp://host:port or https://host:port", url);
	if (ntls != 0 && ntls != 3)
		return err_set(e, ERR_INVALID, "TLS needs all of --ca, --cert and --key");
	if (ntls && strncmp(url, "unix://", 7) == 0)
		return err_set(e, ERR_INVALID, "a unix:// engine takes no TLS files");
	if (!ntls && strncmp(url, "https://", 8) == 0)
		return err_set(e, ERR_INVALID, "an https:// engine needs --ca, --cert and --key");
	if (!ntls && !insecure && engine_url_plain_tcp(url))
		return err_set(e, ERR_INVALID, "a tcp:// engine without --ca, --cert and --key is "
			       "plain HTTP (whoever reaches it is root on its machine): give them, "
			       "or say --insecure");
	if (max < 0)
		return err_set(e, ERR_INVALID, "--max must be 0 or more");
	if (runtime && !runtime_valid(runtime))
		return runtime_refused(runtime, e);
	snprintf(room, sizeof(room), "%d", max);
	rc = db_run(db, e, "INSERT INTO docker_engines (name, url, ca_file, cert_file, key_file,"
			   "                            max_sandboxes, gvisor_runtime)"
			   " VALUES ($1, $2, $3, $4, $5, $6::int, $7)",
		    7, name, url, str_or_null(ca), str_or_null(cert), str_or_null(key), room,
		    runtime);
	if (rc == ERR_EXISTS)
		return err_set(e, ERR_EXISTS, "the engine %s is already registered", name);
	return rc;
}

int engine_set_runtime(struct db *db, const char *name, const char *runtime, struct err *e)
{
	int code = 0, n;
	PGresult *res;

	if (runtime && !runtime_valid(runtime))
		return runtime_refused(runtime, e);
	res = db_exec(db, e, &code, "UPDATE docker_engines SET gvisor_runtime = $2 WHERE name = $1"
				    " RETURNING 1", 2, name, runtime);
	if (!res)
		return code;
	n = PQntuples(res);
	PQclear(res);
	return n ? 0 : err_set(e, ERR_NOTFOUND, "no engine is named %.80s", name);
}

int engine_set_state(struct db *db, const char *name, const char *state, struct err *e)
{
	int code = 0, n;
	PGresult *res = db_exec(db, e, &code,
				"UPDATE docker_engines SET state = $2 WHERE name = $1 RETURNING 1",
				2, name, state);

	if (!res)
		return code;
	n = PQntuples(res);
	PQclear(res);
	return n ? 0 : err_set(e, ERR_NOTFOUND, "no engine is named %.80s", name);
}

int engine_remove(struct db *db, const char *name, struct err *e)
{
	int code = 0, rc;
	PGresult *res;

	/* Under the placement lock (engine.h): no create puts a sandbox there between the
	 * count and the delete. */
	if ((rc = db_begin(db, e)) ||
	    (rc = db_run(db, e, "SELECT pg_advisory_xact_lock(" ENGINE_PLACE_LOCK ")", 0))) {
		db_rollback(db);
		return rc;
	}
	res = db_exec(db, e, &code,
		      "SELECT sandboxes, pooled FROM engine_room WHERE name = $1", 1, name);
	if (!res) {
		db_rollback(db);
		return code;
	}
	if (PQntuples(res) != 1) {
		PQclear(res);
		db_rollback(db);
		return err_set(e, ERR_NOTFOUND, "no engine is named %.80s", name);
	}
	if (strcmp(db_val(res, 0, 0), "0") || strcmp(db_val(res, 0, 1), "0")) {
		rc = err_set(e, ERR_EXISTS, "the engine %s still runs %s sandboxes and %s warm "
			     "containers: drain it and wait for them to end", name,
			     db_val(res, 0, 0), db_val(res, 0, 1));
		PQclear(res);
		db_rollback(db);
		return rc;
	}
	PQclear(res);
	/* Ended sandboxes keep their rows; their engine reads NULL from now (sql/021). */
	if ((rc = db_run(db, e, "DELETE FROM docker_engines WHERE name = $1", 1, name)) ||
	    (rc = db_commit(db, e)))
		db_rollback(db);
	return rc;
}

int engine_print(struct db *db, FILE *out, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT name, state, CASE WHEN healthy THEN 'up' ELSE 'down' END,"
				"       sandboxes, pooled, max_sandboxes, url,"
				"       coalesce('  gvisor ' || (SELECT d.gvisor_runtime FROM docker_engines d"
				"                                 WHERE d.name = engine_room.name), '')"
				"       || coalesce('  host ' || relay_url"
				"                || CASE WHEN host_up THEN '' ELSE ' (down)' END, '')"
				"  FROM engine_room ORDER BY name", 0);

	if (!res)
		return code;
	fprintf(out, "%-20s %-9s %-6s %9s %7s %6s  %s\n", "NAME", "STATE", "HEALTH", "SANDBOXES",
		"POOLED", "MAX", "URL");
	/* Its gVisor runtime (sql/031) and the owner host (sql/022), when it has them, after
	 * the URL. */
	for (int i = 0; i < PQntuples(res); i++)
		fprintf(out, "%-20s %-9s %-6s %9s %7s %6s  %s%s\n", db_val(res, i, 0),
			db_val(res, i, 1), db_val(res, i, 2), db_val(res, i, 3), db_val(res, i, 4),
			db_val(res, i, 5), db_val(res, i, 6), db_val(res, i, 7));
	PQclear(res);
	return 0;
}
