/* api_health.c: GET /healthz, for load balancers and operators: 200 when the database and the
 * Docker engine answer, 503 naming what failed. */
#include "sandboxd/api.h"
#include "sandboxd/docker.h"
#include "sandboxd/json.h"
#include "sandboxd/banned.h"

int api_health(struct req *r)
{
	struct err dberr = { "" }, dkerr = { "" };
	json_object *o = json_object_new_object();
	int db_ok, docker_ok;
	PGresult *res;
	int code = 0;

	/* The dispatcher has already opened a transaction; one round trip proves the server. */
	res = db_exec(r->db, &dberr, &code, "SELECT 1", 0);
	db_ok = res != NULL;
	PQclear(res);
	docker_ok = docker_ping(r->cfg->docker_host, &dkerr) == 0;
	if (!db_ok)
		json_add_str(o, "message", "database unavailable");
	else if (!docker_ok)
		json_add_str(o, "message", dkerr.msg);
	else
		json_add_str(o, "status", "ok");
	json_add_str(o, "database", db_ok ? "ok" : dberr.msg);
	json_add_str(o, "docker", docker_ok ? "ok" : dkerr.msg);
	http_json(r, db_ok && docker_ok ? 200 : 503, o);
	return 0;
}
