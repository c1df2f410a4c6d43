/* api_repos.c: one repository: read it, change it, and its collaborators. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/forge/account.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/common/banned.h"

int api_repo_get(struct req *r, struct err *e)
{
	struct repo repo;
	int rc;

	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_READ, 0, &repo,
			    e)))
		return rc;
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

/* What PATCH asks for; -1 and NULL for what it leaves alone. */
struct repo_change {
	int archived;
	const char *visibility, *branch, *name;
	/* sandbox_image: the new name, "" for null (back to the default); image NULL: as is. */
	const char *image;
};

/* The body's sandbox_image: a name SANDBOXD_IMAGES holds (422 "unknown image" else, once
 * the caller may see the repository), or null for the default. */
static int body_image(struct req *r, struct repo_change *c, struct err *e)
{
	json_object *v;
	int rc;

	if (!json_object_object_get_ex(r->json, "sandbox_image", &v))
		return 0;
	if (json_object_is_type(v, json_type_null)) {
		c->image = "";
		return 0;
	}
	rc = json_field_string(r->json, "sandbox_image", 0, 64, &c->image, e);
	return rc < 0 ? rc : 0;
}

/* The rename last (HEAD and the row's other fields are changed under the old path): the
 * row, the directory and the old name's redirect (repo_rename), the move undone if the
 * request does not commit. */
static int rename_to(struct req *r, struct repo *repo, const char *name, struct err *e)
{
	char *from, *to;
	int rc;

	json_add_str(r->audit_details, "renamed_from", repo->name);
	if ((rc = repo_rename(r->db, r->cfg->repos_dir, repo, name, &from, &to, e)) ||
	    (rc = api_forge_undo_move(r, from, to, e)))
		return rc;
	r->audit_repo = pool_printf(r->pool, "%s/%s", repo->owner, repo->name);
	return 0;
}

/* Whether the caller may make branch the default: agents may not (SPEC §5 item 3: moving
 * it elsewhere, force-pushing the old one and moving it back would go around that), and it
 * must exist (unless there is no branch yet). */
static int branch_allowed(struct req *r, const struct repo *repo, const char *branch,
			  struct err *e)
{
	int exists, empty, rc;

	if (r->caller.agent)
		return err_set(e, ERR_DENIED, "agents may not change the default branch");
	if ((rc = branch_state(r->cfg->repos_dir, repo, branch, &exists, &empty, e)))
		return rc;
	if (!exists && !empty)
		return err_http(e, 422, "field 'default_branch' must name an existing branch");
	return 0;
}

/* HEAD moved, with an undo for a request that fails later. */
static int move_head(struct req *r, const struct repo *repo, const char *branch,
		     struct err *e)
{
	struct head_undo *u = pool_alloc(r->pool, sizeof(*u));
	if (!u || http_on_abort(r, undo_head, u))
		return err_set(e, ERR_NOMEM, "out of memory");
	u->cfg = r->cfg;
	u->repo = *repo;
	snprintf(u->branch, sizeof(u->branch), "%s", repo->default_branch);
	return repo_set_head(r->cfg->repos_dir, repo, branch, e);
}

/* The row changed as asked; repo then holds what it says. */
static int apply_change(struct req *r, struct repo *repo, const struct repo_change *c,
			struct err *e)
{
	int code = 0, cut;
	PGresult *res = db_exec(r->db, e, &code,
		      "UPDATE repositories SET archived = coalesce($2::boolean, archived),"
		      "       visibility = coalesce($3, visibility),"
		      "       default_branch = coalesce($4, default_branch),"
		      "       sandbox_image = CASE WHEN $5::text IS NULL THEN sandbox_image"
		      "                            ELSE nullif($5, '') END"
		      " WHERE id = $1 RETURNING archived, visibility, default_branch,"
		      "           coalesce(sandbox_image, '')",
		      5, repo->id, c->archived < 0 ? NULL : c->archived ? "true" : "false",
		      c->visibility, c->branch, c->image);

	if (!res)
		return code;
	repo->archived = db_bool(res, 0, 0);
	cut = str_copy(repo->visibility, sizeof(repo->visibility), db_val(res, 0, 1)) |
	      str_copy(repo->default_branch, sizeof(repo->default_branch), db_val(res, 0, 2)) |
	      str_copy(repo->sandbox_image, sizeof(repo->sandbox_image), db_val(res, 0, 3));
	PQclear(res);
	return cut ? err_set(e, ERR_FAIL, "repository %s does not fit its fields", repo->id) : 0;
}

int api_repo_update(struct req *r, struct err *e)
{
	struct repo_change c = { .archived = -1 };
	struct repo repo;
	int rc;

	/* Validate the body before looking anything up: a bad body is a 400 for anyone. */
	if ((rc = json_field_bool(r->json, "archived", 0, &c.archived, e)) < 0 ||
	    (rc = json_field_enum(r->json, "visibility", 0, visibilities, &c.visibility, e)) < 0 ||
	    (rc = json_field_string(r->json, "default_branch", 0, 255, &c.branch, e)) < 0 ||
	    (c.branch && (rc = repo_valid_branch(c.branch, "default_branch", e)) < 0) ||
	    (rc = json_field_string(r->json, "name", 0, 100, &c.name, e)) < 0 ||
	    (c.name && (rc = repo_valid_name(c.name, "name", e)) < 0) ||
	    (rc = body_image(r, &c, e)) < 0)
		return rc;
	/* An archived repository takes one change: being un-archived. */
	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_ADMIN,
			    c.archived != 0, &repo, e)))
		return rc;
	if (c.branch && strcmp(c.branch, repo.default_branch) == 0)
		c.branch = NULL; /* no change */
	if (c.branch && (rc = branch_allowed(r, &repo, c.branch, e)))
		return rc;
	if (c.name && strcmp(c.name, repo.name) == 0)
		c.name = NULL; /* no change */
	if (c.image && c.image[0] && !config_image_find(r->cfg, c.image))
		return err_http(e, 422, "unknown image");
	/* What is applied, not the body: the body may hold any field, of any size. */
	json_object *changes = json_object_new_object();
	if (!changes)
		return err_set(e, ERR_NOMEM, "out of memory");
	json_object_object_add(r->audit_details, "changes", changes);
	if (c.archived >= 0)
		json_add_bool(changes, "archived", c.archived);
	if (c.visibility)
		json_add_str(changes, "visibility", c.visibility);
	if (c.branch)
		json_add_str(changes, "default_branch", c.branch);
	if (c.name)
		json_add_str(changes, "name", c.name);
	if (c.image)
		json_add_str(changes, "sandbox_image", c.image[0] ? c.image : NULL);
	if ((c.branch && (rc = move_head(r, &repo, c.branch, e))) ||
	    (rc = apply_change(r, &repo, &c, e)) ||
	    (c.name && (rc = rename_to(r, &repo, c.name, e))))
		return rc;
	http_json(r, 200, repo_json(&repo, r->cfg->public_url));
	return 0;
}

/* The repository (admin, not archived) and the account named in the path. */
static int collaborator_target(struct req *r, struct repo *repo, struct account *a,
			       struct err *e)
{
	int rc;

	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_ADMIN, 1, repo,
			    e)) ||
	    (rc = account_load(r->db, http_path_param(r, 2), a, e)))
		return rc;
	json_add_str(r->audit_details, "collaborator", a->login);
	return 0;
}

/* After rc, the change of a's role on repo: a demotion below write or a removal ends the
 * sandboxes the role made, their tokens revoked for good, so that giving the role back
 * revives no credential that stopped for lost access (SPEC §2, §4 Use). 204. */
static int role_changed(struct req *r, int rc, const struct repo *repo,
			const struct account *a, struct err *e)
{
	if (!rc)
		rc = auth_sandboxes_lost(r->db, a->id, repo->id, r->audit_details, e);
	if (rc)
		return rc;
	http_empty(r, 204);
	return 0;
}

static const char *const roles[] = { "read", "write", "admin", NULL };

int api_collaborator_set(struct req *r, struct err *e)
{
	struct repo repo;
	struct account a;
	const char *role;
	int rc;

	if ((rc = json_field_enum(r->json, "role", 1, roles, &role, e)) < 0 ||
	    (rc = collaborator_target(r, &repo, &a, e)))
		return rc;
	json_add_str(r->audit_details, "role", role);
	rc = db_run(r->db, e,
		    "INSERT INTO collaborators (repository_id, account_id, role) VALUES ($1, $2, $3)"
		    " ON CONFLICT (repository_id, account_id) DO UPDATE SET role = excluded.role",
		    3, repo.id, a.id, role);
	return role_changed(r, rc, &repo, &a, e);
}

int api_collaborator_remove(struct req *r, struct err *e)
{
	struct repo repo;
	struct account a;
	int rc;

	if ((rc = collaborator_target(r, &repo, &a, e)))
		return rc;
	rc = db_run(r->db, e,
		    "DELETE FROM collaborators WHERE repository_id = $1 AND account_id = $2", 2,
		    repo.id, a.id);
	return role_changed(r, rc, &repo, &a, e);
}
