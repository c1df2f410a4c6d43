/* api_previews.c: previews (SPEC.md §4 "Previews"). POST, GET and DELETE under
 * …/sandboxes/{id}/previews make, list and revoke them; the check answers nginx's
 * auth_request for each request to <id>.<SANDBOXD_PREVIEW_DOMAIN> with the address and
 * port to proxy to, both from our own rows: the address the engine reported for the
 * sandbox's current container (sandboxes.agent_ip), the port its maker asked for. nginx
 * carries the bytes; no worker is held by a preview's traffic.
 *
 * A preview serves only while its maker could make it now and only at the container it was
 * made for (docs/decisions/0079): the check reads both in its one query, on every request,
 * so that no way of losing access (a role, an account, a repository's state, a row changed
 * by hand) is missed; auth_sandboxes_lost also deletes the rows where the service itself
 * takes the access away, so that giving it back revives no old URL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/api/preview.h"
#include "sandboxd/api/sandbox.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/preview.h"
#include "sandboxd/common/banned.h"

/* The columns preview_json reads, in its order (p: previews). */
#define PREVIEW_COLS "p.id, p.port, rfc3339(p.expires_at)"

/* A preview with its sandbox (s), repository (r), maker (a) and the maker's collaborator row
 * (c), for PREVIEW_SERVES. */
#define PREVIEW_FROM \
	" FROM previews p JOIN sandboxes s ON s.id = p.sandbox_id" \
	"  JOIN repositories r ON r.id = s.repository_id" \
	"  JOIN accounts a ON a.id = p.account_id" \
	"  LEFT JOIN collaborators c ON c.repository_id = r.id AND c.account_id = a.id"

/* What a preview needs to serve: not expired, its sandbox running the container it was made
 * for, and its maker still allowed to make it (0064: what api_sandbox_access asks, but the
 * token's kind and scope, which belong to the request that made it): an enabled account
 * with the write role (site admin, owner, write or admin collaborator: effective_role),
 * the sandbox's creator or a repository admin, on a repository that is not archived. */
#define PREVIEW_SERVES \
	" p.expires_at > now() AND s.state = 'ready' AND p.container_id = s.container_id" \
	" AND NOT a.disabled AND NOT r.archived" \
	" AND (a.site_admin OR r.owner_id = a.id OR c.role = 'admin'" \
	"      OR (c.role = 'write' AND s.account_id = p.account_id))"

static json_object *preview_json(const struct req *r, const PGresult *res, int row)
{
	json_object *o = json_object_new_object();
	char url[512];

	json_add_str(o, "previewId", db_val(res, row, 0));
	json_add_int(o, "port", strtoll(db_val(res, row, 1), NULL, 10));
	if (preview_url(r->cfg->public_url, r->cfg->preview_domain, db_val(res, row, 0), url,
			sizeof(url)))
		url[0] = 0;
	json_add_str(o, "url", url[0] ? url : NULL);
	json_add_str(o, "expires_at", db_val(res, row, 2));
	return o;
}

/* The sandbox's address on its network, as the engine reports it (never the client). */
static int sandbox_addr(struct req *r, const struct sandbox *s, char ip[16], struct err *e)
{
	int rc;

	if (strcmp(s->state, "ready") || !s->container_id[0])
		return err_http(e, 409, "sandbox is %s", s->state);
	rc = box_address(s->container_id, sandbox_network(r->cfg, s), ip, 16, BOX_CALL_MS, e);
	if (rc == ERR_NOTFOUND)
		return err_http(e, 409, "the sandbox has no address on network %s",
				sandbox_network(r->cfg, s));
	if (!rc && !preview_addr_ok(ip))
		return err_set(e, ERR_FAIL, "the engine reported address '%.15s'", ip);
	return rc;
}

/* Room for one more live preview of s; expired ones are dropped on the way. */
static int preview_room(struct req *r, const struct sandbox *s, struct err *e)
{
	PGresult *res;
	int code = 0, live;

	if ((code = db_run(r->db, e, "DELETE FROM previews WHERE sandbox_id = $1"
				     " AND expires_at <= now()", 1, s->id)))
		return code;
	if (!(res = db_exec(r->db, e, &code, "SELECT count(*) FROM previews WHERE sandbox_id = $1",
			    1, s->id)))
		return code;
	live = (int)strtol(db_val(res, 0, 0), NULL, 10);
	PQclear(res);
	if (live >= PREVIEW_MAX_PER_SANDBOX)
		return err_set(e, ERR_LIMIT, "preview limit reached");
	return 0;
}

int api_preview_create(struct req *r, struct err *e)
{
	int64_t port = 0, ttl = PREVIEW_TTL_DEFAULT;
	char ip[16], id[PREVIEW_ID_LEN + 1], nport[8], nttl[8];
	struct repo repo;
	struct sandbox s;
	PGresult *res;
	int rc, code = 0;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)))
		return rc;
	if ((rc = json_field_int(r->json, "port", 1, 1, 65535, &port, e)) < 0 ||
	    (rc = json_field_int(r->json, "ttl", 0, 1, PREVIEW_TTL_MAX, &ttl, e)) < 0)
		return rc;
	json_add_int(r->audit_details, "port", port);
	json_add_int(r->audit_details, "ttl", ttl);
	if ((rc = sandbox_addr(r, &s, ip, e)) || (rc = preview_room(r, &s, e)))
		return rc;
	if (preview_id_new(id))
		return err_set(e, ERR_FAIL, "no random bytes for a preview id");
	snprintf(nport, sizeof(nport), "%d", (int)port);
	snprintf(nttl, sizeof(nttl), "%d", (int)ttl);
	/* Bound to the container just asked about. The check proxies to the sandbox's row's
	 * address: the engine's answer is put there when the row lacks it or holds another
	 * (the row is the agent's address too, and the engine is right about both). */
	res = db_exec(r->db, e, &code,
		      "WITH addr AS (UPDATE sandboxes SET agent_ip = $5::inet"
		      "               WHERE id = $2 AND container_id = $7"
		      "                 AND agent_ip IS DISTINCT FROM $5::inet)"
		      " INSERT INTO previews AS p (id, sandbox_id, account_id, port, addr,"
		      "                            container_id, expires_at)"
		      " VALUES ($1, $2, $3::bigint, $4::int, $5::inet, $7,"
		      "         now() + make_interval(secs => $6::int))"
		      " RETURNING " PREVIEW_COLS,
		      7, id, s.id, r->caller.account_id, nport, ip, nttl, s.container_id);
	if (!res)
		return code;
	json_add_str(r->audit_details, "preview_id", id);
	json_object *o = preview_json(r, res, 0);
	PQclear(res);
	if ((rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e))) {
		json_object_put(o);
		return rc;
	}
	http_json(r, 201, o);
	return 0;
}

int api_preview_list(struct req *r, struct err *e)
{
	struct repo repo;
	struct sandbox s;
	PGresult *res;
	int rc, code = 0;

	if ((rc = api_sandbox_access(r, &repo, &s, 0, e)))
		return rc;
	/* What the check would serve, no more: an ended sandbox's previews are dead, and so are
	 * those whose maker lost the access or whose container the sandbox no longer runs. */
	res = db_exec(r->db, e, &code,
		      "SELECT " PREVIEW_COLS PREVIEW_FROM
		      " WHERE p.sandbox_id = $1 AND" PREVIEW_SERVES
		      " ORDER BY p.created_at, p.id",
		      1, s.id);
	if (!res)
		return code;
	json_object *list = json_object_new_array();
	for (int i = 0; i < PQntuples(res); i++)
		json_object_array_add(list, preview_json(r, res, i));
	PQclear(res);
	if (strcmp(s.state, "ready") == 0 && (rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e))) {
		json_object_put(list);
		return rc;
	}
	http_json(r, 200, list);
	return 0;
}

int api_preview_delete(struct req *r, struct err *e)
{
	const char *id = http_path_param(r, 3);
	struct repo repo;
	struct sandbox s;
	PGresult *res;
	int rc, code = 0, n;

	if ((rc = api_sandbox_access(r, &repo, &s, 0, e)))
		return rc;
	json_add_str(r->audit_details, "preview_id", id);
	if (!preview_id_valid(id))
		return err_set(e, ERR_NOTFOUND, "preview not found");
	res = db_exec(r->db, e, &code, "DELETE FROM previews WHERE id = $1 AND sandbox_id = $2",
		      2, id, s.id);
	if (!res)
		return code;
	n = (int)strtol(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	if (n == 0)
		return err_set(e, ERR_NOTFOUND, "preview not found");
	if (strcmp(s.state, "ready") == 0 && (rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e)))
		return rc;
	http_empty(r, 204);
	return 0;
}

int api_preview_check(struct req *r, struct err *e)
{
	const char *host = http_param(r, "SANDBOXD_PREVIEW_HOST");
	char id[PREVIEW_ID_LEN + 1];
	PGresult *res;
	int code = 0;

	/* Only nginx's internal location sets the parameter (a client's headers arrive as
	 * HTTP_*): to anyone else the route does not exist. */
	if (!host)
		return err_set(e, ERR_NOTFOUND, "not found");
	/* One check per proxied request: nginx's access log has them, the audit log the
	 * previews' making and deletion (README "Previews"). */
	r->audited = 1;
	/* auth_request passes 401 and 403 on (anything else is its 500): 403 is the preview
	 * server's 404. */
	if (preview_host_id(host, r->cfg->preview_domain, id))
		return err_http(e, 403, "preview not found");
	/* A sandbox of another host's engine is reached on that host's bridge, which this one
	 * may not have: its previews are served there (their URLs name that host's preview
	 * domain, README "Several sandboxd hosts"), and here they are not found.
	 * The address is the sandbox's row's, never one kept with the preview, and it is given
	 * only while no other live container of the engine claims it (a sandbox's or a warm
	 * one's): a container that died frees its address for the engine's next container
	 * while its sandbox's row still names it, until the reaper ends that sandbox; meanwhile
	 * neither sandbox's previews serve (closed, not guessed). Both probes are partial
	 * indexes (029) and the maker's standing three key lookups: still one round trip. */
	res = db_exec(r->db, e, &code,
		      "SELECT host(s.agent_ip), p.port, coalesce(d.relay_url, '')" PREVIEW_FROM
		      "  LEFT JOIN docker_engines d ON d.name = s.engine"
		      " WHERE p.id = $1 AND" PREVIEW_SERVES " AND s.agent_ip IS NOT NULL"
		      "   AND NOT EXISTS (SELECT 1 FROM sandboxes o WHERE o.agent_ip = s.agent_ip"
		      "         AND o.state IN ('starting', 'ready') AND o.agent_ip IS NOT NULL"
		      "         AND o.id <> s.id AND o.engine IS NOT DISTINCT FROM s.engine)"
		      "   AND NOT EXISTS (SELECT 1 FROM warm_containers w WHERE w.agent_ip = s.agent_ip"
		      "         AND w.state IN ('starting', 'ready') AND w.agent_ip IS NOT NULL"
		      "         AND w.instance IS NOT DISTINCT FROM s.engine"
		      "         AND w.container_id IS DISTINCT FROM s.container_id)",
		      1, id);
	if (!res)
		return code;
	if (PQntuples(res) != 1 || !preview_addr_ok(db_val(res, 0, 0)) ||
	    !engine_here(db_val(res, 0, 2))) {
		PQclear(res);
		return err_http(e, 403, "preview not found");
	}
	http_header(r, "X-Sandboxd-Preview-Addr", db_val(res, 0, 0));
	http_header(r, "X-Sandboxd-Preview-Port", db_val(res, 0, 1));
	PQclear(res);
	http_empty(r, 204);
	return 0;
}
