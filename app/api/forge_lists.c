/* api_forge_lists.c: the forge's everyday lists, paginated as GitHub's are (per_page,
 * page, Link): an account's repositories, a repository's collaborators, the caller's
 * tokens (never a secret), keys and sandboxes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/forge/account.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/proto/forge_page.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/lib/query.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/common/banned.h"

/* One row of a page, from its columns (the first is the page's column 1) into a new
 * object; NULL when the row does not fit its fields. */
typedef json_object *(*row_fn)(const struct req *r, const PGresult *res, int row);

/* One page of what inner selects (its parameters from $3), ordered by order: every row
 * has the total in column 0 and inner's columns from 1; a page past the end is one row of
 * NULLs after the total (LEFT JOIN LATERAL), so the total is known there too. A literal:
 * db.c keys its prepared statements by the address of their text. */
#define PAGE_SQL(inner, order) \
	"WITH l AS (" inner ") SELECT (SELECT count(*) FROM l), p.* FROM (SELECT 1) one" \
	" LEFT JOIN LATERAL (SELECT * FROM l ORDER BY " order " LIMIT $1 OFFSET $2) p ON true"

/* The page that the query asks for of sql (PAGE_SQL, with one parameter a as $3, and a
 * filter b as $4 unless NULL): a JSON array of row()'s objects, with GitHub's Link header,
 * whose links keep the filter's query pairs (keep, NULL for none). */
static int page_filtered(struct req *r, const char *sql, const char *a, const char *b,
			 const char *keep, row_fn row, struct err *e)
{
	struct forge_page p;
	char lim[24], off[24], link[1024];
	const char *base;
	json_object *list, *o;
	PGresult *res;
	int code = 0, rc = 0;

	forge_page_parse(r->query, &p);
	snprintf(lim, sizeof(lim), "%lld", (long long)p.per_page);
	snprintf(off, sizeof(off), "%lld", (long long)forge_page_offset(&p));
	base = pool_printf(r->pool, "%s%s", r->cfg->public_url, r->path);
	if (!base || !(list = json_object_new_array()))
		return err_set(e, ERR_NOMEM, "out of memory");
	if (!(res = db_exec(r->db, e, &code, sql, b ? 4 : 3, lim, off, a, b))) {
		json_object_put(list);
		return code;
	}
	for (int i = 0; i < PQntuples(res) && !rc && !PQgetisnull(res, i, 1); i++) {
		if ((o = row(r, res, i)))
			json_object_array_add(list, o);
		else
			rc = err_set(e, ERR_FAIL, "a row of %s does not fit its fields", r->path);
	}
	if (!rc && (rc = forge_page_link_keep(&p, strtoll(db_val(res, 0, 0), NULL, 10), base,
					      keep, link, sizeof(link))))
		rc = err_set(e, ERR_FAIL, "the Link header of %s does not fit", r->path);
	PQclear(res);
	if (rc) {
		json_object_put(list);
		return rc;
	}
	if (link[0])
		http_header(r, "Link", link);
	http_json(r, 200, list);
	return 0;
}

static int page_answer(struct req *r, const char *sql, const char *a, row_fn row,
		       struct err *e)
{
	return page_filtered(r, sql, a, NULL, NULL, row, e);
}

/* Lists that show an account's own things: job tokens serve one repository only. */
static int need_personal(const struct req *r, struct err *e)
{
	if (r->caller.kind == TOKEN_JOB)
		return err_set(e, ERR_DENIED, "job tokens can only be used on their repository");
	return 0;
}

/* Repositories: id, owner_id, login, name, visibility, default_branch, archived, created,
 * the two sort keys, sandbox_image. */
#define REPO_LIST "SELECT rp.id, rp.owner_id, o.login, rp.name, rp.visibility, rp.default_branch," \
	" rp.archived, rfc3339(rp.created_at) AS created, lower(o.login) AS ko, lower(rp.name) AS kn," \
	" coalesce(rp.sandbox_image, '') AS sandbox_image" \
	" FROM repositories rp JOIN accounts o ON o.id = rp.owner_id"

static json_object *repo_row(const struct req *r, const PGresult *res, int i)
{
	struct repo repo = { .role = ROLE_NONE };

	if (str_copy(repo.id, sizeof(repo.id), db_val(res, i, 1)) |
	    str_copy(repo.owner_id, sizeof(repo.owner_id), db_val(res, i, 2)) |
	    str_copy(repo.owner, sizeof(repo.owner), db_val(res, i, 3)) |
	    str_copy(repo.name, sizeof(repo.name), db_val(res, i, 4)) |
	    str_copy(repo.visibility, sizeof(repo.visibility), db_val(res, i, 5)) |
	    str_copy(repo.default_branch, sizeof(repo.default_branch), db_val(res, i, 6)) |
	    str_copy(repo.created_at, sizeof(repo.created_at), db_val(res, i, 8)) |
	    str_copy(repo.sandbox_image, sizeof(repo.sandbox_image), db_val(res, i, 11)))
		return NULL;
	repo.archived = db_bool(res, i, 7);
	return repo_json(&repo, r->cfg->public_url);
}

int api_user_repos_list(struct req *r, struct err *e)
{
	int rc = need_personal(r, e);

	/* What the caller owns or collaborates on (GitHub's affiliation owner,collaborator). */
	return rc ? rc : page_answer(r, PAGE_SQL(REPO_LIST
		" WHERE rp.owner_id = $3::bigint OR EXISTS (SELECT 1 FROM collaborators c"
		"  WHERE c.repository_id = rp.id AND c.account_id = $3::bigint)", "ko, kn"),
		r->caller.account_id, repo_row, e);
}

int api_users_repos_list(struct req *r, struct err *e)
{
	struct account a;
	int rc;

	if ((rc = need_personal(r, e)) ||
	    (rc = account_load(r->db, http_path_param(r, 0), &a, e)))
		return rc;
	/* As GitHub's: the account's public repositories, whoever asks. */
	return page_answer(r, PAGE_SQL(REPO_LIST " WHERE rp.owner_id = $3::bigint"
				       " AND rp.visibility = 'public'", "kn"), a.id, repo_row, e);
}

/* An account (ACCOUNT_COLUMNS from column 1) with its role: GitHub's role_name and
 * permissions {pull, push, admin}. */
static json_object *collaborator_row(const struct req *r, const PGresult *res, int i)
{
	struct account a;
	enum role role = role_parse(db_val(res, i, 9));
	json_object *o, *perm;

	account_from_row(res, i, 1, &a);
	if (!(o = account_json(&a)) || !(perm = json_object_new_object())) {
		json_object_put(o);
		return NULL;
	}
	json_add_str(o, "role_name", role_name(role));
	json_add_bool(perm, "pull", role >= ROLE_READ);
	json_add_bool(perm, "push", role >= ROLE_WRITE);
	json_add_bool(perm, "admin", role >= ROLE_ADMIN);
	json_object_object_add(o, "permissions", perm);
	return o;
}

int api_collaborators_list(struct req *r, struct err *e)
{
	struct repo repo;
	int rc;

	/* GitHub asks for push access; readers see the repository, not who works on it. */
	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_WRITE, 0, &repo,
			    e)))
		return rc;
	/* The owner first (always admin), then the collaborators, by login. */
	return page_answer(r, PAGE_SQL(
		"SELECT " ACCOUNT_COLUMNS_A ", 'admin' AS role, 0 AS k0, lower(a.login) AS k"
		"  FROM repositories rp JOIN accounts a ON a.id = rp.owner_id WHERE rp.id = $3::bigint"
		" UNION ALL SELECT " ACCOUNT_COLUMNS_A ", c.role, 1, lower(a.login)"
		"  FROM collaborators c JOIN accounts a ON a.id = c.account_id"
		" WHERE c.repository_id = $3::bigint", "k0, k"),
		repo.id, collaborator_row, e);
}

/* {id, kind, scope, note, repository, created_at, expires_at, last_used_at}. */
static json_object *token_row(const struct req *r, const PGresult *res, int i)
{
	static const char *const keys[] = { "id", "kind", "scope", "note", "repository",
					    "created_at", "expires_at", "last_used_at" };
	json_object *o = json_object_new_object();

	for (size_t k = 0; o && k < sizeof(keys) / sizeof(keys[0]); k++)
		json_add_str(o, keys[k], db_val(res, i, 1 + (int)k));
	return o;
}

int api_user_tokens_list(struct req *r, struct err *e)
{
	int rc = need_personal(r, e);

	/* The caller's live personal and job tokens, newest first; only the hash is stored,
	 * and it is not shown either. */
	return rc ? rc : page_answer(r, PAGE_SQL(
		"SELECT t.id::text, t.kind, t.scope, t.note,"
		"       (SELECT o.login || '/' || rp.name FROM repositories rp"
		"          JOIN accounts o ON o.id = rp.owner_id WHERE rp.id = t.repository_id),"
		"       rfc3339(t.created_at) AS created, rfc3339(t.expires_at) AS expires,"
		"       rfc3339(t.last_used_at) AS used, t.id AS k"
		"  FROM tokens t WHERE t.account_id = $3::bigint AND t.kind IN ('personal', 'job')"
		"   AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())",
		"k DESC"), r->caller.account_id, token_row, e);
}

/* {kid, public_key, created_at}. */
static json_object *key_row(const struct req *r, const PGresult *res, int i)
{
	json_object *o = json_object_new_object();

	json_add_str(o, "kid", db_val(res, i, 1));
	json_add_str(o, "public_key", db_val(res, i, 2));
	json_add_str(o, "created_at", db_val(res, i, 3));
	return o;
}

int api_user_keys_list(struct req *r, struct err *e)
{
	int rc = need_personal(r, e);

	return rc ? rc : page_answer(r, PAGE_SQL(
		"SELECT kid, public_pem, rfc3339(created_at) AS created, created_at AS k"
		"  FROM account_keys WHERE account_id = $3::bigint AND revoked_at IS NULL",
		"k, kid"), r->caller.account_id, key_row, e);
}

/* A sandbox of the caller (id, repository_id, "owner/name" from column 1): the scoped
 * GET's object (sandbox_json), plus its repository. NULL when it went meanwhile. */
static json_object *sandbox_row(const struct req *r, const PGresult *res, int i)
{
	struct err e = { .msg = "" };
	struct sandbox s;
	json_object *o;

	if (sandbox_load(r->db, db_val(res, i, 2), db_val(res, i, 1), &s, &e) ||
	    !(o = sandbox_json(&s)))
		return NULL;
	json_add_str(o, "repository", db_val(res, i, 3));
	return o;
}

/* The states a sandbox row may hold (sql/004_sandboxes.sql's CHECK). */
static const char *const sandbox_states[] = { "starting", "ready", "closed", "stopped",
					      "failed", NULL };

/* GET /api/v3/user/sandboxes?state=: the caller's own sandboxes on every repository,
 * newest first (the id breaks ties, so that pages do not overlap); state, when given, one
 * of the five (422 otherwise). */
int api_user_sandboxes_list(struct req *r, struct err *e)
{
	char state[16];
	int found = query_param(r->query, "state", state, sizeof(state)), known = 0;

	for (size_t k = 0; found > 0 && sandbox_states[k]; k++)
		known |= strcmp(state, sandbox_states[k]) == 0;
	if (found < 0 || (found > 0 && state[0] && !known))
		return err_http(e, 422, "query 'state' must be one of starting, ready, closed, "
			       "stopped, failed");
	return page_filtered(r, PAGE_SQL(
		"SELECT s.id, s.repository_id, o.login || '/' || rp.name, s.created_at AS k,"
		"       s.id AS kid"
		"  FROM sandboxes s JOIN repositories rp ON rp.id = s.repository_id"
		"  JOIN accounts o ON o.id = rp.owner_id"
		" WHERE s.account_id = $3::bigint AND ($4::text = '' OR s.state = $4::text)",
		"k DESC, kid DESC"), r->caller.account_id, state,
		state[0] ? pool_printf(r->pool, "state=%s", state) : NULL, sandbox_row, e);
}
