/* api_repos.c: one repository: read it, change it, and its collaborators. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>
#include "sandboxd/account.h"
#include "sandboxd/api.h"
#include "sandboxd/auth.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/repo.h"
#include "sandboxd/banned.h"

int api_repo_get(struct req *r)
{
	struct repo repo;
	int rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_READ, 0, &repo);

	if (rc)
		return rc > 0 ? 0 : rc;
	http_json(r, 200, repo_json(&repo, r->cfg->public_url));
	return 0;
}

struct head_undo {
	const struct config *cfg;
	struct repo repo;
	char branch[256];
};

static void undo_head(void *arg)
{
	struct head_undo *u = arg;
	struct err e;

	if (repo_set_head(u->cfg->repos_dir, &u->repo, u->branch, &e))
		log_error("could not restore HEAD: %s", e.msg);
}

/* Whether refs/heads/<branch> exists (*exists), and whether the repository has no branch
 * at all yet (*empty: its first push creates the default branch, whatever its name). */
static int branch_state(const char *repos_dir, const struct repo *repo, const char *branch,
			int *exists, int *empty, struct err *e)
{
	git_repository *g = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	char *path = NULL, *name = NULL;
	int rc = 0, grc;

	*exists = *empty = 0;
	if (asprintf(&path, "%s/%s/%s.git", repos_dir, repo->owner, repo->name) < 0 ||
	    asprintf(&name, "refs/heads/%s", branch) < 0) {
		path = name = NULL;
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (git_repository_open_bare(&g, path) < 0) {
		rc = err_set(e, ERR_FAIL, "cannot open %s: %s", path,
			     git_error_last() ? git_error_last()->message : "unknown");
		goto out;
	}
	if ((grc = git_reference_lookup(&ref, g, name)) == 0)
		*exists = 1;
	else if (grc != GIT_ENOTFOUND && grc != GIT_EINVALIDSPEC)
		rc = err_set(e, ERR_FAIL, "cannot read %s in %s", name, path);
	if (rc || *exists)
		goto out;
	git_reference_free(ref);
	ref = NULL;
	if (git_reference_iterator_glob_new(&it, g, "refs/heads/*") < 0) {
		rc = err_set(e, ERR_FAIL, "cannot list the branches of %s", path);
		goto out;
	}
	grc = git_reference_next(&ref, it);
	if (grc == GIT_ITEROVER)
		*empty = 1;
	else if (grc < 0)
		rc = err_set(e, ERR_FAIL, "cannot list the branches of %s", path);
out:
	git_reference_free(ref);
	git_reference_iterator_free(it);
	git_repository_free(g);
	free(name);
	free(path);
	return rc;
}

static const char *const visibilities[] = { "public", "private", NULL };

int api_repo_update(struct req *r)
{
	const char *branch = NULL, *visibility = NULL;
	int archived = -1, rc;
	struct repo repo;
	struct err e;
	PGresult *res;
	int code = 0;

	/* Validate the body before looking anything up: a bad body is a 400 for anyone. */
	if ((rc = json_field_bool(r->json, "archived", 0, &archived, &e)) < 0 ||
	    (rc = json_field_enum(r->json, "visibility", 0, visibilities, &visibility, &e)) < 0 ||
	    (rc = json_field_string(r->json, "default_branch", 0, 255, &branch, &e)) < 0 ||
	    (branch && (rc = repo_valid_branch(branch, "default_branch", &e)) < 0))
		return http_fail(r, rc, &e);
	/* An archived repository takes one change: being un-archived. */
	rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_ADMIN, archived != 0,
		       &repo);
	if (rc)
		return rc > 0 ? 0 : rc;
	if (branch && strcmp(branch, repo.default_branch) == 0)
		branch = NULL; /* no change */
	/* Agents may not update the default branch (SPEC §5 item 3): moving it elsewhere,
	 * force-pushing the old one and moving it back would go around that. */
	if (branch && r->caller.agent) {
		http_error(r, 403, "agents may not change the default branch");
		return 0;
	}
	if (branch) {
		int exists, empty;
		if ((rc = branch_state(r->cfg->repos_dir, &repo, branch, &exists, &empty, &e)))
			return http_fail(r, rc, &e);
		if (!exists && !empty) {
			http_error(r, 422, "field 'default_branch' must name an existing branch");
			return 0;
		}
	}
	/* What is applied, not the body: the body may hold any field, of any size. */
	json_object *changes = json_object_new_object();
	if (!changes)
		return ERR_NOMEM;
	json_object_object_add(r->audit_details, "changes", changes);
	if (archived >= 0)
		json_add_bool(changes, "archived", archived);
	if (visibility)
		json_add_str(changes, "visibility", visibility);
	if (branch) {
		json_add_str(changes, "default_branch", branch);
		struct head_undo *u = pool_alloc(r->pool, sizeof(*u));
		if (!u || http_on_abort(r, undo_head, u))
			return ERR_NOMEM;
		u->cfg = r->cfg;
		u->repo = repo;
		snprintf(u->branch, sizeof(u->branch), "%s", repo.default_branch);
		if ((rc = repo_set_head(r->cfg->repos_dir, &repo, branch, &e)))
			return http_fail(r, rc, &e);
	}
	res = db_exec(r->db, &e, &code,
		      "UPDATE repositories SET archived = coalesce($2::boolean, archived),"
		      "       visibility = coalesce($3, visibility),"
		      "       default_branch = coalesce($4, default_branch)"
		      " WHERE id = $1 RETURNING archived, visibility, default_branch",
		      4, repo.id, archived < 0 ? NULL : archived ? "true" : "false", visibility,
		      branch);
	if (!res)
		return http_fail(r, code, &e);
	repo.archived = db_bool(res, 0, 0);
	snprintf(repo.visibility, sizeof(repo.visibility), "%s", db_val(res, 0, 1));
	snprintf(repo.default_branch, sizeof(repo.default_branch), "%s", db_val(res, 0, 2));
	PQclear(res);
	http_json(r, 200, repo_json(&repo, r->cfg->public_url));
	return 0;
}

/* The repository (admin, not archived) and the account named in the path. */
static int collaborator_target(struct req *r, struct repo *repo, struct account *a)
{
	struct err e;
	int rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_ADMIN, 1, repo);

	if (rc)
		return rc;
	if ((rc = account_load(r->db, http_path_param(r, 2), a, &e)))
		return http_fail(r, rc, &e) + 1;
	json_add_str(r->audit_details, "collaborator", a->login);
	return 0;
}

static const char *const roles[] = { "read", "write", "admin", NULL };

int api_collaborator_set(struct req *r)
{
	struct repo repo;
	struct account a;
	struct err e;
	const char *role;
	int rc;

	if ((rc = json_field_enum(r->json, "role", 1, roles, &role, &e)) < 0)
		return http_fail(r, rc, &e);
	if ((rc = collaborator_target(r, &repo, &a)))
		return rc > 0 ? 0 : rc;
	json_add_str(r->audit_details, "role", role);
	rc = db_run(r->db, &e,
		    "INSERT INTO collaborators (repository_id, account_id, role) VALUES ($1, $2, $3)"
		    " ON CONFLICT (repository_id, account_id) DO UPDATE SET role = excluded.role",
		    3, repo.id, a.id, role);
	/* A demotion below write ends the sandboxes the role made (SPEC §2, §4 Use). */
	if (!rc)
		rc = auth_sandboxes_lost(r->db, a.id, repo.id, r->audit_details, &e);
	if (rc)
		return http_fail(r, rc, &e);
	http_empty(r, 204);
	return 0;
}

int api_collaborator_remove(struct req *r)
{
	struct repo repo;
	struct account a;
	struct err e;
	int rc;

	if ((rc = collaborator_target(r, &repo, &a)))
		return rc > 0 ? 0 : rc;
	rc = db_run(r->db, &e,
		    "DELETE FROM collaborators WHERE repository_id = $1 AND account_id = $2", 2,
		    repo.id, a.id);
	/* Their sandboxes here end, their tokens revoked for good: adding them back must not
	 * revive a credential that stopped for lost access (SPEC §2). */
	if (!rc)
		rc = auth_sandboxes_lost(r->db, a.id, repo.id, r->audit_details, &e);
	if (rc)
		return http_fail(r, rc, &e);
	http_empty(r, 204);
	return 0;
}
