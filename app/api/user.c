/* api_user.c: the caller's own account and repositories. */
#include <string.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/common/banned.h"

int api_user_get(struct req *r, struct err *e)
{
	/* The row was read with the token, in this request: no second query. */
	http_json(r, 200, account_json(&r->caller.account));
	return 0;
}

static void undo_create(void *path)
{
	log_warn("removing %s: its repository row did not commit", (char *)path);
	repo_remove_dir(path);
}

static const char *const visibilities[] = { "public", "private", NULL };

int api_user_repos_create(struct req *r, struct err *e)
{
	const char *name, *visibility = "private", *branch = "main";
	struct repo repo;
	char *path = NULL, *ppath;
	int rc;

	if ((rc = auth_user_write(&r->caller, e)))
		return rc;
	if ((rc = json_field_string(r->json, "name", 1, 100, &name, e)) < 0 ||
	    (rc = repo_valid_name(name, "name", e)) < 0 ||
	    (rc = json_field_enum(r->json, "visibility", 0, visibilities, &visibility, e)) < 0 ||
	    (rc = json_field_string(r->json, "default_branch", 0, 255, &branch, e)) < 0 ||
	    (rc = repo_valid_branch(branch, "default_branch", e)) < 0)
		return rc;
	r->audit_repo = pool_printf(r->pool, "%s/%s", r->caller.login, name);
	rc = repo_create(r->db, r->cfg->repos_dir, r->caller.account_id, r->caller.login, name,
			 visibility, branch, &repo, &path, e);
	if (rc)
		return rc;
	/* The directory now exists: if the transaction does not commit, it must go too. */
	ppath = pool_strdup(r->pool, path);
	if (!ppath || http_on_abort(r, undo_create, ppath)) {
		repo_remove_dir(path);
		free(path);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	free(path);
	http_json(r, 201, repo_json(&repo, r->cfg->public_url));
	return 0;
}
