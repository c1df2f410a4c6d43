/* isolation.c: which runtime a sandbox runs under, and whether the engine has it
 * (isolation.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/engine/isolation.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

/* Answers kept per engine and runtime asked: a create asks once a TTL, not every time. */
#define KEPT_MAX 8
struct kept {
	char host[520];
	char want[BOX_RUNTIME_MAX + 1];
	struct box_runtimes rt;
	time_t at;
};
static struct kept kept[KEPT_MAX];

static struct kept *kept_find(const char *host, const char *want)
{
	for (int i = 0; i < KEPT_MAX; i++)
		if (kept[i].at && !strcmp(kept[i].host, host) && !strcmp(kept[i].want, want))
			return &kept[i];
	return NULL;
}

/* The current engine's runtimes (want: the one asked about, "" none). */
static int runtimes(const char *want, struct box_runtimes *out, struct err *e)
{
	const char *host = box_selected()->current();
	time_t now = time(NULL);
	struct kept *k = kept_find(host, want);
	int rc;

	if (k && now >= k->at && now - k->at < ISOLATION_TTL_S) {
		*out = k->rt;
		return 0;
	}
	if ((rc = box_runtimes(want, out, BOX_CALL_MS, e)))
		return rc;
	/* Only what will still hold: an engine that lacks the runtime is asked again. */
	if (*want && !out->has)
		return 0;
	if (!k)
		k = &kept[now % KEPT_MAX];
	snprintf(k->host, sizeof(k->host), "%s", host);
	snprintf(k->want, sizeof(k->want), "%s", want);
	k->rt = *out;
	k->at = now;
	return 0;
}

int isolation_gvisor_offered(struct db *db, int *offered, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT EXISTS (SELECT 1 FROM docker_engines"
				"                WHERE gvisor_runtime IS NOT NULL AND state = 'active')",
				0);

	*offered = 0;
	if (!res)
		return code;
	*offered = db_bool(res, 0, 0);
	PQclear(res);
	return 0;
}

/* The engine's gVisor runtime by name: 0, or ERR_NOSTART when it has none (an operator took
 * it away since the placement). */
static int gvisor_runtime_of(struct db *db, const char *engine, char out[BOX_RUNTIME_MAX + 1],
			     struct err *e)
{
	int code = 0, rc;
	PGresult *res = db_exec(db, e, &code,
				"SELECT gvisor_runtime FROM docker_engines"
				" WHERE name = $1 AND gvisor_runtime IS NOT NULL", 1, engine);

	if (!res)
		return code;
	rc = PQntuples(res) == 1 ? str_copy(out, BOX_RUNTIME_MAX + 1, db_val(res, 0, 0)) : 1;
	PQclear(res);
	return rc ? err_set(e, ERR_NOSTART, "the engine %s offers no gVisor runtime: isolation "
			    "gvisor cannot run there", engine) : 0;
}

/* The engine's word on runtime want, as the create and /healthz tell it. */
static int check(const char *engine, const char *want, struct err *e)
{
	struct box_runtimes rt;
	int rc = runtimes(want, &rt, e);

	if (rc)
		return rc;
	if (!rt.listed)
		return err_set(e, ERR_NOSTART, "the engine %s does not list its runtimes (a Docker "
			       "older than 1.12): isolation gvisor cannot run there", engine);
	if (!rt.has)
		return err_set(e, ERR_NOSTART, "the engine %s has no runtime %s: isolation gvisor "
			       "cannot run there", engine, want);
	return 0;
}

int isolation_runtime(struct db *db, const char *engine, int gvisor,
		      char runtime[BOX_RUNTIME_MAX + 1], struct err *e)
{
	struct box_runtimes rt;
	struct err ignored;
	int rc;

	runtime[0] = 0;
	if (gvisor) {
		if ((rc = gvisor_runtime_of(db, engine, runtime, e)) ||
		    (rc = check(engine, runtime, e)))
			runtime[0] = 0;
		/* An engine that does not answer: the create did not start, and says why. */
		if (rc && rc != ERR_NOSTART && rc != ERR_DB) {
			char why[sizeof(e->msg)];
			snprintf(why, sizeof(why), "%s", e->msg);
			rc = err_set(e, ERR_NOSTART, "%s", why);
		}
		return rc;
	}
	if (runtimes("", &rt, &ignored) == 0)
		memcpy(runtime, rt.deflt, sizeof(rt.deflt));
	return 0;
}

json_object *isolation_health(struct db *db)
{
	json_object *o, *list;
	struct err e = { .msg = "" };
	int code = 0;
	PGresult *res = db_exec(db, &e, &code,
				"SELECT name, gvisor_runtime FROM docker_engines"
				" WHERE gvisor_runtime IS NOT NULL"
				"   AND coalesce(relay_url, '') IN ('', $1)"
				" ORDER BY name LIMIT 16", 1, engine_relay_url());

	if (!res)
		return NULL;
	o = json_object_new_object();
	list = json_object_new_array();
	json_object_object_add(o, ISOLATION_GVISOR, list);
	for (int i = 0; i < PQntuples(res); i++) {
		const char *name = db_val(res, i, 0), *want = db_val(res, i, 1);
		json_object *one = json_object_new_object();
		struct err why = { .msg = "" };
		int ready = engine_use(db, name, &why) == 0 && check(name, want, &why) == 0;

		json_add_str(one, "engine", name);
		json_add_str(one, "runtime", want);
		json_add_bool(one, "ready", ready);
		if (!ready)
			json_add_str(one, "error", why.msg);
		json_object_array_add(list, one);
	}
	PQclear(res);
	if (engine_use_own(&e))
		log_warn("healthz: back to the configured engine: %s", e.msg);
	return o;
}
