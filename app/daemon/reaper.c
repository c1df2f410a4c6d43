/* reaper.c: idle stop, stuck starts, and reconciliation, under a database lease. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <git2.h>
#include <json-c/json.h>
#include "sandboxd/core/audit.h"
#include "sandboxd/core/db.h"
#include "sandboxd/holder/holder.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/forge/forge_sweep.h"
#include "sandboxd/forge/lfs_store.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/sandbox/sandbox_save.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/core/metrics_db.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/daemon/reaper.h"
#include "sandboxd/sandbox/warm.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/lib/proc.h"
#include "sandboxd/sandbox/exec_slots.h"
#include "sandboxd/common/banned.h"

#define LEASE_SECONDS "30"   /* a dead reaper's lease lapses after this */
#define ENGINES_MAX 64       /* engines one pass looks at */

/* A pass is over one scope, its query parameter $1: the engines a host owns (its relay
 * URL; only that host can call them) or, for "", those no host owns, with the work of the
 * whole cluster (README "Several sandboxd hosts"). A sandbox is in the scope of its
 * engine's owner. */
#define MINE " coalesce((SELECT d.relay_url FROM docker_engines d" \
	     "            WHERE d.name = sandboxes.engine), '') = $1"

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Takes or renews the lease name ("reaper", or this host's "reaper@<relay url>"); 1 when
 * this process holds it. */
static int lease(struct db *db, const char *name, const char *me)
{
	struct err e;
	int code = 0, held;
	PGresult *res = db_exec(db, &e, &code,
				"INSERT INTO leases (name, holder, expires_at)"
				" VALUES ($3, $1, now() + make_interval(secs => $2::int))"
				" ON CONFLICT (name) DO UPDATE"
				"   SET holder = excluded.holder, expires_at = excluded.expires_at"
				" WHERE leases.expires_at < now() OR leases.holder = excluded.holder"
				" RETURNING holder", 3, me, LEASE_SECONDS, name);

	if (!res) {
		log_warn("reaper: lease: %s", e.msg);
		return 0;
	}
	held = PQntuples(res) == 1;
	PQclear(res);
	return held;
}

/* The leases this process holds in its current passes, renewed during a long pass too: a
 * host whose lease lapsed past the grace is down to the other hosts (hosts_gone), and a
 * pass that saves the work of a hundred idle sandboxes can take minutes. */
static struct {
	const char *me, *names[2];
	int n;
	int64_t renewed;
} held;

static void keep_leases(struct db *db)
{
	if (clock_ms() - held.renewed < 5000)
		return;
	held.renewed = clock_ms();
	for (int i = 0; i < held.n; i++)
		if (!lease(db, held.names[i], held.me))
			log_warn("reaper: the lease %s was lost during a pass", held.names[i]);
}

static void audit_with(struct db *db, const char *action, int status, const struct sandbox *s,
		       const char *reason, json_object *d)
{
	struct err e;

	json_add_str(d, "reason", reason);
	json_add_str(d, "container_id", s->container_id[0] ? s->container_id : NULL);
	char st[8];
	snprintf(st, sizeof(st), "%d", status);
	if (db_run(db, &e,
		   "INSERT INTO audit_log (action, status, account_id, login, repository, sandbox_id,"
		   "  via, details)"
		   " SELECT $1, $2, s.account_id, a.login, o.login || '/' || r.name, s.id, 'reaper', $4"
		   "   FROM sandboxes s JOIN accounts a ON a.id = s.account_id"
		   "   LEFT JOIN repositories r ON r.id = s.repository_id"
		   "   LEFT JOIN accounts o ON o.id = r.owner_id"
		   "  WHERE s.id = $3",
		   4, action, st, s->id, json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN)))
		log_warn("reaper: audit: %s", e.msg);
	json_object_put(d);
}

static void audit(struct db *db, const char *action, int status, const struct sandbox *s,
		  const char *reason)
{
	audit_with(db, action, status, s, reason, json_object_new_object());
}

/* Its unpushed work saved before a stop (sandbox_save.h): where it went, or why not, into
 * the stop's audit details d and the row's saved_ref. */
static void save_first(struct db *db, const struct config *cfg, const struct sandbox *s,
		       json_object *d)
{
	char ref[SANDBOX_SAVE_REF_MAX];
	struct err e = { .msg = "" };

	if (!s->container_id[0])
		return;
	if (sandbox_save(db, cfg, s, ref, &e)) {
		log_info("reaper: %s: its work was not saved: %s", s->id, e.msg);
		json_add_str(d, "save_error", e.msg);
		return;
	}
	if (!ref[0])
		return;
	json_add_str(d, "saved_ref", ref);
	if (db_run(db, &e, "UPDATE sandboxes SET saved_ref = $2 WHERE id = $1", 2, s->id, ref))
		log_warn("reaper: %s: saved_ref: %s", s->id, e.msg);
}

/* The engines that answered this pass's ping (engine_check); checked 0 when the check
 * itself failed (then every engine is tried); the pass's scope ($1 of its queries). */
static struct {
	const struct config *cfg;
	char up[ENGINES_MAX][ENGINE_NAME_MAX + 1];
	int nup, checked;
	const char *scope;
} pass_engines;

static int answered(const char *engine)
{
	if (!pass_engines.checked)
		return 1;
	if (!*engine)
		engine = pass_engines.cfg->engine_name;
	for (int i = 0; i < pass_engines.nup; i++)
		if (strcmp(pass_engines.up[i], engine) == 0)
			return 1;
	return 0;
}

/* Docker calls go to the engine of the sandbox at hand (engine.h); 0 when it can be
 * reached as registered and answered this pass. An engine that did not is not called
 * again in the pass (each call would wait for its timeout): its calls fail at once. */
static int use(struct db *db, const struct sandbox *s)
{
	struct err e;

	if (!answered(s->engine)) {
		engine_refuse("docker unavailable: the engine did not answer the reaper's ping");
		return -1;
	}
	if (engine_use(db, s->engine, &e) == 0)
		return 0;
	log_warn("reaper: %s: %s", s->id, e.msg);
	return -1;
}

/* A row's id, container_id and engine (columns 0 to 2) into s. */
static void row_of(const PGresult *res, int i, struct sandbox *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", db_val(res, i, 0));
	snprintf(s->container_id, sizeof(s->container_id), "%s",
		 db_val(res, i, 1) ? db_val(res, i, 1) : "");
	snprintf(s->engine, sizeof(s->engine), "%s", db_val(res, i, 2) ? db_val(res, i, 2) : "");
}

/* Ends every sandbox the query selects (id, container_id, engine; $1 the pass's scope,
 * arg $2 when not NULL) with state and reason; with save, its work is saved first. */
static void end_all(struct db *db, const char *sql, const char *arg, const char *state,
		    const char *reason, const char *action, int save)
{
	struct err e;
	int code = 0;
	PGresult *res = db_exec(db, &e, &code, sql, arg ? 2 : 1, pass_engines.scope, arg);

	if (!res) {
		log_warn("reaper: %s", e.msg);
		return;
	}
	for (int i = 0; i < PQntuples(res) && !stopping; i++) {
		struct sandbox s;
		keep_leases(db);
		row_of(res, i, &s);
		json_object *d = json_object_new_object();
		/* An engine that cannot be reached: the row ends all the same (its container,
		 * if any, is an orphan once the engine is back). */
		if (use(db, &s) == 0 && save)
			save_first(db, pass_engines.cfg, &s, d);
		if (sandbox_end(db, &s, state, reason, &e)) {
			log_warn("reaper: ending %s: %s", s.id, e.msg);
			json_object_put(d);
			continue;
		}
		log_info("reaper: %s %s (%s)", s.id, state, reason);
		audit_with(db, action, 200, &s, reason, d);
	}
	PQclear(res);
}

/* Containers and workspace volumes of this instance that no live sandbox owns are removed:
 * a container that outlived its sandbox, and a volume whose container was removed behind
 * the service's back without it (one still in use by a container is left for that
 * container's removal). */
struct orphans {
	struct db *db;
	const char *what;                                  /* "container", "volume" */
	int (*remove)(const char *id, long timeout_ms, struct err *e);
	int removed;
};

static int orphan_check(void *arg, const char *id, const char *label_value, const char *state)
{
	struct orphans *o = arg;
	size_t np = strlen(WARM_OWNER_PREFIX);
	struct err e;
	int code = 0, live = 0;
	(void)state;

	/* A warm container is wanted while its row is, and once claimed while its sandbox
	 * lives; any other while a live sandbox has its label or names it (container_id). */
	if (strncmp(label_value, WARM_OWNER_PREFIX, np) == 0) {
		if (warm_owned(o->db, label_value + np, &live, &e))
			return 0;
	} else {
		PGresult *res = db_exec(o->db, &e, &code,
					"SELECT 1 FROM sandboxes WHERE (id = $1 OR container_id = $2)"
					"   AND state IN ('starting', 'ready')", 2, label_value, id);
		if (!res)
			return 0;
		live = PQntuples(res) > 0;
		PQclear(res);
	}
	if (!live && o->remove(id, BOX_CALL_MS, &e) == 0) {
		log_info("reaper: removed %s %.12s of %s: no live sandbox owns it", o->what, id,
			 label_value[0] ? label_value : "(none)");
		o->removed++;
	}
	return 0;
}

/* Live sandboxes whose container is gone fail. */
static void gone(struct db *db)
{
	struct err e;
	int code = 0;
	PGresult *res = db_exec(db, &e, &code,
				"SELECT id, container_id, engine FROM sandboxes WHERE state = 'ready'"
				"   AND container_id IS NOT NULL AND" MINE, 1, pass_engines.scope);

	if (!res)
		return;
	for (int i = 0; i < PQntuples(res) && !stopping; i++) {
		struct box_state st;
		struct sandbox s;
		row_of(res, i, &s);
		if (use(db, &s))
			continue;
		int rc = box_state(s.container_id, &st, BOX_CALL_MS, &e);
		if (rc == ERR_NOTFOUND || (rc == 0 && !st.running)) {
			if (sandbox_end(db, &s, "failed", "container gone", &e) == 0) {
				log_info("reaper: %s failed: its container is gone", s.id);
				audit(db, "sandbox.reconcile", 200, &s, "container gone");
			}
		}
	}
	PQclear(res);
}

/* Sandboxes still starting whose creator is gone (it lost its database connection, or
 * died): its lock is free and no transaction holds the row. Failed now, rather than after
 * the start timeout, so that a database outage leaves no sandbox starting for minutes
 * (holding a slot of its account) and no container behind. */
static void abandoned(struct db *db)
{
	struct err e;
	int code = 0;
	PGresult *res = db_exec(db, &e, &code,
				"SELECT id FROM sandboxes WHERE state = 'starting' AND" MINE
				" LIMIT 100", 1, pass_engines.scope);

	if (!res)
		return;
	for (int i = 0; i < PQntuples(res) && !stopping; i++) {
		struct sandbox s;
		memset(&s, 0, sizeof(s));
		snprintf(s.id, sizeof(s.id), "%s", db_val(res, i, 0));
		if (db_begin(db, &e))
			break;
		/* The lock first, then the row as it is now: a creator that was finishing has
		 * committed (or still holds the row, which is skipped). */
		PGresult *lk = db_exec(db, &e, &code,
				       "SELECT pg_try_advisory_xact_lock(" SANDBOX_LOCK_KEY ")", 1, s.id);
		PGresult *row = lk && db_bool(lk, 0, 0)
			? db_exec(db, &e, &code,
				  "SELECT coalesce(container_id, ''), coalesce(engine, '') FROM sandboxes"
				  " WHERE id = $1 AND state = 'starting' FOR UPDATE SKIP LOCKED", 1, s.id)
			: NULL;
		int gone = row && PQntuples(row) == 1;
		if (gone) {
			snprintf(s.container_id, sizeof(s.container_id), "%s", db_val(row, 0, 0));
			snprintf(s.engine, sizeof(s.engine), "%s", db_val(row, 0, 1));
			(void)use(db, &s);
		}
		PQclear(lk);
		PQclear(row);
		if (gone && sandbox_end(db, &s, "failed", "start interrupted", &e) == 0 &&
		    db_commit(db, &e) == 0) {
			log_info("reaper: %s failed: its creator went away", s.id);
			audit(db, "sandbox.reconcile", 200, &s, "start interrupted");
		}
		db_rollback(db);
	}
	PQclear(res);
}

/* The forge's share (forge_sweep.h): deleted repositories' directories at every pass,
 * ephemeral refs past their TTL every tenth of it (at most hourly), and LFS objects no
 * ref points at past SANDBOXD_LFS_GRACE (lfs_store.h) every tenth of that. */
static void forge(const struct config *cfg, struct db *db)
{
	static int64_t next, next_lfs;   /* the reaper's own process: one sweep schedule */
	int64_t now = (int64_t)time(NULL);
	struct err e;
	int n;

	if ((n = forge_sweep_trash(cfg, db, &e)) < 0)
		log_warn("reaper: deleted repositories: %s", e.msg);
	if (now >= next_lfs) {
		next_lfs = now + forge_expire_interval(cfg->lfs_grace);
		if ((n = lfs_collect(cfg, db, &e)) < 0)
			log_warn("reaper: LFS objects: %s", e.msg);
		else if (n)
			log_info("reaper: %d LFS objects collected", n);
	}
	if (now < next)
		return;
	next = now + forge_expire_interval(cfg->ephemeral_ttl);
	if ((n = forge_expire_refs(cfg, db, now, &e)) < 0)
		log_warn("reaper: ephemeral refs: %s", e.msg);
	else if (n)
		log_info("reaper: %d ephemeral refs expired", n);
}

/* Held execs no holder keeps any more (README "The holder"): the holder died (its
 * connections to the agents closed with it, which ends each command's tree) or the worker
 * died before the hand-over. Each row becomes its audit row, once, and gives its hold back. */
static void held_lost(const struct config *cfg, struct db *db)
{
	struct err e;
	int code = 0;
	char secs[16];
	snprintf(secs, sizeof(secs), "%d", cfg->held_stale);
	PGresult *res = db_exec(db, &e, &code,
				"SELECT id FROM held_execs WHERE seen_at < now() - make_interval("
				"secs => $1::int) ORDER BY id LIMIT 100", 1, secs);

	if (!res) {
		log_warn("reaper: held execs: %s", e.msg);
		return;
	}
	for (int i = 0; i < PQntuples(res); i++) {
		json_object *d = json_object_new_object();
		long long id = strtoll(db_val(res, i, 0), NULL, 10);

		json_add_str(d, "error", "no holder kept the exec any more: its command was ended");
		json_add_str(d, "ended_by", "reaper");
		if (audit_held_finish(db, id, 502, -1, d, cfg->idle_timeout, &e))
			log_warn("reaper: held exec %lld: %s", id, e.msg);
		else
			log_warn("reaper: held exec %lld had no holder: ended", id);
		json_object_put(d);
	}
	PQclear(res);
}

/* Exec slots (exec_slots.h) past their expiry, or of sandboxes that ended: their owner
 * died (a worker, a holder, a host) or never said its exec ended. */
static void slots_lost(struct db *db)
{
	struct err e;
	int n = exec_slots_reap(db, &e);

	if (n < 0)
		log_warn("reaper: exec slots: %s", e.msg);
	else if (n)
		log_info("reaper: %d exec slots given back", n);
}

/* The disk limit where the engine cannot enforce it (SPEC §4 "Limits"; container.h): each
 * such sandbox measured every SANDBOXD_DISK_CHECK_INTERVAL seconds, oldest measure first,
 * a few per pass (a measure walks the layer), and stopped once over its limit, its work
 * saved first as at any stop (the save commits what fits in the repository, not the
 * container's bytes). */
static void disk_over(const struct config *cfg, struct db *db)
{
	char sql[512];
	struct err e;
	int code = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT id, container_id, disk_bytes, engine FROM sandboxes"
		 " WHERE state = 'ready' AND disk_enforced = false AND container_id IS NOT NULL"
		 "   AND disk_bytes IS NOT NULL AND (disk_checked_at IS NULL"
		 "        OR disk_checked_at < now() - interval '%d seconds') AND" MINE
		 " ORDER BY disk_checked_at NULLS FIRST LIMIT 10", cfg->disk_check_interval);
	PGresult *res = db_exec(db, &e, &code, sql, 1, pass_engines.scope);
	if (!res) {
		log_warn("reaper: disk: %s", e.msg);
		return;
	}
	for (int i = 0; i < PQntuples(res) && !stopping; i++) {
		const char *id = db_val(res, i, 0), *cid = db_val(res, i, 1);
		int64_t used = 0, limit = 0;
		char txt[24];
		struct sandbox s;
		memset(&s, 0, sizeof(s));
		snprintf(s.id, sizeof(s.id), "%s", id);
		snprintf(s.engine, sizeof(s.engine), "%s", db_val(res, i, 3) ? db_val(res, i, 3) : "");
		if (use(db, &s))
			continue;
		if (num_parse(db_val(res, i, 2), 1, INT64_MAX, &limit) ||
		    box_disk_used(cid, &used, BOX_CALL_MS, &e)) {
			log_warn("reaper: %s: measuring its disk: %s", id, e.msg);
			continue;
		}
		snprintf(txt, sizeof(txt), "%lld", (long long)used);
		if (db_run(db, &e, "UPDATE sandboxes SET disk_checked_at = now(), disk_used_bytes = $2"
				   " WHERE id = $1", 2, id, txt))
			log_warn("reaper: %s: %s", id, e.msg);
		if (used <= limit)
			continue;
		log_info("reaper: %s uses %lld bytes of disk, over its %lld", id, (long long)used,
			 (long long)limit);
		/* Still ready (not closed meanwhile); the id is sb_ and hex (the table's CHECK). */
		char one[320];
		snprintf(one, sizeof(one), "SELECT id, container_id, engine FROM sandboxes"
			 " WHERE id = '%.40s' AND state = 'ready' AND" MINE, id);
		end_all(db, one, NULL, "stopped", "disk limit exceeded", "sandbox.stop", 1);
	}
	PQclear(res);
}

/* Each engine that answers: its warm pool refilled, then its orphans removed. */
static void per_engine(const struct config *cfg, struct db *db, const char *engine)
{
	struct orphans o = { db, "container", box_remove, 0 };
	struct orphans v = { db, "volume", box_leftover_remove, 0 };
	struct err e;
	char label[96];

	if (engine_use(db, engine, &e)) {
		log_warn("reaper: engine %s: %s", engine, e.msg);
		return;
	}
	/* The pool is refilled before the orphans are looked for: a container started here is
	 * wanted by its row from before it exists. */
	int started = warm_refill(cfg, db, engine, &e);
	if (started < 0)
		log_warn("reaper: the warm pool of %s: %s", engine, e.msg);
	else if (started)
		log_info("reaper: %d warm containers started on %s", started, engine);
	snprintf(label, sizeof(label), "sandboxd.instance=%s", cfg->instance);
	if (box_list(label, SANDBOX_LABEL, orphan_check, &o, BOX_CALL_MS, &e))
		log_warn("reaper: listing containers of %s: %s", engine, e.msg);
	if (box_leftovers(label, SANDBOX_LABEL, orphan_check, &v, BOX_CALL_MS, &e))
		log_warn("reaper: listing volumes of %s: %s", engine, e.msg);
}

/* The sandboxes of hosts that are down (SPEC §8 "Several hosts"): their host's reaper has
 * not held its lease (reaper@<relay url>) for SANDBOXD_ENGINE_GRACE, so nobody looks after
 * them and their engine is nobody else's to call. Failed and their tokens revoked, as for
 * an engine gone past the grace; their containers are the host's orphans when it is back.
 * The cluster's pass only ($1 is ""). */
static void hosts_gone(const struct config *cfg, struct db *db)
{
	char grace[16];

	snprintf(grace, sizeof(grace), "%d", cfg->engine_grace);
	end_all(db, "SELECT s.id, s.container_id, s.engine FROM sandboxes s"
		    "  JOIN docker_engines d ON d.name = s.engine"
		    " WHERE s.state IN ('ready', 'starting') AND d.relay_url IS NOT NULL AND $1 = ''"
		    "   AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.name = 'reaper@' || d.relay_url"
		    "         AND l.expires_at > now() - make_interval(secs => $2::int))"
		    " LIMIT 100", grace, "failed", "sandboxd host unavailable", "sandbox.reconcile", 0);
}

/* The scope's sandboxes that must end: on engines gone past the grace, idle, past their
 * lifetime or disk limit, starts that timed out or lost their creator, containers gone. */
static void end_due(const struct config *cfg, struct db *db,
		    char (*lost)[ENGINE_NAME_MAX + 1], int nlost)
{
	char sql[640];

	for (int i = 0; i < nlost; i++)
		end_all(db, "SELECT id, container_id, engine FROM sandboxes"
			    " WHERE engine = $2 AND state IN ('ready', 'starting') AND" MINE
			    " LIMIT 100",
			lost[i], "failed", "docker engine unavailable", "sandbox.reconcile", 0);
	end_all(db,
		"SELECT id, container_id, engine FROM sandboxes"
		" WHERE state = 'ready' AND idle_stop_at < now() AND" MINE
		" ORDER BY idle_stop_at LIMIT 100",
		NULL, "stopped", "idle", "sandbox.stop", 1);
	/* The lifetime holds whatever the activity (SPEC §4 "Keep-alive and lifetime"). */
	snprintf(sql, sizeof(sql),
		 "SELECT id, container_id, engine FROM sandboxes WHERE state IN ('ready', 'starting')"
		 "   AND created_at < now() - interval '%d seconds' AND" MINE
		 " ORDER BY created_at LIMIT 100", cfg->max_lifetime);
	end_all(db, sql, NULL, "stopped", "lifetime reached", "sandbox.stop", 1);
	disk_over(cfg, db);
	snprintf(sql, sizeof(sql),
		 "SELECT id, container_id, engine FROM sandboxes WHERE state = 'starting'"
		 "   AND created_at < now() - interval '%d seconds' AND" MINE " LIMIT 100",
		 cfg->start_timeout + 30);
	end_all(db, sql, NULL, "failed", "start timed out", "sandbox.reconcile", 0);
	abandoned(db);
	gone(db);
}

/* One pass over scope (MINE): "" is the cluster's, which also does the work of no host. */
static void pass(const struct config *cfg, struct db *db, const char *scope)
{
	char lost[ENGINES_MAX][ENGINE_NAME_MAX + 1];
	char (*up)[ENGINE_NAME_MAX + 1] = pass_engines.up;
	int nlost = 0;
	struct err e;

	/* The engines first: which answer, and which have been gone past the grace. */
	pass_engines.cfg = cfg;
	pass_engines.scope = scope;
	pass_engines.checked = engine_check(db, scope, up, ENGINES_MAX, &pass_engines.nup, lost,
					    &nlost, &e) == 0;
	if (!pass_engines.checked)
		log_warn("reaper: engines: %s", e.msg);
	int nup = pass_engines.nup;
	end_due(cfg, db, lost, nlost);
	if (!*scope) {
		hosts_gone(cfg, db);
		held_lost(cfg, db);
		slots_lost(db);
		forge(cfg, db);
	}
	for (int i = 0; i < nup && !stopping; i++) {
		keep_leases(db);
		per_engine(cfg, db, up[i]);
	}
	if (engine_use_own(&e))
		log_warn("reaper: docker: %s", e.msg);
	/* Audit partitions ahead of time, when the schema has the function. */
	if (!*scope)
		PQclear(PQexec(db->conn, "SELECT audit_ensure_partitions(2)"));
}

/* The passes this process holds the leases of: the cluster's, and this host's own (with a
 * relay URL: its engines are its alone). 1 when it made one. */
static int passes(const struct config *cfg, struct db *db, const char *me, const char *mine)
{
	struct err e;
	int made = 0;

	held.me = me;
	held.n = 0;
	held.renewed = clock_ms();
	if (db_ensure(db, &e) == 0 && lease(db, "reaper", me)) {
		held.names[held.n++] = "reaper";
		pass(cfg, db, "");
		made = 1;
	}
	if (*mine && !stopping && db_ensure(db, &e) == 0 && lease(db, mine, me)) {
		held.names[held.n++] = mine;
		pass(cfg, db, cfg->relay_url);
		made = 1;
	}
	return made;
}

int reaper_run(const struct config *cfg)
{
	struct db db;
	struct err e;
	char me[128], host[64] = "", mine[sizeof(cfg->relay_url) + 8] = "";
	int interval = cfg->reaper_interval;
	int64_t next_register = 0;

	proc_setup(on_term, "sandboxd-reaper");
	git_libgit2_init();   /* ephemeral refs (forge_sweep) */
	gethostname(host, sizeof(host) - 1);
	snprintf(me, sizeof(me), "%s:%d", host, (int)getpid());
	if (cfg->relay_url[0])
		snprintf(mine, sizeof(mine), "reaper@%s", cfg->relay_url);
	/* Without the engine the reaper still ends rows (idle, lost access); each pass that
	 * needs the engine says so in the log. */
	if (engine_init(cfg, &e))
		log_error("reaper: docker: %s", e.msg);
	db_init(&db, cfg->database_url);
	log_info("reaper ready (%s)", me);
	while (!stopping) {
		/* The gauges on every host (each has its own region), lease or not: a host whose
		 * reaper is not the one passing still answers its scrapes. */
		if (db_ensure(&db, &e) == 0)
			metrics_db_refresh(&db, clock_ms());
		/* This host's engines in the table, at start and every minute, lease or not:
		 * each host registers its own (engine.h). */
		if (clock_ms() >= next_register && db_ensure(&db, &e) == 0) {
			if (engine_register(&db, &e))
				log_warn("reaper: registering the engines: %s", e.msg);
			else
				next_register = clock_ms() + 60000;
		}
		metrics_set_state(METRICS_BUSY);
		if (passes(cfg, &db, me, mine))
			metrics_count_reaper_pass();
		metrics_set_state(METRICS_IDLE);
		for (int i = 0; i < interval * 10 && !stopping; i++) {
			usleep(100000);
			/* Between passes too: the gauges are at most METRICS_DB_REFRESH_MS old
			 * whatever the interval (only a pass longer than that delays them); not
			 * a reconnect a second while the database is away. */
			if (i % 10 == 9 && db.conn && PQstatus(db.conn) == CONNECTION_OK)
				metrics_db_refresh(&db, clock_ms());
		}
	}
	/* Give the cluster's lease back so that another host takes over at once. This host's
	 * own lapses now, and its row stays: its lapse is when the host went, and its
	 * sandboxes are failed once that is SANDBOXD_ENGINE_GRACE ago (hosts_gone) unless it
	 * is back by then. */
	if (db_ensure(&db, &e) ||
	    db_run(&db, &e, "DELETE FROM leases WHERE name = 'reaper' AND holder = $1", 1, me) ||
	    (mine[0] && db_run(&db, &e, "UPDATE leases SET expires_at = now()"
					" WHERE name = $2 AND holder = $1", 2, me, mine)))
		log_warn("reaper: the leases stay until they expire: %s", e.msg);
	db_close(&db);
	engine_cleanup();
	log_info("reaper stopping");
	return 0;
}
