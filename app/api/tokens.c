/* api_tokens.c: minting and revoking personal and job tokens. A token is shown once, in the
 * response that creates it; only its hash is kept. */
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/forge/account.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/common/banned.h"

#define EXPIRES_MIN 60
#define EXPIRES_MAX 31536000L        /* one year */
#define PERSONAL_DEFAULT 7776000L    /* 90 days */
#define JOB_DEFAULT 86400L           /* one day */

static const char *const scopes[] = { "read", "write", NULL };

/* Validates {scope, expires_in?, note?}, mints the token and answers 201. */
static int create(struct req *r, enum token_kind kind, const char *account_id,
		  const char *repo_id, long default_expiry, struct err *e)
{
	const char *scope, *note = NULL;
	int64_t expires = default_expiry;
	char token[TOKEN_LEN + 1], id[DB_ID_MAX], expires_at[32];
	json_object *o;
	int rc;

	if ((rc = json_field_enum(r->json, "scope", 1, scopes, &scope, e)) < 0 ||
	    (rc = json_field_int(r->json, "expires_in", 0, EXPIRES_MIN, EXPIRES_MAX, &expires,
				 e)) < 0 ||
	    (rc = json_field_string(r->json, "note", 0, 200, &note, e)) < 0)
		return rc;
	if ((rc = auth_token_create(r->db, kind, account_id, repo_id, strcmp(scope, "write") == 0,
				    (long)expires, note, token, id, expires_at, e)))
		return rc;
	json_add_str(r->audit_details, "token_id", id);
	json_add_str(r->audit_details, "scope", scope);
	o = json_object_new_object();
	json_add_str(o, "id", id);
	json_add_str(o, "token", token);
	json_add_str(o, "scope", scope);
	json_add_str(o, "expires_at", expires_at[0] ? expires_at : NULL);
	OPENSSL_cleanse(token, sizeof(token));
	http_json(r, 201, o);
	return 0;
}

int api_user_tokens_create(struct req *r, struct err *e)
{
	int rc = auth_user_write(&r->caller, e);

	return rc ? rc : create(r, TOKEN_PERSONAL, r->caller.account_id, NULL, PERSONAL_DEFAULT, e);
}

int api_user_tokens_revoke(struct req *r, struct err *e)
{
	const char *id = http_path_param(r, 0);
	int64_t n;
	PGresult *res;
	int rc, code = 0;

	/* Revoking is a write: a read-scoped token must not end the account's write tokens. */
	if ((rc = auth_user_write(&r->caller, e)))
		return rc;
	json_add_str(r->audit_details, "token_id", id);
	if (num_parse(id, 1, INT64_MAX, &n))
		return err_set(e, ERR_NOTFOUND, "token not found");
	/* The caller's own personal and job tokens, and any job token of a repository the
	 * caller administers now (the admin who made it may have left). Revoking twice is not
	 * an error; anything else is not found, so ids of others' tokens tell nothing. */
	res = db_exec(r->db, e, &code,
		      "UPDATE tokens t SET revoked_at = coalesce(t.revoked_at, now())"
		      "  FROM accounts me"
		      " WHERE t.id = $1 AND me.id = $2"
		      "   AND ((t.kind IN ('personal', 'job') AND t.account_id = me.id)"
		      "        OR (t.kind = 'job' AND EXISTS ("
		      "            SELECT 1 FROM repositories rp WHERE rp.id = t.repository_id"
		      "               AND (me.site_admin OR rp.owner_id = me.id OR EXISTS ("
		      "                    SELECT 1 FROM collaborators c WHERE c.repository_id = rp.id"
		      "                       AND c.account_id = me.id AND c.role = 'admin')))))"
		      " RETURNING t.kind",
		      2, id, r->caller.account_id);
	if (!res)
		return code;
	if (PQntuples(res) == 0) {
		rc = err_set(e, ERR_NOTFOUND, "token not found");
	} else {
		json_add_str(r->audit_details, "kind", db_val(res, 0, 0));
		http_empty(r, 204);
	}
	PQclear(res);
	return rc;
}

int api_job_tokens_create(struct req *r, struct err *e)
{
	struct repo repo;
	const char *scope = NULL;
	int rc;

	if (r->caller.kind == TOKEN_JOB)
		return err_set(e, ERR_DENIED, "job tokens can only be used on their repository");
	/* Validate scope first so that the archive rule below can depend on it. A write token
	 * for an archived repository could never write. */
	if ((rc = json_field_enum(r->json, "scope", 1, scopes, &scope, e)) < 0 ||
	    (rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_ADMIN,
			    strcmp(scope, "write") == 0, &repo, e)))
		return rc;
	return create(r, TOKEN_JOB, r->caller.account_id, repo.id, JOB_DEFAULT, e);
}

int api_admin_tokens_create(struct req *r, struct err *e)
{
	struct account a;
	int rc;

	if ((rc = account_load(r->db, http_path_param(r, 0), &a, e)))
		return rc;
	json_add_str(r->audit_details, "account", a.login);
	return create(r, TOKEN_PERSONAL, a.id, NULL, PERSONAL_DEFAULT, e);
}
