/* api_git.c: who may clone, fetch and push, in front of git http-backend. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "sandboxd/api.h"
#include "sandboxd/auth.h"
#include "sandboxd/githttp.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/banned.h"

const char *api_git_action(const struct git_route *g)
{
	switch (g->service) {
	case GIT_INFO_REFS: return g->push ? "git.refs.push" : "git.refs.fetch";
	case GIT_UPLOAD_PACK: return "git.fetch";
	case GIT_RECEIVE_PACK: return "git.push";
	default: return "route.unknown";
	}
}

int api_git(struct req *r, const struct git_route *g)
{
	struct git_pusher who = { 0 };
	struct repo repo;
	struct err e = { "" };
	int rc;

	r->git = 1;
	if (g->service == GIT_NONE) {
		http_error(r, 404, "not found");
		return 0;
	}
	if (strcmp(r->method, g->method)) {
		http_header(r, "Allow", g->method);
		http_error(r, 405, "method not allowed");
		return 0;
	}
	rc = auth_resolve(r, &e);
	if (rc == ERR_DENIED) {
		http_unauthorized(r, "bad credentials");
		return 0;
	}
	if (rc)
		return http_fail(r, rc, &e);
	/* A git URL names its one repository: elsewhere it is no credential at all. */
	if (r->caller.kind == TOKEN_JWT &&
	    strcasecmp(r->caller.jwt_repo, pool_printf(r->pool, "%s/%s", g->owner, g->name))) {
		r->auth_failure = "git URL token for another repository";
		http_unauthorized(r, "bad credentials");
		return 0;
	}
	rc = auth_repo(r, g->owner, g->name, g->push ? ROLE_WRITE : ROLE_READ, g->push, &repo);
	if (rc)
		return rc > 0 ? 0 : rc;
	if (r->caller.authenticated) {
		who.login = r->caller.login;
		who.account_id = r->caller.account_id;
		who.agent = r->caller.agent;
		who.token_id = r->caller.token_id;
		who.token_kind = token_kind_name(r->caller.kind);
		who.namespace_ = r->caller.jwt_ephemeral ? "ephemeral" : NULL;
		who.policies = r->caller.jwt_policies;
	}
	json_add_str(r->audit_details, "service", api_git_action(g));
	/* The response is streamed from here on: the dispatcher writes nothing more. */
	rc = githttp_serve(r, g, &repo, r->caller.authenticated ? &who : NULL, &e);
	if (rc < 0)
		return http_fail(r, rc, &e);
	r->status = rc;
	r->responded = 1;
	r->streamed = 1;
	return 0;
}
