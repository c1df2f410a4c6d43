/* api_secrets.c: a repository's sandbox secrets (SPEC.md §4 "Secrets"): PUT (admin) seals a
 * value (secrets.h) and stores it, GET lists names and dates (never values), DELETE removes
 * one. Shapes as GitHub's Actions secrets: 201 when made, 204 when changed, {total_count,
 * secrets: [{name, created_at, updated_at}]}. Values go nowhere else: not into the answer,
 * the log or the audit row (its details name the secret only). */
#include <string.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/sandbox/secrets.h"
#include "sandboxd/common/banned.h"

#define NOT_CONFIGURED "sandbox secrets are not configured: set SANDBOXD_SECRETS_KEY_FILE"

static int secret_name(struct req *r, const char **name, struct err *e)
{
	*name = http_path_param(r, 2);
	json_add_str(r->audit_details, "secret", *name);
	if (!secrets_name_valid(*name))
		return err_http(e, 422, "secret names are letters, digits and '_', not starting "
				"with a digit, at most %d", SECRETS_NAME_MAX);
	return 0;
}

/* The value of the body: a string (400 otherwise, json.h's text) of SECRETS_VALUE_MIN to
 * SECRETS_VALUE_MAX bytes (422). */
static int secret_value(struct req *r, const char **value, struct err *e)
{
	size_t n;
	int rc = json_field_string(r->json, "value", 1, (size_t)1 << 20, value, e);

	if (rc)
		return rc;
	n = strlen(*value);
	if (n < SECRETS_VALUE_MIN || n > SECRETS_VALUE_MAX)
		return err_http(e, 422, "field 'value' must be %d to %d bytes", SECRETS_VALUE_MIN,
				SECRETS_VALUE_MAX);
	return 0;
}

int api_secret_put(struct req *r, struct err *e)
{
	const char *name, *value;
	struct repo repo;
	PGresult *res;
	char *sealed;
	int rc, code = 0, made;

	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_ADMIN, 1, &repo,
			    e)) || (rc = secret_name(r, &name, e)) || (rc = secret_value(r, &value, e)))
		return rc;
	if (!secrets_configured())
		return err_http(e, 503, NOT_CONFIGURED);
	if ((rc = secrets_seal(r->pool, repo.id, name, value, strlen(value), &sealed, e)))
		return rc;
	/* At most SECRETS_PER_REPO: counted under the row lock of the repository. */
	res = db_exec(r->db, e, &code,
		      "WITH lock AS (SELECT id FROM repositories WHERE id = $1 FOR UPDATE),"
		      "     n AS (SELECT count(*) AS n FROM sandbox_secrets, lock"
		      "            WHERE repository_id = lock.id AND name <> $2)"
		      " INSERT INTO sandbox_secrets (repository_id, name, value_enc)"
		      " SELECT $1, $2, decode($3, 'hex') FROM n WHERE n.n < $4::int"
		      " ON CONFLICT (repository_id, name) DO UPDATE"
		      "   SET value_enc = excluded.value_enc, updated_at = now()"
		      " RETURNING (xmax = 0), rfc3339(created_at), rfc3339(updated_at)",
		      4, repo.id, name, sealed, pool_printf(r->pool, "%d", SECRETS_PER_REPO));
	if (!res)
		return code;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return err_http(e, 422, "a repository has at most %d sandbox secrets",
				SECRETS_PER_REPO);
	}
	made = strcmp(db_val(res, 0, 0), "t") == 0;
	json_add_bool(r->audit_details, "created", made);
	if (made) {
		json_object *o = json_object_new_object();
		json_add_str(o, "name", name);
		json_add_str(o, "created_at", db_val(res, 0, 1));
		json_add_str(o, "updated_at", db_val(res, 0, 2));
		http_json(r, 201, o);
	} else {
		http_empty(r, 204);
	}
	PQclear(res);
	return 0;
}

int api_secrets_list(struct req *r, struct err *e)
{
	struct repo repo;
	PGresult *res;
	int rc, code = 0;

	/* Names are what a create asks for: whoever may create sandboxes may see them. */
	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_WRITE, 0, &repo,
			    e)))
		return rc;
	res = db_exec(r->db, e, &code,
		      "SELECT name, rfc3339(created_at), rfc3339(updated_at) FROM sandbox_secrets"
		      " WHERE repository_id = $1 ORDER BY name", 1, repo.id);
	if (!res)
		return code;
	json_object *list = json_object_new_array(), *o = json_object_new_object();
	for (int i = 0; i < PQntuples(res); i++) {
		json_object *s = json_object_new_object();
		json_add_str(s, "name", db_val(res, i, 0));
		json_add_str(s, "created_at", db_val(res, i, 1));
		json_add_str(s, "updated_at", db_val(res, i, 2));
		json_object_array_add(list, s);
	}
	json_add_int(o, "total_count", PQntuples(res));
	json_object_object_add(o, "secrets", list);
	PQclear(res);
	http_json(r, 200, o);
	return 0;
}

int api_secret_delete(struct req *r, struct err *e)
{
	const char *name;
	struct repo repo;
	PGresult *res;
	int rc, code = 0, n;

	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_ADMIN, 1, &repo,
			    e)) || (rc = secret_name(r, &name, e)))
		return rc;
	res = db_exec(r->db, e, &code,
		      "DELETE FROM sandbox_secrets WHERE repository_id = $1 AND name = $2"
		      " RETURNING 1", 2, repo.id, name);
	if (!res)
		return code;
	n = PQntuples(res);
	PQclear(res);
	if (!n)
		return err_set(e, ERR_NOTFOUND, "secret not found");
	http_empty(r, 204);
	return 0;
}
