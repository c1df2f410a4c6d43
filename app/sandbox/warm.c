/* warm.c: the warm pool (warm.h): claiming a container started ahead, and the reaper's
 * refill and repair of the pool. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/sandbox/container.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/lib/randid.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/sandbox/warm.h"
#include "sandboxd/common/banned.h"

#define WARM_ID_LEN 27                 /* "wc_" + 24 hex */
#define WARM_START_STALE "30 seconds"
#define WARM_AGENT_WAIT_MS 5000        /* a started container's agent answers within it */

int warm_claim(struct db *db, const char *image, const char *sandbox_id,
	       char engine[ENGINE_NAME_MAX + 1], char cid[BOX_ID_MAX], struct warm_claimed *got,
	       struct err *e)
{
	int rc, code = 0;
	/* The key leaves the pool's row in the claim's statement: it is the sandbox's now. */
	PGresult *res = db_exec(db, e, &code,
		"WITH c AS (SELECT w.id, w.agent_key, w.agent_ip FROM warm_containers w"
		"             JOIN docker_engines d ON d.name = w.instance"
		"            WHERE w.state = 'ready' AND w.image = $1 AND w.container_id IS NOT NULL"
		"              AND d.state = 'active' AND coalesce(d.relay_url, '') IN ('', $4)"
		"            ORDER BY d.down_since IS NULL DESC, w.instance = $3 DESC, w.created_at"
		"            LIMIT 1 FOR UPDATE OF w SKIP LOCKED)"
		" UPDATE warm_containers w SET state = 'claimed', claimed_by = $2, claimed_at = now(),"
		"        agent_key = NULL"
		"   FROM c WHERE w.id = c.id"
		" RETURNING w.container_id, w.instance, coalesce(c.agent_key, ''),"
		"           coalesce(host(c.agent_ip), ''), coalesce(w.home, ''), w.disk_enforced",
		4, image, sandbox_id, engine,
		engine_relay_url());

	memset(got, 0, sizeof(*got));
	if (!res)
		return code;
	rc = PQntuples(res) == 1 ? 0 : ERR_NOTFOUND;
	if (!rc && (str_copy(cid, BOX_ID_MAX, db_val(res, 0, 0)) ||
		    str_copy(engine, ENGINE_NAME_MAX + 1, db_val(res, 0, 1)) ||
		    str_copy(got->home, sizeof(got->home), db_val(res, 0, 4))))
		rc = err_set(e, ERR_FAIL, "a warm container's row does not fit");
	got->disk_enforced = !rc && strcmp(db_val(res, 0, 5), "t") == 0;
	/* Anything but a whole key and an address: the archive path, as before 025. */
	if (!rc && strlen(db_val(res, 0, 2)) == SANDBOX_AGENT_KEY_HEX &&
	    !str_copy(got->ip, sizeof(got->ip), db_val(res, 0, 3)) && got->ip[0])
		memcpy(got->key, db_val(res, 0, 2), sizeof(got->key));
	else
		got->ip[0] = 0;
	PQclear(res);
	return rc == ERR_NOTFOUND ? err_set(e, rc, "the warm pool is empty") : rc;
}

int warm_owned(struct db *db, const char *id, int *live, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
		"SELECT 1 FROM warm_containers w LEFT JOIN sandboxes s ON s.id = w.claimed_by"
		" WHERE w.id = $1 AND (w.state IN ('starting', 'ready')"
		"       OR (w.state = 'claimed' AND s.state IN ('starting', 'ready')))", 1, id);

	if (!res)
		return code;
	*live = PQntuples(res) > 0;
	PQclear(res);
	return 0;
}

/* Fails a row for why and removes its container cid (may be empty): row id while it is
 * live and unclaimed, or (id "") the claimed row of container cid. */
static void fail(struct db *db, const char *id, const char *cid, const char *why)
{
	struct err e;

	if (db_run(db, &e, "UPDATE warm_containers SET state = 'failed', ended_at = now(),"
			   "       end_reason = $3"
			   " WHERE CASE WHEN $1 <> '' THEN id = $1 AND state IN ('starting', 'ready')"
			   "            ELSE container_id = $2 AND state = 'claimed' END",
		   3, id, cid, why))
		log_warn("warm %s: %s", id[0] ? id : cid, e.msg);
	sandbox_remove_container(cid);
	log_info("warm %s: %s", id[0] ? id : cid, why);
}

void warm_discard(struct db *db, const char *cid, const char *why)
{
	fail(db, "", cid, why);
}

/* Fails the live rows that cannot serve: a start that timed out (its worker died between
 * the steps), a ready one whose container stopped or went. */
static int repair(const struct config *cfg, struct db *db, const char *engine, struct err *e)
{
	char secs[24];
	int code = 0;
	PGresult *res;

	snprintf(secs, sizeof(secs), "%d", cfg->start_timeout + 30);
	res = db_exec(db, e, &code,
		      "SELECT id, coalesce(container_id, ''), state,"
		      "       created_at < now() - make_interval(secs => $1::int)"
		      "  FROM warm_containers WHERE state IN ('starting', 'ready') AND instance = $2",
		      2, secs, engine);
	if (!res)
		return code;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *id = db_val(res, i, 0), *cid = db_val(res, i, 1);
		struct box_state st;
		struct err de;

		if (strcmp(db_val(res, i, 2), "starting") == 0) {
			if (db_bool(res, i, 3))
				fail(db, id, cid, "start timed out");
			continue;
		}
		int rc = box_state(cid, &st, BOX_CALL_MS, &de);
		if (rc == ERR_NOTFOUND || (!rc && !st.running))
			fail(db, id, cid, rc ? "container gone" : "container stopped");
	}
	PQclear(res);
	return 0;
}

/* Waits (WARM_AGENT_WAIT_MS at most) until the agent at ip answers the handshake of key. */
static void agent_wait(const char *ip, const char *key)
{
	int64_t until = clock_ms() + WARM_AGENT_WAIT_MS;
	struct err e = { .msg = "" };

	for (;;) {
		struct agent_conn c = { .fd = -1 };
		int rc = agent_connect(&c, ip, SANDBOX_AGENT_PORT, (const unsigned char *)key,
				       SANDBOX_AGENT_KEY_HEX, SBAGENT_CONNECT_MS, &e);
		agent_close(&c);
		if (!rc)
			return;
		if (clock_ms() >= until)
			break;
		usleep(20000);
	}
	log_warn("warm container at %s: its agent did not answer (%s): its claim goes by the"
		 " archive API", ip, e.msg);
}

/* One new warm container, its row first: 0, or the step's error (the row then failed). */
static int start_one(const struct config *cfg, struct db *db, const char *engine, struct err *e)
{
	static const char *const env[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	char id[WARM_ID_LEN + 1], owner[64], cid[BOX_ID_MAX] = "";
	char key[SANDBOX_AGENT_KEY_HEX + 1];
	struct box_state st = { .running = 0 };
	struct boxuser bu;
	int rc, enforced = 0;

	if (randid(id, sizeof(id), "wc_", 12) || sandbox_agent_key_new(key))
		return err_set(e, ERR_FAIL, "RNG failed");
	if ((rc = boxuser_get(cfg, &bu, e)))
		return rc;
	snprintf(owner, sizeof(owner), WARM_OWNER_PREFIX "%s", id);
	/* Its row under the placement lock: a warm container takes room on its engine. */
	if ((rc = db_begin(db, e)))
		return rc;
	if ((rc = engine_has_room(db, engine, e)) != 1) {
		db_rollback(db);
		return rc ? rc : 1;
	}
	if ((rc = db_run(db, e, "INSERT INTO warm_containers (id, instance, image, agent_key, home)"
				" VALUES ($1, $2, $3, $4, $5)", 5, id, engine, config_default_image(cfg),
			 key, bu.home)) ||
	    (rc = db_commit(db, e))) {
		db_rollback(db);
		return rc;
	}
	if (!(rc = sandbox_container_new(cfg, &bu, owner, (const char **)env, NULL, BOX_CALL_MS, cid,
					 &enforced, e)) &&
	    !(rc = db_run(db, e, "UPDATE warm_containers SET container_id = $2, disk_enforced = $3"
				 " WHERE id = $1", 3, id, cid, enforced ? "true" : "false")) &&
	    !(rc = sandbox_put_agent_key(cid, bu.uid, key, e)) &&
	    !(rc = box_start(cid, (long)cfg->start_timeout * 1000, e)) &&
	    !(rc = box_state(cid, &st, BOX_CALL_MS, e)) && !st.running)
		rc = err_set(e, ERR_FAIL, "the warm container is %s", st.status);
	/* Ready once its agent answers with the key (a claim then hands over through it at
	 * once); one that does not within the start limit is claimed by the archive path. */
	if (!rc && cfg->agent && st.ip[0])
		agent_wait(st.ip, key);
	OPENSSL_cleanse(key, sizeof(key));
	if (!rc)
		rc = db_run(db, e, "UPDATE warm_containers SET state = 'ready',"
				   "       agent_ip = nullif($2, '')::inet"
				   " WHERE id = $1 AND state = 'starting'", 2, id, st.ip);
	if (rc)
		fail(db, id, cid, e->msg);
	return rc;
}

/* A draining engine keeps no warm containers: none would be claimed there, and its
 * removal waits for nothing live. 1 when the engine is not active. */
static int retire(struct db *db, const char *engine, struct err *e)
{
	int code = 0, draining;
	PGresult *res = db_exec(db, e, &code,
				"SELECT w.id, coalesce(w.container_id, ''), d.state <> 'active'"
				"  FROM docker_engines d LEFT JOIN warm_containers w ON w.instance = d.name"
				"   AND w.state IN ('starting', 'ready')"
				" WHERE d.name = $1", 1, engine);

	if (!res)
		return code;
	draining = PQntuples(res) > 0 && db_bool(res, 0, 2);
	for (int i = 0; draining && i < PQntuples(res); i++)
		if (db_val(res, i, 0))
			fail(db, db_val(res, i, 0), db_val(res, i, 1), "its engine is draining");
	PQclear(res);
	return draining;
}

int warm_refill(const struct config *cfg, struct db *db, const char *engine, struct err *e)
{
	int64_t live = 0;
	int rc, code = 0, started = 0;
	PGresult *res;

	if ((rc = retire(db, engine, e)))
		return rc < 0 ? rc : 0;
	if ((rc = repair(cfg, db, engine, e)))
		return rc;
	/* A start takes a second or two; one still starting after WARM_START_STALE was cut
	 * off (its pass lost the database mid-way, and could not fail the row) and is not
	 * counted, so that the pool refills now rather than when repair fails it. */
	res = db_exec(db, e, &code, "SELECT count(*) FROM warm_containers"
				    " WHERE instance = $2 AND image = $1 AND (state = 'ready' OR"
				    "       (state = 'starting' AND created_at > now() - interval '"
				    WARM_START_STALE "'))",
		      2, config_default_image(cfg), engine);
	if (!res)
		return code;
	rc = num_parse(db_val(res, 0, 0), 0, INT64_MAX, &live);
	PQclear(res);
	if (rc)
		return err_set(e, ERR_FAIL, "cannot count the warm containers");
	for (; live < cfg->pool_size; live++, started++)
		if ((rc = start_one(cfg, db, engine, e)))
			return rc == ERR_DB ? rc : started;   /* 1: the engine is full */
	return started;
}
