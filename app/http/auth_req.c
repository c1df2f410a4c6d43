/* auth_req.c: forge/auth for an HTTP request (auth_req.h). */
#include <string.h>
#include <strings.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"

int auth_resolve(struct req *r, struct err *e)
{
	const char *failure = NULL;
	int rc = auth_credential(r->db, r->pool, http_param(r, "HTTP_AUTHORIZATION"), r->git,
				 &r->caller, &failure, e);

	r->auth_failure = failure;
	if (rc == 0 && r->caller.kind == TOKEN_JWT) {
		json_add_str(r->audit_details, "jti", r->caller.jwt_jti[0] ? r->caller.jwt_jti : NULL);
		json_add_str(r->audit_details, "kid", r->caller.jwt_kid);
	}
	return rc;
}

static const char api_repos[] = "/api/v3/repos";

/* 1 when r's URL names a repository (/api/v3/repos/{o}/{r}…, or any git request), so that
 * a renamed one can be pointed at under its new name. */
static int names_repo(const struct req *r)
{
	return r->git || strncmp(r->path, api_repos, strlen(api_repos)) == 0;
}

/* The path that the request's would be with owner/name in place of the one it names
 * (names_repo), with the query. */
static const char *moved_path(struct req *r, const char *owner, const char *name)
{
	const char *rest = r->git ? r->path : r->path + strlen(api_repos);

	for (int i = 0; i < 2 && rest; i++)
		rest = strchr(rest + 1, '/');
	return pool_printf(r->pool, "%s/%s/%s%s%s%s%s", r->git ? "" : api_repos, owner, name,
			   r->git ? ".git" : "", rest ? rest : "", r->query && *r->query ? "?" : "",
			   r->query && *r->query ? r->query : "");
}

int auth_repo(struct req *r, const char *owner, const char *name, enum role need, int writes,
	      struct repo *out, struct err *e)
{
	unsigned flags = (writes ? AUTH_WRITES : 0) | (r->git ? AUTH_GIT : 0);
	const char *loc;
	int rc;

	/* Only a URL that names the repository can point at its new name: MCP's tools name
	 * it in their arguments. */
	if ((r->via && strcmp(r->via, "mcp") == 0) || !names_repo(r))
		flags |= AUTH_NO_MOVES;
	rc = auth_access(r->db, &r->caller, owner, name, need, flags, out, e);
	if (out->role != ROLE_NONE && out->owner[0])
		r->audit_repo = pool_printf(r->pool, "%s/%s", out->owner, out->name);
	if (rc == ERR_ANSWER && e->status == 301) {
		if (!(loc = moved_path(r, out->owner, out->name)))
			return err_set(e, ERR_NOMEM, "out of memory");
		http_header(r, "Location", loc);
	}
	return rc;
}

int auth_git(struct req *r, const char *owner, const char *name, int push, struct repo *out,
	     struct err *e)
{
	int rc = auth_resolve(r, e);

	if (rc == ERR_DENIED)
		return err_set(e, ERR_AUTH, "bad credentials");
	if (rc)
		return rc;
	/* A git URL names its one repository: elsewhere it is no credential at all. */
	if (r->caller.kind == TOKEN_JWT &&
	    strcasecmp(r->caller.jwt_repo, pool_printf(r->pool, "%s/%s", owner, name))) {
		r->auth_failure = "git URL token for another repository";
		return err_set(e, ERR_AUTH, "bad credentials");
	}
	return auth_repo(r, owner, name, push ? ROLE_WRITE : ROLE_READ, push, out, e);
}
