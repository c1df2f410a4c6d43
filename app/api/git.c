/* api_git.c: who may clone, fetch and push, in front of git http-backend. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#include <strings.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/core/audit.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/http/githttp.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/proto/pushreport.h"
#include "sandboxd/git/pushslot.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/proto/valscan.h"
#include "sandboxd/sandbox/secrets.h"
#include <openssl/crypto.h>
#include "sandboxd/common/banned.h"

const char *api_git_action(const struct git_route *g)
{
	switch (g->service) {
	case GIT_INFO_REFS: return g->push ? "git.refs.push" : "git.refs.fetch";
	case GIT_UPLOAD_PACK: return "git.fetch";
	case GIT_RECEIVE_PACK: return "git.push";
	case GIT_LFS_BATCH: return "lfs.batch";
	case GIT_LFS_OBJECT: return "lfs.object";
	default: return "route.unknown";
	}
}

/* After a push: the refs the hook accepted that git did not update get a failed row
 * (pushreport.h), so that the audit log never shows a ref as pushed that is not. A ref that
 * holds its new value did land (git was ended between the update and post-receive: a
 * time-out, a client gone) and gets none. */
static void audit_failed_refs(struct req *r, const struct git_pusher *who,
			      const struct repo *repo)
{
	struct push_ref *failed;
	struct stat st;
	struct err e = { .msg = "" };
	char *text = NULL;
	ssize_t got;
	int n, nfailed;

	if (fstat(who->report_fd, &st) || st.st_size <= 0)
		return;
	/* The request's memory, not a static: nothing of one push is left for the next. */
	if (!(failed = pool_alloc(r->pool, PUSH_REFS_MAX * sizeof(*failed)))) {
		log_error("the push's hook report cannot be read: out of memory");
		return;
	}
	if (st.st_size > (off_t)PUSH_REPORT_MAX || !(text = malloc((size_t)st.st_size + 1)) ||
	    (got = pread(who->report_fd, text, (size_t)st.st_size, 0)) != st.st_size) {
		log_error("the push's hook report (%lld bytes) cannot be read",
			  (long long)st.st_size);
		free(text);
		return;
	}
	n = nfailed = push_report_failed(text, (size_t)got, failed, PUSH_REFS_MAX);
	for (int i = 0; i < n; i++) {
		if (repo_ref_is(r->cfg->repos_dir, repo, failed[i].ref, failed[i].new_)) {
			nfailed--;
			continue;
		}
		struct audit_ref a = {
			.status = "500", .account_id = who->account_id, .login = who->login,
			.token_id = who->token_id, .token_kind = who->token_kind,
			.repository = r->audit_repo, .request_id = r->request_id,
			.ref = failed[i].ref, .old = failed[i].old, .new_ = failed[i].new_,
			.result = "failed",
			.reason = "accepted, but git could not update the ref (see git's report "
				  "to the client)",
			.kind = who->namespace_ ? "ephemeral" : "normal",
		};
		if (audit_push_ref(r->db, &a, &e))
			log_error("audit row of a failed ref update lost: %s", e.msg);
	}
	if (nfailed)
		json_add_int(r->audit_details, "refs_failed", nfailed);
	free(text);
}

/* A push's body streams to this worker (nginx buffers nothing for receive-pack), so the
 * pusher's account takes one of its push slots first (pushslot.h), before a byte of the
 * body is read. Past them, the push goes on only if its body has all arrived already (up
 * to PUSH_WHOLE_MAX, read here without waiting: a small push, as an agent's sandboxes send
 * several at once, streams no more than a buffered body); else 429 with Retry-After.
 * Anonymous pushes never get here (401). */
#define PUSH_WHOLE_MAX (1 << 20)   /* git's http.postBuffer: bigger bodies come chunked */

static int take_push_slot(struct req *r, int *slot, struct err *e)
{
	char after[16];
	int rc = pushslot_take(r->db, r->caller.account_id, r->cfg->git_pushes_per_account, slot, e);
	struct err whole = { .msg = "" };

	if (rc != ERR_LIMIT)
		return rc;
	if (http_read_body_arrived(r, PUSH_WHOLE_MAX, &whole) == 0) {
		json_add_bool(r->audit_details, "body_whole_on_arrival", 1);
		return 0;
	}
	/* A stalled holder is gone within the stall bound; a busy one may take longer. */
	snprintf(after, sizeof(after), "%d", r->cfg->git_body_stall);
	http_header(r, "Retry-After", after);
	json_add_int(r->audit_details, "push_slots", r->cfg->git_pushes_per_account);
	return rc;
}

/* The secret values of the sandbox a push comes from (secrets_for_pusher), on a memfd for
 * the hook (valscan.h, decision 0077): *fd, or -1 when the push is not a sandbox's or its
 * sandbox has none. A value that does not open refuses the push (the hook must never scan
 * without it). The memfd is the only copy that outlives this call. */
static int push_values(struct req *r, const struct repo *repo, int *fd, struct err *e)
{
	struct secrets_set set;
	struct buf b;
	size_t off = 0;
	int rc;

	*fd = -1;
	if ((rc = secrets_for_pusher(r->db, r->pool, &r->caller, repo->id, &set, e))) {
		if (rc == ERR_DB)
			return rc;
		return err_box(e, 503, "push refused: the sandbox's secrets cannot be read to scan "
			       "the push (the service's secrets key); nothing was changed");
	}
	if (!set.n)
		return 0;
	buf_init(&b, (size_t)256 << 10);
	for (size_t i = 0; !rc && i < set.n; i++)
		rc = valscan_encode(&b, set.names[i], set.values[i], strlen(set.values[i]));
	if (!rc && (*fd = memfd_create("sandboxd-values", MFD_CLOEXEC)) < 0)
		rc = err_set(e, ERR_FAIL, "memfd_create: %m");
	while (!rc && off < b.len) {
		ssize_t n = write(*fd, b.data + off, b.len - off);

		if (n < 0)
			rc = err_set(e, ERR_FAIL, "writing the push's secret values: %m");
		else
			off += (size_t)n;
	}
	if (rc == ERR_TOOBIG || rc == ERR_NOMEM)
		rc = err_set(e, rc, "the push's secret values do not fit");
	if (b.data)
		OPENSSL_cleanse(b.data, b.len);
	buf_release(&b);
	for (size_t i = 0; i < set.n; i++)
		OPENSSL_cleanse((char *)set.values[i], strlen(set.values[i]));
	if (!rc && lseek(*fd, 0, SEEK_SET) != 0)
		rc = err_set(e, ERR_FAIL, "lseek: %m");
	if (rc && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	if (!rc)
		json_add_int(r->audit_details, "secret_values_scanned", (int64_t)set.n);
	return rc;
}

int api_git(struct req *r, struct err *e)
{
	struct git_pusher who = { .report_fd = -1, .values_fd = -1 };
	struct git_route route, *g = &route;
	struct repo repo;
	int rc, slot = -1;

	r->git = 1;
	if (!githttp_match(r->path, r->query, g))
		return err_set(e, ERR_NOTFOUND, "not found");
	r->audit_action = api_git_action(g);
	if (g->service == GIT_NONE)
		return err_set(e, ERR_NOTFOUND, "not found");
	if (g->service == GIT_LFS_BATCH || g->service == GIT_LFS_OBJECT)
		return api_lfs(r, g, e);
	if (strcmp(r->method, g->method)) {
		http_header(r, "Allow", g->method);
		return err_http(e, 405, "method not allowed");
	}
	if ((rc = auth_git(r, g->owner, g->name, g->push, &repo, e)))
		return rc;
	if (g->service == GIT_RECEIVE_PACK && (rc = take_push_slot(r, &slot, e)))
		return rc;
	if (r->caller.authenticated) {
		who.login = r->caller.login;
		who.account_id = r->caller.account_id;
		who.agent = r->caller.agent;
		who.token_id = r->caller.token_id;
		who.token_kind = token_kind_name(r->caller.kind);
		who.namespace_ = r->caller.jwt_ephemeral ? "ephemeral" : NULL;
		who.policies = r->caller.jwt_policies;
		if (g->service == GIT_RECEIVE_PACK &&
		    (who.report_fd = memfd_create("sandboxd-push", MFD_CLOEXEC)) < 0)
			log_warn("memfd_create: %m: failed ref updates will not be audited");
		if (g->service == GIT_RECEIVE_PACK && (rc = push_values(r, &repo, &who.values_fd, e)))
			goto out;
	}
	json_add_str(r->audit_details, "service", api_git_action(g));
	/* The response is streamed from here on: the dispatcher writes nothing more. */
	rc = githttp_serve(r, g, &repo, r->caller.authenticated ? &who : NULL, e);
	if (who.report_fd >= 0)
		audit_failed_refs(r, &who, &repo);
out:
	if (who.report_fd >= 0)
		close(who.report_fd);
	if (who.values_fd >= 0)
		close(who.values_fd);
	if (slot >= 0)
		pushslot_release(r->db, r->caller.account_id, slot);
	return rc;
}
