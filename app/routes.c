/* routes.c: the REST route table. Order matters only between patterns that could match the
 * same path; none here do. Every route under …/diffinery/sandboxes carries ROUTE_SANDBOX
 * (test_router checks it), so that no call on a sandbox skips its scope check. */
#include "sandboxd/api.h"
#include "sandboxd/banned.h"

#define REPO "/api/v3/repos/{owner}/{repo}"
#define SB API_SANDBOXES

const struct route api_routes[] = {
	{ "GET", "/healthz", api_health, "health.get", ROUTE_PUBLIC },
	{ "GET", "/api/v3/user", api_user_get, "user.get", 0 },
	{ "POST", "/mcp", api_mcp, "mcp", 0 },
	{ "POST", "/api/v3/user/repos", api_user_repos_create, "repo.create", ROUTE_JSON },
	{ "POST", "/api/v3/user/tokens", api_user_tokens_create, "token.create", ROUTE_JSON },
	{ "DELETE", "/api/v3/user/tokens/{id}", api_user_tokens_revoke, "token.revoke", 0 },
	{ "GET", REPO, api_repo_get, "repo.get", ROUTE_PUBLIC },
	{ "PATCH", REPO, api_repo_update, "repo.update", ROUTE_JSON },
	{ "PUT", REPO "/collaborators/{login}", api_collaborator_set, "collaborator.set",
	  ROUTE_JSON },
	{ "DELETE", REPO "/collaborators/{login}", api_collaborator_remove, "collaborator.remove",
	  0 },
	{ "POST", REPO "/git-urls", api_git_urls_create, "git_url.create", ROUTE_JSON },
	{ "POST", "/api/v3/user/keys", api_user_keys_create, "key.create", ROUTE_JSON },
	{ "POST", REPO SB, api_sandbox_create, "sandbox.create", ROUTE_JSON | ROUTE_SANDBOX },
	{ "GET", REPO SB, api_sandbox_list, "sandbox.list", ROUTE_SANDBOX },
	{ "GET", REPO SB "/{id}", api_sandbox_get, "sandbox.get", ROUTE_SANDBOX },
	{ "POST", REPO SB "/{id}/close", api_sandbox_close, "sandbox.close", ROUTE_SANDBOX },
	{ "POST", REPO SB "/{id}/exec", api_sandbox_exec, "sandbox.exec", ROUTE_JSON | ROUTE_SANDBOX },
	{ "GET", REPO SB "/{id}/execs/{execId}", api_sandbox_exec_get, "sandbox.exec_get",
	  ROUTE_SANDBOX },
	{ "POST", REPO SB "/{id}/read", api_sandbox_read, "sandbox.read", ROUTE_JSON | ROUTE_SANDBOX },
	{ "POST", REPO SB "/{id}/write", api_sandbox_write, "sandbox.write",
	  ROUTE_JSON | ROUTE_BIG_BODY | ROUTE_SANDBOX },
	{ "POST", REPO "/job-tokens", api_job_tokens_create, "job_token.create", ROUTE_JSON },
	{ "POST", "/api/v3/admin/accounts", api_admin_accounts_create, "account.create",
	  ROUTE_JSON | ROUTE_SITE_ADMIN },
	{ "PATCH", "/api/v3/admin/accounts/{login}", api_admin_accounts_update, "account.update",
	  ROUTE_JSON | ROUTE_SITE_ADMIN },
	{ "POST", "/api/v3/admin/accounts/{login}/tokens", api_admin_tokens_create,
	  "admin_token.create", ROUTE_JSON | ROUTE_SITE_ADMIN },
};

const size_t api_routes_count = sizeof(api_routes) / sizeof(api_routes[0]);
