/* auth.c: who is calling, and what they may do on a repository. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "sandboxd/forge/auth.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

/* Copies a column into its field; the fields are sized to the schema's bounds, so a value
 * that does not fit is a broken row, never cut: ERR_FAIL through the callers' `cut`. */
static int copy(char *dst, size_t n, const char *src)
{
	return str_copy(dst, n, src) ? 1 : 0;
}

/* The caller from the token's row: 0, ERR_DENIED with *failure saying why, or ERR_FAIL
 * for a row that does not fit. */
static int caller_from_row(struct caller *c, const char **failure, PGresult *res,
			   enum token_kind kind, struct err *e)
{
	account_from_row(res, 0, 7, &c->account);
	if (copy(c->token_id, sizeof(c->token_id), db_val(res, 0, 0)) |
	    copy(c->account_id, sizeof(c->account_id), c->account.id) |
	    copy(c->login, sizeof(c->login), c->account.login) |
	    copy(c->job_repo_id, sizeof(c->job_repo_id), db_val(res, 0, 3)))
		return err_set(e, ERR_FAIL, "a token's row does not fit its fields");
	c->kind = kind;
	if (db_bool(res, 0, 4))
		*failure = "token expired";
	else if (db_bool(res, 0, 5))
		*failure = "token revoked";
	else if (c->account.disabled)
		*failure = "account disabled";
	else if (strcmp(db_val(res, 0, 1), token_kind_name(kind)))
		*failure = "token kind does not match its prefix";
	if (*failure)
		return ERR_DENIED;
	c->authenticated = 1;
	c->scope_write = strcmp(db_val(res, 0, 2), "write") == 0;
	c->agent = strcmp(c->account.kind, "agent") == 0;
	c->site_admin = c->account.site_admin;
	return 0;
}

/* A token of ours (not a JWT), looked up by its hash. */
static int resolve_token(struct db *db, struct caller *c, const char **failure, const char *cred,
			 enum token_kind kind, struct err *e)
{
	char hash[TOKEN_HASH_LEN + 1];
	int rc, code = 0;
	PGresult *res;

	token_hash(cred, strlen(cred), hash);
	res = db_exec(db, e, &code,
		      "SELECT t.id, t.kind, t.scope, t.repository_id,"
		      "       t.expires_at IS NOT NULL AND t.expires_at <= now(),"
		      "       t.revoked_at IS NOT NULL,"
		      "       t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute',"
		      "       " ACCOUNT_COLUMNS_A
		      "  FROM tokens t JOIN accounts a ON a.id = t.account_id"
		      " WHERE t.hash = $1",
		      1, hash);
	if (!res)
		return code;
	if (PQntuples(res) != 1) {
		*failure = "unknown token";
		rc = ERR_DENIED;
	} else {
		rc = caller_from_row(c, failure, res, kind, e);
	}
	if (rc == 0 && db_bool(res, 0, 6))
		rc = db_run(db, e, "UPDATE tokens SET last_used_at = now() WHERE id = $1", 1,
			    c->token_id);
	PQclear(res);
	return rc;
}

int auth_credential(struct db *db, struct pool *pool, const char *authorization, int git,
		    struct caller *c, const char **failure, struct err *e)
{
	char cred[TOKEN_MAX + 1];
	enum auth_scheme scheme;
	enum token_kind kind;
	int rc;

	memset(c, 0, sizeof(*c));
	*failure = NULL;
	if (token_parse_authorization(authorization, &scheme, cred, sizeof(cred))) {
		*failure = "malformed Authorization header";
		return ERR_DENIED;
	}
	if (scheme == AUTH_NONE)
		return 0;
	c->basic = scheme == AUTH_BASIC;
	kind = token_classify(cred, strlen(cred));
	if (kind == TOKEN_INVALID) {
		*failure = "not a token (bad format or checksum)";
		rc = ERR_DENIED;
	} else if (kind == TOKEN_JWT && !git) {
		*failure = "git URL tokens are for git only";
		rc = ERR_DENIED;
	} else if (kind == TOKEN_JWT) {
		rc = giturl_resolve(db, pool, cred, strlen(cred), c, failure, e);
	} else {
		rc = resolve_token(db, c, failure, cred, kind, e);
	}
	OPENSSL_cleanse(cred, sizeof(cred));
	return rc;
}

const char *role_name(enum role role)
{
	static const char *const names[] = { "none", "read", "write", "admin" };
	return role >= ROLE_NONE && role <= ROLE_ADMIN ? names[role] : "none";
}

enum role role_parse(const char *s)
{
	for (int i = ROLE_READ; i <= ROLE_ADMIN; i++)
		if (s && strcmp(s, role_name(i)) == 0)
			return i;
	return ROLE_NONE;
}

static enum role effective_role(const struct caller *c, const struct repo *repo,
				const char *collab_role)
{
	enum role role = ROLE_NONE;
	int is_public = strcmp(repo->visibility, "public") == 0;

	if (c->authenticated) {
		if (c->site_admin || strcmp(c->account_id, repo->owner_id) == 0)
			role = ROLE_ADMIN;
		else
			role = role_parse(collab_role);
	}
	/* A sandbox token acts as its creator on its sandbox's repository and reads public
	 * ones; no other private repository. */
	if (c->kind == TOKEN_SANDBOX && strcmp(c->job_repo_id, repo->id))
		role = ROLE_NONE;
	/* Job tokens, sandbox tokens and git URLs serve one repository (for job tokens and
	 * git URLs the caller checks which) and never administer it. */
	if ((c->kind == TOKEN_JOB || c->kind == TOKEN_JWT || c->kind == TOKEN_SANDBOX) &&
	    role > ROLE_WRITE)
		role = ROLE_WRITE;
	if (c->authenticated && !c->scope_write && role > ROLE_READ)
		role = ROLE_READ;
	if (is_public && role < ROLE_READ)
		role = ROLE_READ;
	return role;
}

/* A repository renamed away from owner/name (repo_redirects) answers 301 (out holding it
 * under its new name) to a caller who may see it there: anyone else gets what a name that
 * never existed gets, so private names do not leak. Returns 1 when there is no redirect
 * to give, else the answer's code. */
static int moved(struct db *db, const struct caller *c, const char *owner, const char *name,
		 unsigned flags, struct repo *out, struct err *e)
{
	struct repo to;
	char login[48], now[104];
	PGresult *res;
	int code = 0, rc;

	if (flags & AUTH_NO_MOVES)
		return 1;
	res = db_exec(db, e, &code,
		      "SELECT o.login, rp.name FROM repo_redirects d"
		      "  JOIN accounts o ON o.id = d.owner_id"
		      "  JOIN repositories rp ON rp.id = d.repository_id"
		      " WHERE lower(o.login) = lower($1) AND lower(d.name) = lower($2)",
		      2, owner, name);
	if (!res)
		return code;
	rc = PQntuples(res) != 1 || copy(login, sizeof(login), db_val(res, 0, 0)) |
				    copy(now, sizeof(now), db_val(res, 0, 1));
	PQclear(res);
	if (rc)
		return 1;
	rc = auth_access(db, c, login, now, ROLE_READ, (flags & AUTH_GIT) | AUTH_NO_MOVES, &to, e);
	if (rc == ERR_DB)
		return rc;
	if (rc)
		return 1;
	*out = to;
	return err_http(e, 301, "Moved Permanently");
}

int auth_access(struct db *db, const struct caller *c, const char *owner, const char *name,
		enum role need, unsigned flags, struct repo *out, struct err *e)
{
	PGresult *res;
	int code = 0, rc;

	memset(out, 0, sizeof(*out));
	res = db_exec(db, e, &code,
		      "SELECT r.id, r.owner_id, o.login, r.name, r.visibility, r.default_branch,"
		      "       r.archived, rfc3339(r.created_at),"
		      "       (SELECT c.role FROM collaborators c"
		      "         WHERE c.repository_id = r.id AND c.account_id = $3),"
		      "       coalesce(r.sandbox_image, '')"
		      "  FROM repositories r JOIN accounts o ON o.id = r.owner_id"
		      " WHERE lower(o.login) = lower($1) AND lower(r.name) = lower($2)",
		      3, owner, name, c->authenticated ? c->account_id : NULL);
	if (!res)
		return code;
	/* A name the repository left answers 301, a job token's own repository's too. */
	if (PQntuples(res) == 0 && (rc = moved(db, c, owner, name, flags, out, e)) != 1) {
		PQclear(res);
		return rc;
	}
	/* A job token serves its one repository. Any other gets the same answer whether it
	 * exists or not, is public or private: the answer must not tell which names exist. */
	if (c->kind == TOKEN_JOB &&
	    (PQntuples(res) != 1 || strcmp(c->job_repo_id, db_val(res, 0, 0)))) {
		PQclear(res);
		return err_set(e, ERR_DENIED, "job tokens can only be used on their repository");
	}
	if (PQntuples(res) == 1) {
		int cut = copy(out->id, sizeof(out->id), db_val(res, 0, 0)) |
			  copy(out->owner_id, sizeof(out->owner_id), db_val(res, 0, 1)) |
			  copy(out->owner, sizeof(out->owner), db_val(res, 0, 2)) |
			  copy(out->name, sizeof(out->name), db_val(res, 0, 3)) |
			  copy(out->visibility, sizeof(out->visibility), db_val(res, 0, 4)) |
			  copy(out->default_branch, sizeof(out->default_branch),
			       db_val(res, 0, 5)) |
			  copy(out->created_at, sizeof(out->created_at), db_val(res, 0, 7)) |
			  copy(out->sandbox_image, sizeof(out->sandbox_image), db_val(res, 0, 9));
		out->archived = db_bool(res, 0, 6);
		out->role = effective_role(c, out, db_val(res, 0, 8));
		if (cut) {
			PQclear(res);
			return err_set(e, ERR_FAIL, "repository %s/%s does not fit its fields",
				       owner, name);
		}
	}
	PQclear(res);
	if (out->role == ROLE_NONE) {
		/* A git client without credentials gets the challenge, so that it asks for them;
		 * the same for a repository that does not exist, so nothing leaks. */
		if ((flags & AUTH_GIT) && !c->authenticated)
			return err_set(e, ERR_AUTH, "authentication required");
		return err_set(e, ERR_NOTFOUND, "repository not found");
	}
	if (out->role < need) {
		if (!c->authenticated)
			return err_set(e, ERR_AUTH, "authentication required");
		if (!c->scope_write && need > ROLE_READ)
			return err_set(e, ERR_DENIED, "this needs a token with write scope");
		return err_set(e, ERR_DENIED, "this needs the %s role on %s/%s", role_name(need),
			       out->owner, out->name);
	}
	if ((flags & AUTH_WRITES) && out->archived)
		return err_set(e, ERR_DENIED, "repository is archived (read-only)");
	return 0;
}

int auth_user_write(const struct caller *c, struct err *e)
{
	if (c->kind == TOKEN_JOB)
		return err_set(e, ERR_DENIED, "job tokens can only be used on their repository");
	if (!c->scope_write)
		return err_set(e, ERR_DENIED, "this needs a token with write scope");
	return 0;
}

int auth_sandboxes_lost(struct db *db, const char *account_id, const char *repo_id,
			json_object *details, struct err *e)
{
	json_object *ids = NULL;
	PGresult *res;
	int code = 0, previews;

	/* Who still holds the write role is decided as effective_role does: site admin, owner,
	 * or a write or admin collaborator, on an enabled account. The token rows are revoked
	 * in the same statement, so no request sees the sandbox ended with its token alive.
	 * The account's previews go where it may no longer make them: the write role, and the
	 * sandbox its own or the role admin (previews.c's PREVIEW_SERVES, which the check asks
	 * on every request whatever took the access away; deleted here, the access given back
	 * revives no old URL, decision 0079). */
	res = db_exec(db, e, &code,
		      "WITH lost AS ("
		      "  UPDATE sandboxes s SET state = 'stopped', end_reason = $3, ended_at = now()"
		      "    FROM accounts a, repositories r"
		      "   WHERE s.account_id = $1::bigint"
		      "     AND ($2::bigint IS NULL OR s.repository_id = $2::bigint)"
		      "     AND s.state IN ('starting', 'ready')"
		      "     AND a.id = s.account_id AND r.id = s.repository_id"
		      "     AND (a.disabled OR NOT (a.site_admin OR r.owner_id = a.id OR EXISTS ("
		      "          SELECT 1 FROM collaborators c WHERE c.repository_id = r.id"
		      "             AND c.account_id = a.id AND c.role IN ('write', 'admin'))))"
		      "  RETURNING s.id),"
		      " revoked AS ("
		      "  UPDATE tokens t SET revoked_at = coalesce(t.revoked_at, now())"
		      "    FROM lost WHERE t.sandbox_id = lost.id RETURNING t.id),"
		      " unmade AS ("
		      "  DELETE FROM previews p USING sandboxes s, accounts a, repositories r"
		      "   WHERE p.account_id = $1::bigint AND s.id = p.sandbox_id"
		      "     AND ($2::bigint IS NULL OR s.repository_id = $2::bigint)"
		      "     AND a.id = p.account_id AND r.id = s.repository_id"
		      "     AND (a.disabled OR NOT (a.site_admin OR r.owner_id = a.id OR EXISTS ("
		      "          SELECT 1 FROM collaborators c WHERE c.repository_id = r.id"
		      "             AND c.account_id = a.id AND (c.role = 'admin'"
		      "              OR (c.role = 'write' AND s.account_id = a.id)))))"
		      "  RETURNING p.id)"
		      " SELECT l.id, n.count FROM (SELECT count(*) FROM unmade) n"
		      "   LEFT JOIN lost l ON true ORDER BY l.id",
		      3, account_id, repo_id, AUTH_LOST_ACCESS);
	if (!res)
		return code;
	previews = (int)strtol(db_val(res, 0, 1), NULL, 10);
	if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0) && details) {
		if (!(ids = json_object_new_array())) {
			PQclear(res);
			return err_set(e, ERR_NOMEM, "out of memory");
		}
		for (int i = 0; i < PQntuples(res); i++)
			json_object_array_add(ids, json_object_new_string(db_val(res, i, 0)));
		json_object_object_add(details, "sandboxes_ended", ids);
	}
	PQclear(res);
	if (previews > 0 && details)
		json_object_object_add(details, "previews_deleted", json_object_new_int(previews));
	return 0;
}

int auth_token_create(struct db *db, enum token_kind kind, const char *account_id,
		      const char *repo_id, int write, long expires_in, const char *note,
		      char out[TOKEN_LEN + 1], char id[DB_ID_MAX], char expires_at[32],
		      struct err *e)
{
	char hash[TOKEN_HASH_LEN + 1], secs[24];
	PGresult *res;
	int code = 0;

	if (token_mint(kind, out))
		return err_set(e, ERR_FAIL, "the random number generator failed");
	token_hash(out, TOKEN_LEN, hash);
	snprintf(secs, sizeof(secs), "%ld", expires_in);
	res = db_exec(db, e, &code,
		      "INSERT INTO tokens (account_id, kind, scope, repository_id, hash, note,"
		      "                    expires_at)"
		      " VALUES ($1, $2, $3, $4, $5, $6,"
		      "         CASE WHEN $7::bigint > 0"
		      "              THEN now() + make_interval(secs => $7::bigint) END)"
		      " RETURNING id, coalesce(rfc3339(expires_at), '')",
		      7, account_id, token_kind_name(kind), write ? "write" : "read", repo_id, hash,
		      note, secs);
	if (!res) {
		OPENSSL_cleanse(out, TOKEN_LEN + 1);
		return code;
	}
	int cut = copy(id, DB_ID_MAX, db_val(res, 0, 0)) | copy(expires_at, 32, db_val(res, 0, 1));
	PQclear(res);
	if (cut) {
		OPENSSL_cleanse(out, TOKEN_LEN + 1);
		return err_set(e, ERR_FAIL, "a new token's row does not fit its fields");
	}
	return 0;
}

int auth_site_admin_read(const struct caller *c, struct err *e)
{
	if (!c->authenticated)
		return err_set(e, ERR_AUTH, "authentication required");
	if (c->kind == TOKEN_JOB)
		return err_set(e, ERR_DENIED, "job tokens can only be used on their repository");
	if (!c->site_admin)
		return err_set(e, ERR_DENIED, "this needs a site admin");
	return 0;
}
