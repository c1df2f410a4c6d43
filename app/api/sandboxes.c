/* api_sandboxes.c: the sandbox routes under /api/v3/repos/{owner}/{repo}/diffinery/sandboxes,
 * and GET /api/v3/sandboxes/{id}, the same GET by id alone. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/sandbox.h"
#include "sandboxd/engine/isolation.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/sandbox/sandbox_save.h"
#include "sandboxd/sandbox/secrets.h"
#include "sandboxd/common/banned.h"

/* The create's "secrets": names of the repository's secrets (each at most once, at most
 * SECRETS_PER_SANDBOX), as a text[] literal in *out (NULL: none). 400 for the shape, 422
 * for a name the repository has no secret of, 503 without the secrets' key. */
static int create_secrets(struct req *r, const struct repo *repo, const char **out,
			  struct err *e)
{
	json_object *a;
	char *lit;
	size_t n;
	int code = 0;

	*out = NULL;
	if (!json_object_object_get_ex(r->json, "secrets", &a) || json_object_is_type(a, json_type_null))
		return 0;
	if (!json_object_is_type(a, json_type_array) ||
	    (n = json_object_array_length(a)) > SECRETS_PER_SANDBOX)
		return err_set(e, ERR_INVALID, "field 'secrets' must be an array of at most %d names",
			       SECRETS_PER_SANDBOX);
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(a, i);
		const char *name = json_object_get_string(v);
		if (!json_object_is_type(v, json_type_string) || !secrets_name_valid(name))
			return err_set(e, ERR_INVALID, "field 'secrets' must hold secret names");
		for (size_t k = 0; k < i; k++)
			if (!strcmp(name, json_object_get_string(json_object_array_get_idx(a, k))))
				return err_set(e, ERR_INVALID, "field 'secrets' names '%s' twice", name);
	}
	if (!n)
		return 0;
	if (!secrets_configured())
		return err_http(e, 503, "sandbox secrets are not configured: set SANDBOXD_SECRETS_KEY_FILE");
	lit = "{";
	for (size_t i = 0; i < n; i++)
		lit = pool_printf(r->pool, "%s%s%s", lit,
				  json_object_get_string(json_object_array_get_idx(a, i)),
				  i + 1 < n ? "," : "}");
	PGresult *res = db_exec(r->db, e, &code,
				"SELECT w FROM unnest($2::text[]) w WHERE NOT EXISTS (SELECT 1 FROM"
				" sandbox_secrets WHERE repository_id = $1 AND name = w) LIMIT 1",
				2, repo->id, lit);
	if (!res)
		return code;
	int missing = PQntuples(res) > 0;
	char *which = missing ? pool_strdup(r->pool, db_val(res, 0, 0)) : NULL;
	PQclear(res);
	if (missing)
		return err_http(e, 422, "unknown secret: %s", which);
	json_object_object_add(r->audit_details, "secrets", json_object_get(a));
	*out = lit;
	return 0;
}

/* A size in MiB (from 64) that the create may ask for, as create_limits says: the asked
 * value goes into the audit row as key, 422 past max (bytes); *out (bytes) only when given. */
static int mib_field(struct req *r, const char *field, const char *key, int64_t max,
		     int64_t *out, struct err *e)
{
	int64_t mib = 0;
	int rc = json_field_int(r->json, field, 0, 64, INT32_MAX, &mib, e);

	if (rc)
		return rc < 0 ? rc : 0;
	json_add_int(r->audit_details, key, mib);
	if (mib > max >> 20)
		return err_http(e, 422, "field '%s' is over this deployment's maximum (%lld)", field,
				(long long)(max >> 20));
	*out = mib << 20;
	return 0;
}

/* The create's own limits (SPEC §4 "Limits"): cpus, a number from 0.01, memoryMiB and
 * diskMiB, from 64, each up to the operator's maximum (never below the default): 400 for
 * the shape, 422 naming the field past the maximum. */
static int create_limits(struct req *r, struct sandbox_limits *lim, struct err *e)
{
	int64_t max_mem = r->cfg->sandbox_max_memory > r->cfg->sandbox_memory
				  ? r->cfg->sandbox_max_memory : r->cfg->sandbox_memory;
	int max_cpus = r->cfg->sandbox_max_cpus > r->cfg->sandbox_cpus ? r->cfg->sandbox_max_cpus
								       : r->cfg->sandbox_cpus;
	int64_t max_disk = r->cfg->sandbox_max_disk > r->cfg->sandbox_disk ? r->cfg->sandbox_max_disk
									   : r->cfg->sandbox_disk;
	json_object *v;
	int rc;

	memset(lim, 0, sizeof(*lim));
	if (json_object_object_get_ex(r->json, "cpus", &v) && !json_object_is_type(v, json_type_null)) {
		double c = json_object_get_double(v);
		if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
			return err_set(e, ERR_INVALID, "field 'cpus' must be a number");
		if (!(c >= 0.01))
			return err_set(e, ERR_INVALID, "field 'cpus' must be at least 0.01");
		/* What was asked goes in the row, a refused one too (as for each field here). */
		json_add_int(r->audit_details, "nano_cpus", (int64_t)(c * 1e9 + 0.5));
		if (c > max_cpus)
			return err_http(e, 422, "field 'cpus' is over this deployment's maximum (%d)",
					max_cpus);
		lim->nano_cpus = (int64_t)(c * 1e9 + 0.5);
	}
	if ((rc = mib_field(r, "memoryMiB", "memory_mib", max_mem, &lim->memory, e)))
		return rc;
	return mib_field(r, "diskMiB", "disk_mib", max_disk, &lim->disk, e);
}
/* The create's image (SPEC §4 "What's inside"): its own choice wins, then the repository's,
 * then the default (*out NULL). A name SANDBOXD_IMAGES does not hold: 422. */
static int create_image(struct req *r, const struct repo *repo, const char *asked,
			const struct config_image **out, struct err *e)
{
	const char *name = asked ? asked : repo->sandbox_image[0] ? repo->sandbox_image : NULL;

	*out = NULL;
	if (name && !(*out = config_image_find(r->cfg, name)))
		return err_http(e, 422, "unknown image");
	json_add_str(r->audit_details, "image", name ? name : r->cfg->images[0].name);
	return 0;
}

/* The create's egress (SPEC §4 "Limits"): none, web or open, at most the deployment's
 * (SANDBOXD_EGRESS); absent or null: the deployment's (*out NULL). 400 for anything but the
 * three, 422 for a wider one. */
static int create_egress(struct req *r, const char **out, struct err *e)
{
	static const char *const modes[] = { "none", "web", "open", NULL };
	const char *mode = NULL;
	int rc;

	*out = NULL;
	if ((rc = json_field_enum(r->json, "egress", 0, modes, &mode, e)) < 0)
		return rc;
	/* What was asked goes in the row, a refused one too. */
	json_add_str(r->audit_details, "egress", mode ? mode : r->cfg->egress);
	if (rc == 0 && config_egress_rank(mode) > config_egress_rank(r->cfg->egress))
		return err_http(e, 422, "field 'egress' is wider than this deployment's (%s)",
				r->cfg->egress);
	*out = mode;
	return 0;
}

/* The create's isolation (issue 32 C, isolation.h): container, the default, or
 * gvisor; 400 for anything else. Whether an engine offers it is the create's to say. */
static int create_isolation(struct req *r, int *gvisor, struct err *e)
{
	static const char *const kinds[] = { ISOLATION_CONTAINER, ISOLATION_GVISOR, NULL };
	const char *kind = NULL;
	int rc;

	*gvisor = 0;
	if ((rc = json_field_enum(r->json, "isolation", 0, kinds, &kind, e)) < 0)
		return rc;
	/* What was asked goes in the row, a refused one too. */
	json_add_str(r->audit_details, "isolation", kind ? kind : ISOLATION_CONTAINER);
	*gvisor = kind && !strcmp(kind, ISOLATION_GVISOR);
	return 0;
}

/* What the create's row says of the sandbox it made, or began (rc its outcome). */
static void create_audit(struct req *r, const struct sandbox *s, int rc, int64_t depth,
			 const char *filter, const char *detail)
{
	if (s->id[0]) {
		json_add_str(r->audit_details, "sandbox_id", s->id);
		r->audit_sandbox = pool_strdup(r->pool, s->id);
		json_add_str(r->audit_details, "ref", s->ref);
		json_add_str(r->audit_details, "commit", s->commit);
		if (depth)
			json_add_int(r->audit_details, "depth", depth);
		if (filter)
			json_add_str(r->audit_details, "filter", filter);
	}
	if (rc == 0)
		json_add_bool(r->audit_details, "pooled", s->pooled);
	if (rc == 0 && s->handed[0])
		json_add_str(r->audit_details, "handed_by", s->handed);
	/* The Docker runtime its container was made with (runc, runsc, …), when the engine
	 * said. */
	if (rc == 0 && s->runtime[0])
		json_add_str(r->audit_details, "runtime", s->runtime);
	if (detail[0])
		json_add_str(r->audit_details, "error", detail);
}

/* A sandbox's own idle limit (PATCH), seconds (SPEC §4 "Keep-alive and lifetime"). */
#define SANDBOX_IDLE_MIN 60
#define SANDBOX_IDLE_MAX 86400

int api_sandbox_create(struct req *r, struct err *e)
{
	const char *ref = NULL, *filter = NULL, *secrets = NULL, *image = NULL, *egress;
	const struct config_image *im;
	int64_t depth = 0;
	int gvisor = 0;
	char detail[SANDBOX_DETAIL_MAX];
	struct sandbox_limits lim;
	struct repo repo;
	struct sandbox s;
	int rc;

	/* Job and sandbox tokens never get here: the route is ROUTE_SANDBOX, and every way
	 * into a handler (dispatch's run and request_call, MCP's too) runs check_caller. */
	if ((rc = json_field_string(r->json, "ref", 0, 255, &ref, e)) < 0 ||
	    (rc = json_field_int(r->json, "depth", 0, 1, SANDBOX_DEPTH_MAX, &depth, e)) < 0 ||
	    (rc = json_field_string(r->json, "filter", 0, 64, &filter, e)) < 0 ||
	    (rc = json_field_string(r->json, "image", 0, 64, &image, e)) < 0)
		return rc;
	if (filter && strcmp(filter, "blob:none"))
		return err_set(e, ERR_INVALID, "field 'filter' must be \"blob:none\"");
	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_WRITE, 1,
			    &repo, e)) || (rc = create_image(r, &repo, image, &im, e)) ||
	    (rc = create_limits(r, &lim, e)) || (rc = create_egress(r, &egress, e)) ||
	    (rc = create_isolation(r, &gvisor, e)) ||
	    (rc = create_secrets(r, &repo, &secrets, e)))
		return rc;
	struct sandbox_new n = { .db = r->db, .cfg = r->cfg, .pool = r->pool,
				 .caller = &r->caller, .repo = &repo, .ref = ref, .depth = depth,
				 .blobless = filter != NULL, .secrets = secrets, .limits = lim,
				 .image = im, .egress = egress, .here_only = r->relayed,
				 .gvisor = gvisor };
	rc = sandbox_create(&n, &s, detail, e);
	/* Placed on another host's engine: that host makes it (and writes the row). */
	if (rc == ERR_RELAY) {
		r->relay_to = pool_strdup(r->pool, s.host);
		return r->relay_to ? rc : err_set(e, ERR_NOMEM, "out of memory");
	}
	create_audit(r, &s, rc, depth, filter, detail);
	if (rc == ERR_NOTFOUND)
		return err_http(e, 422, "unknown ref");
	if (rc) /* ERR_LIMIT is 429, ERR_NOSTART 503 with its reason */
		return rc;
	json_object *o = json_object_new_object();
	json_add_str(o, "id", s.id);
	json_add_str(o, "ref", s.ref);
	json_add_str(o, "state", s.state);
	json_add_str(o, "image", s.image);
	json_add_str(o, "egress", s.egress);
	json_add_str(o, "isolation", s.isolation);
	json_add_str(o, "created_at", s.created_at[0] ? s.created_at : NULL);
	http_json(r, 201, o);
	return 0;
}

/* api_sandbox_access for the sandbox id of owner/name, wherever the request names them. */
static int access_at(struct req *r, const char *owner, const char *name, const char *id,
		     struct repo *repo, struct sandbox *s, int live, struct err *e)
{
	int rc;

	/* The write role, as creating one needs (SPEC §4 Use): a sandbox holds a credential
	 * that can push. The route's ROUTE_SANDBOX flag has checked the token's scope. */
	if ((rc = auth_repo(r, owner, name, ROLE_WRITE, 1, repo, e)))
		return rc;
	if ((rc = sandbox_load(r->db, repo->id, id, s, e)))
		return rc == ERR_NOTFOUND ? err_set(e, rc, "sandbox not found") : rc;
	json_add_str(r->audit_details, "sandbox_id", s->id);
	r->audit_sandbox = pool_strdup(r->pool, s->id);
	if (strcmp(s->account_id, r->caller.account_id) && repo->role < ROLE_ADMIN)
		return err_set(e, ERR_DENIED, "not your sandbox");
	/* A live sandbox of another host's engine: the call is that host's (it has the engine,
	 * the bridge, the agent); an ended one is a row, which any host reads. */
	if (s->host[0] && (!strcmp(s->state, "ready") || !strcmp(s->state, "starting"))) {
		r->relay_to = pool_strdup(r->pool, s->host);
		if (!r->relay_to)
			return err_set(e, ERR_NOMEM, "out of memory");
		return err_set(e, ERR_RELAY, "sandbox %s runs on the host at %s", s->id, s->host);
	}
	if (live && strcmp(s->state, "ready") && strcmp(s->state, "starting"))
		return err_http(e, 410, "sandbox is %s", s->state);
	return 0;
}

int api_sandbox_access(struct req *r, struct repo *repo, struct sandbox *s, int live,
		       struct err *e)
{
	return access_at(r, http_path_param(r, 0), http_path_param(r, 1), http_path_param(r, 2),
			 repo, s, live, e);
}

/* The answer of a GET of s: made current first. repository ("owner/name") is added when
 * the path did not name it. */
static int get_answer(struct req *r, struct sandbox *s, const char *repository, struct err *e)
{
	json_object *o;

	/* A pending clone is asked about (one short exec), so that the answer is current. */
	if (strcmp(s->state, "ready") == 0 && strcmp(s->clone_state, "pending") == 0 &&
	    sandbox_clone_wait(r->db, r->cfg, s, 0, NULL, NULL, e))
		log_warn("clone state of %s: %s", s->id, e->msg);
	/* Every call counts as activity. */
	if (strcmp(s->state, "ready") == 0 && sandbox_touch(r->db, r->cfg->idle_timeout, s, e))
		return ERR_DB;
	if (!(o = sandbox_json(s)))
		return err_set(e, ERR_NOMEM, "out of memory");
	if (repository)
		json_add_str(o, "repository", repository);
	http_json(r, 200, o);
	return 0;
}

int api_sandbox_get(struct req *r, struct err *e)
{
	struct repo repo;
	struct sandbox s;
	int rc;

	return (rc = api_sandbox_access(r, &repo, &s, 0, e)) ? rc : get_answer(r, &s, NULL, e);
}

/* GET /api/v3/sandboxes/{id}: the scoped GET of the repository that holds it, plus its
 * repository. One the caller cannot see is the scoped route's "sandbox not found", whether
 * the id names no sandbox or one of a repository hidden from the caller: the answer says
 * nothing of which (decision 0091). */
int api_sandbox_get_by_id(struct req *r, struct err *e)
{
	char owner[256], name[256];
	struct repo repo;
	struct sandbox s;
	PGresult *res;
	int rc, code = 0, found;

	res = db_exec(r->db, e, &code,
		      "SELECT o.login, rp.name FROM sandboxes s"
		      "  JOIN repositories rp ON rp.id = s.repository_id"
		      "  JOIN accounts o ON o.id = rp.owner_id WHERE s.id = $1",
		      1, http_path_param(r, 0));
	if (!res)
		return code;
	found = PQntuples(res) == 1 &&
		!str_copy(owner, sizeof(owner), db_val(res, 0, 0)) &&
		!str_copy(name, sizeof(name), db_val(res, 0, 1));
	PQclear(res);
	if (!found)
		return err_set(e, ERR_NOTFOUND, "sandbox not found");
	rc = access_at(r, owner, name, http_path_param(r, 0), &repo, &s, 0, e);
	if (rc == ERR_NOTFOUND)
		return err_set(e, rc, "sandbox not found");
	if (rc)
		return rc;
	const char *full = pool_printf(r->pool, "%s/%s", repo.owner, repo.name);

	return full ? get_answer(r, &s, full, e) : err_set(e, ERR_NOMEM, "out of memory");
}

int api_sandbox_list(struct req *r, struct err *e)
{
	struct repo repo;
	PGresult *res;
	int rc, code = 0;

	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_WRITE, 1,
			    &repo, e)))
		return rc;
	/* Admins see every sandbox of the repository; others their own. */
	res = db_exec(r->db, e, &code,
		      "SELECT id FROM sandboxes WHERE repository_id = $1"
		      "   AND ($2 OR account_id = $3::bigint) ORDER BY created_at DESC LIMIT 1000",
		      3, repo.id, repo.role >= ROLE_ADMIN ? "true" : "false", r->caller.account_id);
	if (!res)
		return code;
	json_object *list = json_object_new_array();
	for (int i = 0; i < PQntuples(res); i++) {
		struct sandbox s;
		if (sandbox_load(r->db, repo.id, db_val(res, i, 0), &s, e) == 0)
			json_object_array_add(list, sandbox_json(&s));
	}
	PQclear(res);
	http_json(r, 200, list);
	return 0;
}

/* POST …/close {save?}: 204. With save, a ready sandbox's unpushed work goes to its
 * ephemeral ref first (sandbox_save.h); a save that fails is a 409 naming why, and the
 * sandbox stays open: nothing is lost. */
int api_sandbox_close(struct req *r, struct err *e)
{
	char ref[SANDBOX_SAVE_REF_MAX] = "";
	struct repo repo;
	struct sandbox s;
	int rc, save = 0;

	if ((rc = api_sandbox_access(r, &repo, &s, 0, e)) ||
	    (rc = auth_user_write(&r->caller, e)) ||
	    (rc = json_field_bool(r->json, "save", 0, &save, e)) < 0)
		return rc;
	if (save && strcmp(s.state, "ready") == 0) {
		if ((rc = sandbox_save(r->db, r->cfg, &s, ref, e))) {
			char why[sizeof(e->msg)];
			snprintf(why, sizeof(why), "%s", e->msg);
			json_add_str(r->audit_details, "save_error", why);
			return err_box(e, 409, "its work could not be saved: %.200s", why);
		}
		json_add_str(r->audit_details, "saved_ref", ref[0] ? ref : NULL);
		if (ref[0] && (rc = db_run(r->db, e, "UPDATE sandboxes SET saved_ref = $2"
						     " WHERE id = $1", 2, s.id, ref)))
			return rc;
	}
	/* Closing a closed sandbox is 204 again. */
	if ((rc = sandbox_end(r->db, &s, "closed", "closed", e)))
		return rc;
	http_empty(r, 204);
	return 0;
}

/* A live sandbox the caller may change: its own (or a repository admin's), a user's call. */
static int live_writable(struct req *r, struct repo *repo, struct sandbox *s, struct err *e)
{
	int rc = api_sandbox_access(r, repo, s, 1, e);

	return rc ? rc : auth_user_write(&r->caller, e);
}

/* Activity on a ready sandbox moves its idle deadline; a starting one has none yet. */
static int touch_ready(struct req *r, const struct sandbox *s, struct err *e)
{
	return strcmp(s->state, "ready") ? 0 : sandbox_touch(r->db, r->cfg->idle_timeout, s, e);
}

/* PATCH …/sandboxes/{id} {idle_timeout_seconds?}: the sandbox's own idle limit, from now
 * on (SPEC §4 "Keep-alive and lifetime"); the call counts as activity, so the deadline
 * is now + the limit. Answers the sandbox as GET does. */
int api_sandbox_update(struct req *r, struct err *e)
{
	int64_t idle = 0;
	char secs[24] = "";
	struct repo repo;
	struct sandbox s;
	int rc;

	if ((rc = live_writable(r, &repo, &s, e)))
		return rc;
	if ((rc = json_field_int(r->json, "idle_timeout_seconds", 0, SANDBOX_IDLE_MIN,
				 SANDBOX_IDLE_MAX, &idle, e)) < 0)
		return rc;
	if (rc == 0) {
		snprintf(secs, sizeof(secs), "%lld", (long long)idle);
		json_object *changes = json_object_new_object();

		json_add_int(changes, "idle_timeout_seconds", idle);
		json_object_object_add(r->audit_details, "changes", changes);
		if ((rc = db_run(r->db, e,
				 "UPDATE sandboxes SET idle_timeout_seconds = $2::int"
				 " WHERE id = $1 AND state IN ('starting', 'ready')",
				 2, s.id, secs)))
			return rc;
	}
	if ((rc = touch_ready(r, &s, e)))
		return rc;
	char id[sizeof(s.id)];

	memcpy(id, s.id, sizeof(id));  /* sandbox_load clears s first */
	if ((rc = sandbox_load(r->db, repo.id, id, &s, e)))
		return rc;
	json_add_str(r->audit_details, "idle_stop_at", s.idle_stop_at);
	http_json(r, 200, sandbox_json(&s));
	return 0;
}

/* POST …/sandboxes/{id}/keepalive: activity, nothing else: 204. */
int api_sandbox_keepalive(struct req *r, struct err *e)
{
	struct repo repo;
	struct sandbox s;
	int rc;

	if ((rc = live_writable(r, &repo, &s, e)) || (rc = touch_ready(r, &s, e)))
		return rc;
	http_empty(r, 204);
	return 0;
}
