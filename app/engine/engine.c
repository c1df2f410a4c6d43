/* engine.c: the Docker engines, placement and each sandbox's engine (engine.h). */
#include <stdio.h>
#include <string.h>
#include "sandboxd/lib/clock.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

#define CACHE_MAX 64
#define CACHE_STALE_MS 60000     /* a known one is read again after this (a changed URL) */

/* The engines this process has read, to route calls without a query each. */
struct entry {
	char name[ENGINE_NAME_MAX + 1];
	char url[ENGINE_URL_MAX + 1];
	char ca[256], cert[256], key[256];
	char relay[RELAY_URL_MAX + 1];     /* the host that owns it; "": any host */
	const struct engine_ops *ops;      /* its kind's calls (box.h) */
};
static struct entry cache[CACHE_MAX];
static int ncache;
static int64_t loaded_ms = -CACHE_STALE_MS;
static int registered;   /* this process wrote its engines once (engine_place) */
static const struct config *cfg;   /* engine_init's */
/* The own engine's kind, and every registered one's: docker_engines has no kind column
 * yet, so every engine is a Docker engine (decision 0080). */
#define KIND "docker"
static const struct engine_ops *own_ops;

int engine_init(const struct config *c, struct err *e)
{
	struct box_target own = { c->docker_host, str_or_null(c->docker_ca),
				  str_or_null(c->docker_cert), str_or_null(c->docker_key) };

	cfg = c;
	own_ops = box_kind(KIND);
	box_select(own_ops);
	return box_selected()->init(&own, e);
}

int engine_use_own(struct err *e)
{
	box_select(own_ops);
	return box_selected()->use(NULL, e);
}

void engine_refuse(const char *why)
{
	box_selected()->refuse(why);
}

void engine_cleanup(void)
{
	box_selected()->cleanup();
}

static int is_own(const char *name)
{
	return !name || !*name || !cfg || strcmp(name, cfg->engine_name) == 0;
}

int engine_here(const char *relay_url)
{
	return !relay_url || !*relay_url || (cfg && strcmp(relay_url, cfg->relay_url) == 0);
}

const char *engine_relay_url(void)
{
	return cfg ? cfg->relay_url : "";
}

/* One engine's row: the URL, its TLS files (for a tcp:// or https:// one), the room, and
 * this host as its owner (SANDBOXD_RELAY_URL; none without it). An engine another host
 * owns and still runs (its reaper's lease) is not taken over: two hosts that give their
 * engines one name would call each other's Docker. */
static int upsert(struct db *db, const char *name, const char *url, int max, struct err *e)
{
	int tls = strncmp(url, "unix://", 7) != 0 && cfg->docker_ca[0];
	char room[16];
	int code = 0;

	snprintf(room, sizeof(room), "%d", max);
	PGresult *res = db_exec(db, e, &code,
		"INSERT INTO docker_engines (name, url, ca_file, cert_file, key_file,"
		"                            max_sandboxes, relay_url)"
		" VALUES ($1, $2, $3, $4, $5, $6::int, $7)"
		" ON CONFLICT (name) DO UPDATE SET url = excluded.url,"
		"   ca_file = excluded.ca_file, cert_file = excluded.cert_file,"
		"   key_file = excluded.key_file, max_sandboxes = excluded.max_sandboxes,"
		"   relay_url = excluded.relay_url"
		" WHERE docker_engines.relay_url IS NOT DISTINCT FROM excluded.relay_url"
		"    OR docker_engines.relay_url IS NULL"
		"    OR NOT EXISTS (SELECT 1 FROM leases l WHERE l.expires_at > now()"
		"                    AND l.name = 'reaper@' || docker_engines.relay_url)"
		" RETURNING 1", 7, name, url, tls ? cfg->docker_ca : NULL,
		tls ? str_or_null(cfg->docker_cert) : NULL,
		tls ? str_or_null(cfg->docker_key) : NULL, room, str_or_null(cfg->relay_url));

	if (!res)
		return code;
	int taken = PQntuples(res) == 1;
	PQclear(res);
	if (!taken)
		return err_set(e, ERR_EXISTS, "the engine %s belongs to another host, which is "
			       "running: give this host's engines names of their own "
			       "(SANDBOXD_ENGINE_NAME, SANDBOXD_DOCKER_HOSTS)", name);
	return 0;
}

/* The rows; with backfill, the live sandboxes made before 021 get the own engine (the
 * reaper's, outside any transaction: it locks those rows). */
static int write_rows(struct db *db, int backfill, struct err *e)
{
	if (!cfg)
		return err_set(e, ERR_FAIL, "engine_init was not called");
	char name[ENGINE_NAME_MAX + 1], url[ENGINE_URL_MAX + 1];
	size_t pos = 0;
	int rc;

	if ((rc = upsert(db, cfg->engine_name, cfg->docker_host, cfg->engine_max, e)))
		return rc;
	while ((rc = engine_list_next(cfg->docker_hosts, &pos, name, url, e)) == 1)
		if ((rc = upsert(db, name, url, cfg->engine_max, e)))
			return rc;
	if (rc < 0)
		return ERR_FAIL;   /* config.c checked the list: not reached */
	if (backfill)
		rc = db_run(db, e, "UPDATE sandboxes SET engine = $1"
				   " WHERE engine IS NULL AND state IN ('starting', 'ready')", 1,
			    cfg->engine_name);
	if (!rc)
		loaded_ms = -CACHE_STALE_MS;   /* read what was written at the next use */
	return rc;
}

int engine_register(struct db *db, struct err *e)
{
	return write_rows(db, 1, e);
}

static int reload(struct db *db, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT name, url, coalesce(ca_file, ''), coalesce(cert_file, ''),"
				"       coalesce(key_file, ''), coalesce(relay_url, '')"
				"  FROM docker_engines ORDER BY name LIMIT " "64", 0);

	if (!res)
		return code;
	ncache = 0;
	for (int i = 0; i < PQntuples(res) && ncache < CACHE_MAX; i++) {
		struct entry *x = &cache[ncache];
		if (str_copy(x->name, sizeof(x->name), db_val(res, i, 0)) ||
		    str_copy(x->url, sizeof(x->url), db_val(res, i, 1)) ||
		    str_copy(x->ca, sizeof(x->ca), db_val(res, i, 2)) ||
		    str_copy(x->cert, sizeof(x->cert), db_val(res, i, 3)) ||
		    str_copy(x->key, sizeof(x->key), db_val(res, i, 4)) ||
		    str_copy(x->relay, sizeof(x->relay), db_val(res, i, 5))) {
			log_warn("engine %.63s: a setting is longer than sandboxd keeps: skipped",
				 db_val(res, i, 0));
			continue;
		}
		/* A kind column would name the table here (decision 0080). */
		x->ops = box_kind(KIND);
		ncache++;
	}
	PQclear(res);
	loaded_ms = clock_ms();
	return 0;
}

static const struct entry *find(const char *name)
{
	for (int i = 0; i < ncache; i++)
		if (strcmp(cache[i].name, name) == 0)
			return &cache[i];
	return NULL;
}

static int use_entry(const struct entry *x, struct err *e)
{
	struct box_target t = { x->url, str_or_null(x->ca), str_or_null(x->cert),
				str_or_null(x->key) };

	box_select(x->ops);
	return box_selected()->use(&t, e);
}

int engine_use(struct db *db, const char *name, struct err *e)
{
	const struct entry *x;
	int64_t now = clock_ms();
	int rc;

	if (is_own(name))
		return engine_use_own(e);
	/* A name this process has not seen is read at once: sandboxes.engine references the
	 * table, so it names an engine added since the last read (a placement just chose it). */
	x = find(name);
	if (!x || now - loaded_ms >= CACHE_STALE_MS) {
		if ((rc = reload(db, e))) {
			engine_refuse(e->msg);
			return rc;
		}
		x = find(name);
	}
	if (!x)
		rc = err_set(e, ERR_DOCKER, "docker unavailable: the engine %s is not registered",
			     name);
	/* Another host's engine is called by that host only: a unix:// URL names a socket on
	 * the owner's machine, which here may be another engine altogether. */
	else if (!engine_here(x->relay))
		rc = err_set(e, ERR_DOCKER, "docker unavailable: the engine %s belongs to the host "
			     "at %s", name, x->relay);
	else
		rc = use_entry(x, e);
	/* Nothing goes to whichever engine the last call used: calls fail with why. */
	if (rc)
		engine_refuse(e->msg);
	return rc;
}

#define WARM_HERE "EXISTS (SELECT 1 FROM warm_containers w WHERE w.instance = r.name" \
		  "        AND w.state = 'ready' AND w.image = $1 AND w.container_id IS NOT NULL)"

/* The placement's query: $1 the image, $2 a warm container may serve, $3 this host's
 * engines only, $4 this host's relay URL ("" without one: then only engines no host owns
 * are this host's, and no other host can be relayed to), $5 engines with a gVisor runtime
 * only (sql/031). An engine whose owner host is down (its reaper's lease lapsed) counts as
 * one that missed its ping. */
#define PLACE_SQL \
	"SELECT r.name, r.max_sandboxes - r.sandboxes - r.pooled > 0, coalesce(r.relay_url, '')" \
	"  FROM engine_room r WHERE r.state = 'active'" \
	"   AND (r.max_sandboxes - r.sandboxes - r.pooled > 0 OR ($2 AND " WARM_HERE "))" \
	"   AND (coalesce(r.relay_url, '') IN ('', $4) OR (NOT $3 AND $4 <> ''))" \
	"   AND (NOT $5 OR EXISTS (SELECT 1 FROM docker_engines g WHERE g.name = r.name" \
	"                           AND g.gvisor_runtime IS NOT NULL))" \
	" ORDER BY r.healthy AND r.host_up DESC, ($2 AND " WARM_HERE ") DESC," \
	"          r.max_sandboxes - r.sandboxes - r.pooled DESC, r.name" \
	" LIMIT 1"

int engine_place(struct db *db, const char *image, int warm, int here_only, int gvisor,
		 char name[ENGINE_NAME_MAX + 1], char host[RELAY_URL_MAX + 1], struct err *e)
{
	int rc, code = 0;
	PGresult *res;

	host[0] = 0;
	/* The lock before anything else (engine_remove takes it before its delete). */
	if ((rc = db_run(db, e, "SELECT pg_advisory_xact_lock(" ENGINE_PLACE_LOCK ")", 0)))
		return rc;
	/* The reaper writes this host's engines at its start; a create that comes first writes
	 * them too (in its transaction: gone with it if it fails, and the reaper's follows). */
	if (!registered) {
		if ((rc = write_rows(db, 0, e)))
			return rc;
		registered = 1;
	}
	res = db_exec(db, e, &code, PLACE_SQL, 5, image, warm ? "true" : "false",
		      here_only ? "true" : "false", cfg->relay_url, gvisor ? "true" : "false");
	if (!res)
		return code;
	int room = PQntuples(res) == 1 && db_bool(res, 0, 1);
	rc = PQntuples(res) == 1 ? str_copy(name, ENGINE_NAME_MAX + 1, db_val(res, 0, 0)) : 1;
	if (!rc && !engine_here(db_val(res, 0, 2)))
		rc = str_copy(host, RELAY_URL_MAX + 1, db_val(res, 0, 2));
	PQclear(res);
	if (rc)
		return err_set(e, ERR_NOSTART, "no Docker engine has room for another sandbox");
	return room ? 0 : 1;
}

int engine_has_room(struct db *db, const char *name, struct err *e)
{
	int rc, code = 0;
	PGresult *res;

	if ((rc = db_run(db, e, "SELECT pg_advisory_xact_lock(" ENGINE_PLACE_LOCK ")", 0)))
		return rc;
	res = db_exec(db, e, &code,
		      "SELECT 1 FROM engine_room r WHERE r.name = $1 AND r.state = 'active'"
		      "   AND r.healthy AND r.host_up AND r.max_sandboxes - r.sandboxes - r.pooled > 0",
		      1, name);
	if (!res)
		return code;
	rc = PQntuples(res) == 1;
	PQclear(res);
	return rc;
}

int engine_check(struct db *db, const char *scope, char (*up)[ENGINE_NAME_MAX + 1],
		 int max, int *nup, char (*gone)[ENGINE_NAME_MAX + 1], int *ngone, struct err *e)
{
	char grace[16];
	int rc, code = 0;
	PGresult *res;

	*nup = *ngone = 0;
	if (!cfg)
		return err_set(e, ERR_FAIL, "engine_init was not called");
	if ((rc = reload(db, e)))
		return rc;
	snprintf(grace, sizeof(grace), "%d", cfg->engine_grace);
	res = db_exec(db, e, &code,
		      "SELECT name, coalesce(down_since < now() - make_interval(secs => $2::int), false)"
		      "  FROM docker_engines WHERE coalesce(relay_url, '') = $3"
		      " ORDER BY name <> $1, name LIMIT 64",
		      3, cfg->engine_name, grace, scope);
	if (!res)
		return code;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *name = db_val(res, i, 0);
		const struct entry *x = find(name);
		struct err why = { .msg = "" };
		int ok = (is_own(name) ? engine_use_own(&why) : x ? use_entry(x, &why)
			  : err_set(&why, ERR_FAIL, "not readable")) == 0 &&
			 box_ping(NULL, &why) == 0;
		if (ok)
			rc = db_run(db, e, "UPDATE docker_engines SET last_seen_at = now(),"
					   "       down_since = NULL, last_error = NULL WHERE name = $1",
				    1, name);
		else
			rc = db_run(db, e, "UPDATE docker_engines SET last_error = $2,"
					   "       down_since = coalesce(down_since, now()) WHERE name = $1",
				    2, name, why.msg);
		if (rc)
			break;
		if (!ok)
			log_warn("reaper: engine %s does not answer: %s", name, why.msg);
		if (ok && *nup < max && !str_copy(up[*nup], ENGINE_NAME_MAX + 1, name))
			(*nup)++;
		if (!ok && db_bool(res, i, 1) && *ngone < max &&
		    !str_copy(gone[*ngone], ENGINE_NAME_MAX + 1, name))
			(*ngone)++;
	}
	PQclear(res);
	if (engine_use_own(e) && !rc)
		rc = ERR_FAIL;
	return rc;
}
