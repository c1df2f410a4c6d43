/* routes.c: the REST route table. Order matters only between patterns that could match the
 * same path; none here do. Every route under …/diffinery/sandboxes carries ROUTE_SANDBOX
 * (test_router checks it), as do /api/v3/user/sandboxes and /api/v3/sandboxes/{id}, so that
 * no call on a sandbox skips its scope check. */
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/preview.h"
#include "sandboxd/common/banned.h"

#define REPO "/api/v3/repos/{owner}/{repo}"
#define SB API_SANDBOXES

/* /{owner}/{name}.git/…, as git's smart HTTP names a repository (githttp_match). */
static int git_path(const char *path, struct route_match *m)
{
	struct git_route g;

	if (!githttp_match(path, "", &g))
		return 0;
	if (m) {
		memcpy(m->params[0], g.owner, sizeof(m->params[0]));
		memcpy(m->params[1], g.name, sizeof(m->params[1]));
		m->nparams = 2;
	}
	return 1;
}

const struct route api_routes[] = {
	{ "GET", "/healthz", api_health, "health.get", ROUTE_PUBLIC, NULL },
	{ "GET", "/api/v3/openapi.json", api_openapi, "openapi.get", ROUTE_PUBLIC, NULL },
	/* Public so that SANDBOXD_METRICS_ALLOW needs no token; the handler checks the rest. */
	{ "GET", "/metrics", api_metrics, "metrics.get", ROUTE_PUBLIC, NULL },
	/* Public so that its 401 can ask a browser for Basic; the handler checks the rest. */
	{ "GET", "/admin", api_admin_page, "admin_page.get", ROUTE_PUBLIC, NULL },
	{ "GET", "/api/v3/user", api_user_get, "user.get", 0, NULL },
	{ "POST", "/mcp", api_mcp, "mcp", 0, NULL },
	{ "GET", "/api/v3/sandbox-images", api_sandbox_images, "sandbox_image.list", 0, NULL },
	{ "POST", "/api/v3/user/repos", api_user_repos_create, "repo.create", ROUTE_JSON, NULL },
	/* The forge's everyday routes (SPEC §4): lists paginated as GitHub's, deletions. */
	{ "GET", "/api/v3/user/repos", api_user_repos_list, "repo.list", 0, NULL },
	{ "GET", "/api/v3/users/{login}/repos", api_users_repos_list, "repo.list_user",
	  ROUTE_PUBLIC, NULL },
	{ "GET", "/api/v3/user/tokens", api_user_tokens_list, "token.list", 0, NULL },
	{ "GET", "/api/v3/user/keys", api_user_keys_list, "key.list", 0, NULL },
	{ "DELETE", "/api/v3/user/keys/{kid}", api_user_keys_delete, "key.delete", 0, NULL },
	{ "GET", REPO "/collaborators", api_collaborators_list, "collaborator.list", 0, NULL },
	{ "POST", "/api/v3/user/tokens", api_user_tokens_create, "token.create", ROUTE_JSON, NULL },
	{ "DELETE", "/api/v3/user/tokens/{id}", api_user_tokens_revoke, "token.revoke", 0, NULL },
	{ "GET", REPO, api_repo_get, "repo.get", ROUTE_PUBLIC, NULL },
	{ "PATCH", REPO, api_repo_update, "repo.update", ROUTE_JSON, NULL },
	{ "DELETE", REPO, api_repo_delete, "repo.delete", 0, NULL },
	{ "PUT", REPO "/collaborators/{login}", api_collaborator_set, "collaborator.set",
	  ROUTE_JSON, NULL },
	{ "DELETE", REPO "/collaborators/{login}", api_collaborator_remove, "collaborator.remove",
	  0, NULL },
	/* Reviewing agent work: {ref+} and {range+} span '/' (ref names hold them). */
	{ "GET", REPO "/branches", api_review_branches, "review.branches", 0, NULL },
	{ "GET", REPO "/commits/{ref+}", api_review_commit, "review.commit", 0, NULL },
	{ "GET", REPO "/compare/{range+}", api_review_compare, "review.compare", 0, NULL },
	{ "DELETE", REPO "/git/refs/{ref+}", api_review_ref_delete, "ref.delete", 0, NULL },
	{ "POST", REPO "/merges", api_review_merge, "merge", ROUTE_JSON, NULL },
	{ "POST", REPO "/git-urls", api_git_urls_create, "git_url.create", ROUTE_JSON, NULL },
	{ "GET", REPO "/sandbox-secrets", api_secrets_list, "secret.list", 0, NULL },
	{ "PUT", REPO "/sandbox-secrets/{name}", api_secret_put, "secret.put", ROUTE_JSON, NULL },
	{ "DELETE", REPO "/sandbox-secrets/{name}", api_secret_delete, "secret.delete", 0, NULL },
	{ "POST", "/api/v3/user/keys", api_user_keys_create, "key.create", ROUTE_JSON, NULL },
	{ "POST", REPO SB, api_sandbox_create, "sandbox.create", ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "GET", REPO SB, api_sandbox_list, "sandbox.list", ROUTE_SANDBOX, NULL },
	{ "GET", REPO SB "/{id}", api_sandbox_get, "sandbox.get", ROUTE_SANDBOX, NULL },
	/* A client's view from an id alone (issue 33 item 5): the same checks and answer. */
	{ "GET", "/api/v3/user/sandboxes", api_user_sandboxes_list, "sandbox.list_own",
	  ROUTE_SANDBOX, NULL },
	{ "GET", "/api/v3/sandboxes/{id}", api_sandbox_get_by_id, "sandbox.get_by_id",
	  ROUTE_SANDBOX, NULL },
	{ "POST", REPO SB "/{id}/close", api_sandbox_close, "sandbox.close",
	  ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "POST", REPO SB "/{id}/exec", api_sandbox_exec, "sandbox.exec", ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "GET", REPO SB "/{id}/execs/{execId}", api_sandbox_exec_get, "sandbox.exec_get",
	  ROUTE_SANDBOX, NULL },
	{ "GET", REPO SB "/{id}/execs", api_sandbox_execs_list, "sandbox.execs", ROUTE_SANDBOX, NULL },
	{ "POST", REPO SB "/{id}/execs/{execId}/kill", api_sandbox_exec_kill, "sandbox.exec_kill",
	  ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "PUT", REPO SB "/{id}/files/…", api_sandbox_file_put, "sandbox.file_put",
	  ROUTE_SANDBOX, api_files_raw_match },
	{ "GET", REPO SB "/{id}/files/…", api_sandbox_file_get, "sandbox.file_get",
	  ROUTE_SANDBOX, api_files_raw_match },
	{ "POST", REPO SB "/{id}/read", api_sandbox_read, "sandbox.read", ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "POST", REPO SB "/{id}/write", api_sandbox_write, "sandbox.write",
	  ROUTE_JSON | ROUTE_BIG_BODY | ROUTE_SANDBOX, NULL },
	{ "POST", REPO SB "/{id}/list", api_sandbox_list_files, "sandbox.list_files",
	  ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "POST", REPO SB "/{id}/remove", api_sandbox_remove, "sandbox.remove",
	  ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "PATCH", REPO SB "/{id}", api_sandbox_update, "sandbox.update",
	  ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "POST", REPO SB "/{id}/keepalive", api_sandbox_keepalive, "sandbox.keepalive",
	  ROUTE_SANDBOX, NULL },
	{ "POST", REPO SB "/{id}/previews", api_preview_create, "sandbox.preview_create",
	  ROUTE_JSON | ROUTE_SANDBOX, NULL },
	{ "GET", REPO SB "/{id}/previews", api_preview_list, "sandbox.preview_list",
	  ROUTE_SANDBOX, NULL },
	{ "DELETE", REPO SB "/{id}/previews/{previewId}", api_preview_delete,
	  "sandbox.preview_delete", ROUTE_SANDBOX, NULL },
	/* nginx's auth_request for a preview's every request; not audited (api_previews.c). */
	{ "GET", API_PREVIEW_CHECK, api_preview_check, "preview.check", ROUTE_PUBLIC, NULL },
	{ "POST", REPO "/job-tokens", api_job_tokens_create, "job_token.create", ROUTE_JSON, NULL },
	{ "POST", "/api/v3/admin/accounts", api_admin_accounts_create, "account.create",
	  ROUTE_JSON | ROUTE_SITE_ADMIN, NULL },
	{ "PATCH", "/api/v3/admin/accounts/{login}", api_admin_accounts_update, "account.update",
	  ROUTE_JSON | ROUTE_SITE_ADMIN, NULL },
	{ "POST", "/api/v3/admin/accounts/{login}/tokens", api_admin_tokens_create,
	  "admin_token.create", ROUTE_JSON | ROUTE_SITE_ADMIN, NULL },
	/* Git smart HTTP: GET …/info/refs?service=, POST …/git-upload-pack and
	 * …/git-receive-pack; the handler tells the services apart and answers the rest. */
	{ "*", "/{owner}/{repo}.git/…", api_git, "git.request", ROUTE_GIT, git_path },
};

const size_t api_routes_count = sizeof(api_routes) / sizeof(api_routes[0]);
