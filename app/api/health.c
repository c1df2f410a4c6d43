/* api_health.c: GET /healthz, for load balancers and operators: 200 when the database and the
 * Docker engine answer and the sandboxes' git endpoint is an address of this host
 * (hostaddr.h), 503 naming what failed; and who commands run as in sandboxes (boxuser.h). */
#include "sandboxd/api/handlers.h"
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/hostaddr.h"
#include "sandboxd/engine/isolation.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"

/* "sandbox_user": {"mode": "userns"|"runsc"|"fallback", "uid": 0|SANDBOXD_SANDBOX_UID}: an
 * operator sees whether root inside is safe on this engine (SPEC.md §4). */
static void add_sandbox_user(struct req *r, json_object *o)
{
	struct err e = { .msg = "" };
	struct boxuser bu;
	json_object *u;

	if (boxuser_get(r->cfg, &bu, &e) || !(u = json_object_new_object()))
		return;
	json_add_str(u, "mode", bu.mode);
	json_add_int(u, "uid", bu.uid);
	json_object_object_add(o, "sandbox_user", u);
}

int api_health(struct req *r, struct err *e)
{
	struct err dberr = { .msg = "" }, dkerr = { .msg = "" }, gterr = { .msg = "" };
	json_object *o = json_object_new_object();
	int db_ok, docker_ok, git_ok;
	PGresult *res;
	int code = 0;

	/* The dispatcher has already opened a transaction; one round trip proves the server. */
	res = db_exec(r->db, &dberr, &code, "SELECT 1", 0);
	db_ok = res != NULL;
	PQclear(res);
	docker_ok = box_ping(r->cfg->docker_host, &dkerr) == 0;
	/* Creates are refused while it fails: a balancer should send them elsewhere. */
	git_ok = hostaddr_check(r->cfg, &gterr) == 0;
	if (!db_ok)
		json_add_str(o, "message", "database unavailable");
	else if (!docker_ok)
		json_add_str(o, "message", dkerr.msg);
	else if (!git_ok)
		json_add_str(o, "message", gterr.msg);
	else
		json_add_str(o, "status", "ok");
	json_add_str(o, "database", db_ok ? "ok" : dberr.msg);
	json_add_str(o, "docker", docker_ok ? "ok" : dkerr.msg);
	json_add_str(o, "git_endpoint", git_ok ? "ok" : gterr.msg);
	if (docker_ok)
		add_sandbox_user(r, o);
	/* Each engine of this host that offers gVisor, and whether it has the runtime it was
	 * registered with (isolation.h): an operator sees a create's refusal coming. */
	if (db_ok) {
		json_object *iso = isolation_health(r->db);
		if (iso)
			json_object_object_add(o, "isolation", iso);
	}
	http_json(r, db_ok && docker_ok && git_ok ? 200 : 503, o);
	return 0;
}
