/* api.h: the REST handlers and the route table that maps requests onto them. Each handler
 * writes its response with http_* and returns 0, or returns an error code that the dispatcher
 * turns into 500/503. */
#ifndef SANDBOXD_API_H
#define SANDBOXD_API_H
#include <stddef.h>
#include "sandboxd/http/githttp.h"
#include "sandboxd/http/http.h"
#include "sandboxd/sandbox/sandbox.h"

/* Where a repository's sandboxes live, after /api/v3/repos/{owner}/{repo}. */
#define API_SANDBOXES "/diffinery/sandboxes"
extern const struct route api_routes[];
extern const size_t api_routes_count;

int api_health(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* GET /api/v3/openapi.json: docs/openapi.yaml as JSON (api_openapi.c). */
int api_openapi(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* GET /api/v3/sandbox-images (api_images.c). */
int api_sandbox_images(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* GET /admin: the operators' HTML page (api_admin_page.c). */
int api_admin_page(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* GET /metrics: Prometheus' text exposition (api_metrics.c). */
int api_metrics(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_user_get(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_user_repos_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_repo_get(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_repo_update(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_collaborator_set(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_collaborator_remove(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_user_tokens_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_user_tokens_revoke(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_job_tokens_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_admin_accounts_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_admin_accounts_update(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_admin_tokens_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_git_urls_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_user_keys_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_get(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* GET /api/v3/sandboxes/{id} (api_sandboxes.c): the same answer by id alone, plus its
 * repository. */
int api_sandbox_get_by_id(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* GET /api/v3/user/sandboxes (api_forge_lists.c): the caller's sandboxes on every
 * repository, paginated as the forge's lists, filtered by ?state=. */
int api_user_sandboxes_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_close(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_exec(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_read(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* PUT and GET …/files/{path} (api_files_raw.c), matched by api_files_raw_match: the
 * sandbox's segments as params 0..2, the file's path left in r->path after the
 * literal part (api_files_raw_rest: NULL when path has none). */
int api_sandbox_file_put(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_file_get(struct req *r, struct err *e) __attribute__((warn_unused_result));
struct route_match;
int api_files_raw_match(const char *path, struct route_match *m)
	__attribute__((warn_unused_result));
const char *api_files_raw_rest(const char *path);
int api_sandbox_write(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_list_files(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_remove(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_update(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_keepalive(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* Reviewing agent work (api_review.c, SPEC §5). */
int api_review_branches(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_review_commit(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_review_compare(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_review_ref_delete(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_review_merge(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* The forge's everyday routes (api_forge_lists.c, api_forge_delete.c, SPEC §4): lists
 * paginated as GitHub's (per_page, page, Link), deletions. */
int api_user_repos_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_users_repos_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_collaborators_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_user_tokens_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_user_keys_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_user_keys_delete(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_repo_delete(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* Registers the undo of a directory move (from to to, both malloc'd: freed here, also on
 * failure; from NULL: nothing moved): moved back if the request does not commit. Without
 * the undo the move is taken back at once and ERR_NOMEM returned. */
int api_forge_undo_move(struct req *r, char *from, char *to, struct err *e)
	__attribute__((warn_unused_result));
/* POST /mcp: MCP's JSON-RPC over streamable HTTP (api_mcp.c). */
int api_mcp(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_exec_get(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_execs_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_secret_put(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_secrets_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_secret_delete(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_sandbox_exec_kill(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* Git smart HTTP: authorises, then streams through git http-backend. */
int api_git(struct req *r, struct err *e) __attribute__((warn_unused_result));
/* The audit verb of a git request. */
const char *api_git_action(const struct git_route *g);
/* Git LFS (api_lfs.c): the batch API and the basic transfer's objects. */
int api_lfs(struct req *r, const struct git_route *g, struct err *e)
	__attribute__((warn_unused_result));

#endif
