/* api_review.c: reviewing agent work over REST (SPEC §5): branches, a commit, a
 * comparison, deleting a ref and merging, under the rules of a push. The git work is
 * review.c's and merge.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/core/audit.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/git/merge.h"
#include "sandboxd/proto/policy.h"
#include "sandboxd/git/pushscan.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/git/review.h"
#include "sandboxd/common/banned.h"

/* The repository of the path with the caller's role checked (auth_repo: personal and job
 * tokens; the dispatcher has refused sandbox tokens and git URLs), the namespace of the
 * query, and the repository opened. The caller frees *g. */
static int review_target(struct req *r, enum role need, struct repo *repo, int *ephemeral,
			 git_repository **g, struct err *e)
{
	int rc;

	*g = NULL;
	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), need,
			    need >= ROLE_WRITE, repo, e)) ||
	    (rc = review_namespace(r->query, ephemeral, e)))
		return rc;
	if (*ephemeral)
		json_add_str(r->audit_details, "namespace", "ephemeral");
	return review_open(g, r->cfg->repos_dir, repo, e);
}

/* Answers 200 with what a review_* call built (rc 0), or passes its error up. */
static int answer(struct req *r, git_repository *g, int rc, json_object *o)
{
	git_repository_free(g);
	if (!rc)
		http_json(r, 200, o);
	return rc;
}

int api_review_branches(struct req *r, struct err *e)
{
	struct repo repo;
	git_repository *g;
	json_object *o = NULL;
	int eph, rc;

	if ((rc = review_target(r, ROLE_READ, &repo, &eph, &g, e)) == 0)
		rc = review_branches(&o, g, eph, repo.default_branch, e);
	return answer(r, g, rc, o);
}

int api_review_commit(struct req *r, struct err *e)
{
	struct repo repo;
	git_repository *g;
	json_object *o = NULL;
	int eph, rc;

	json_add_str(r->audit_details, "ref", http_path_param(r, 2));
	if ((rc = review_target(r, ROLE_READ, &repo, &eph, &g, e)) == 0)
		rc = review_commit(&o, g, eph, http_path_param(r, 2), e);
	return answer(r, g, rc, o);
}

int api_review_compare(struct req *r, struct err *e)
{
	char base[ROUTER_PARAM_MAX], head[ROUTER_PARAM_MAX];
	struct repo repo;
	git_repository *g = NULL;
	json_object *o = NULL;
	int eph, rc;

	if ((rc = review_split_range(http_path_param(r, 2), base, sizeof(base), head,
				     sizeof(head), e)))
		return rc;
	json_add_str(r->audit_details, "base", base);
	json_add_str(r->audit_details, "head", head);
	if ((rc = review_target(r, ROLE_READ, &repo, &eph, &g, e)) == 0)
		rc = review_compare(&o, g, eph, base, head, e);
	return answer(r, g, rc, o);
}

/* A deleted ref put back when the request does not commit (its audit row failed). */
struct ref_undo {
	const struct config *cfg;
	struct repo repo;
	char ref[REVIEW_REF_MAX];
	char sha[GIT_OID_HEXSZ + 1];
};

static void undo_delete(void *arg)
{
	struct ref_undo *u = arg;
	git_repository *g = NULL;
	git_reference *ref = NULL;
	git_oid id;
	struct err e = { .msg = "" };

	if (review_open(&g, u->cfg->repos_dir, &u->repo, &e) || git_oid_fromstr(&id, u->sha) < 0 ||
	    git_reference_create(&ref, g, u->ref, &id, 0, "sandboxd: deletion undone") < 0)
		log_error("could not restore %s at %s: %s", u->ref, u->sha,
			  e.msg[0] ? e.msg : git_error_last() ? git_error_last()->message : "unknown");
	git_reference_free(ref);
	git_repository_free(g);
}

/* The rules of a push (policy_push_refused, as the hook decides them) for deleting full:
 * a REST caller holds a personal or job token, which carries no ref policies, so branch
 * protection is what decides. SPEC §5 answers the default branch with 422; anything else
 * refused is 403 with the refusal's line. */
static int delete_allowed(struct req *r, const struct repo *repo, int ephemeral,
			  const char *full, struct err *e)
{
	struct policy_list none = { .n = 0 };
	char default_ref[300], reason[POLICY_REASON_MAX];
	struct policy_push p = { .policies = &none, .ref = full, .default_ref = default_ref,
				 .agent = r->caller.agent, .deleting = 1 };

	/* The ephemeral namespace has no default branch (as in the hook). */
	snprintf(default_ref, sizeof(default_ref), "%s%s", ephemeral ? "" : "refs/heads/",
		 ephemeral ? "" : repo->default_branch);
	if (!policy_push_refused(&p, reason, sizeof(reason)))
		return 0;
	json_add_str(r->audit_details, "reason", reason);
	if (strcmp(full, default_ref) == 0)
		return err_http(e, 422, "%s", reason);
	return err_set(e, ERR_DENIED, "%s", reason);
}

int api_review_ref_delete(struct req *r, struct err *e)
{
	struct repo repo;
	git_repository *g = NULL;
	struct ref_undo *u = pool_alloc(r->pool, sizeof(*u));
	int eph, rc;

	if (!u)
		return err_set(e, ERR_NOMEM, "out of memory");
	json_add_str(r->audit_details, "ref", http_path_param(r, 2));
	if ((rc = review_target(r, ROLE_WRITE, &repo, &eph, &g, e)) ||
	    (rc = review_full_ref(http_path_param(r, 2), eph, u->ref, sizeof(u->ref), e)) ||
	    (rc = review_ref_target(g, u->ref, u->sha, e)) ||
	    (rc = delete_allowed(r, &repo, eph, u->ref, e)))
		goto out;
	json_add_str(r->audit_details, "old", u->sha);
	u->cfg = r->cfg;
	u->repo = repo;
	if ((rc = review_ref_delete(g, u->ref, u->sha, e)))
		goto out;
	if (http_on_abort(r, undo_delete, u)) {
		undo_delete(u);
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	http_empty(r, 204);
out:
	git_repository_free(g);
	return rc;
}

/* A merged base put back when the request does not commit: only if it still holds what
 * the merge wrote (a push since then stands). */
struct merge_undo {
	const struct config *cfg;
	struct repo repo;
	char ref[REVIEW_REF_MAX];
	git_oid old, new_;
};

static void undo_merge(void *arg)
{
	struct merge_undo *u = arg;
	git_repository *g = NULL;
	struct err e = { .msg = "" };

	if (review_open(&g, u->cfg->repos_dir, &u->repo, &e) ||
	    merge_update(g, u->ref, &u->new_, &u->old, &e))
		log_error("could not undo the merge into %s: %s", u->ref, e.msg);
	git_repository_free(g);
}

/* The body of POST …/merges: {base, head, namespace?, commit_message?}. */
struct merge_req {
	const char *base, *head, *ns, *message;
	int ephemeral;
};

static int merge_body(struct req *r, struct merge_req *m, struct err *e)
{
	int rc;

	memset(m, 0, sizeof(*m));
	if ((rc = json_field_string(r->json, "base", 1, 255, &m->base, e)) < 0 ||
	    (rc = repo_valid_branch(m->base, "base", e)) < 0 ||
	    (rc = json_field_string(r->json, "head", 1, 255, &m->head, e)) < 0 ||
	    (rc = json_field_string(r->json, "namespace", 0, 64, &m->ns, e)) < 0 ||
	    (rc = json_field_string(r->json, "commit_message", 0, 65536, &m->message, e)) < 0)
		return rc;
	if (m->ns && m->ns[0] && strcmp(m->ns, "ephemeral"))
		return err_http(e, 422, "field 'namespace' must be absent or 'ephemeral'");
	m->ephemeral = m->ns && m->ns[0];
	if (m->message && !m->message[0])
		m->message = NULL;
	return 0;
}

static int ff_always(void *arg)
{
	return 1;  /* a merge's result always descends from the base it was made on */
}

/* The rules of a push to base (policy_push_refused, as the hook decides them): they do not
 * depend on what the merge makes (its result always descends from base), so they are
 * checked first. 0, or 403 with the refusal's line. */
static int merge_rules(struct req *r, const struct repo *repo, const char *ref, struct err *e)
{
	struct policy_list none = { .n = 0 };
	char default_ref[300], reason[POLICY_REASON_MAX];
	struct policy_push p = { .policies = &none, .ref = ref, .default_ref = default_ref,
				 .agent = r->caller.agent, .fast_forward = ff_always };

	snprintf(default_ref, sizeof(default_ref), "refs/heads/%s", repo->default_branch);
	if (!policy_push_refused(&p, reason, sizeof(reason)))
		return 0;
	json_add_str(r->audit_details, "reason", reason);
	return err_set(e, ERR_DENIED, "%s", reason);
}

/* Push protection on what the merge brings (pushscan_run, the hook's scan: an agent's
 * ephemeral branch is scanned again when promoted): 0, or 403 with the refusal's line. */
static int merge_scan(struct req *r, const struct repo *repo, const char *ref,
		      const git_oid *new_, struct err *e)
{
	char msg[1024], hex[GIT_OID_HEXSZ + 1];
	struct pushscan_ref scan = { .ref = ref, .new_ = git_oid_tostr(hex, sizeof(hex), new_) };
	char *path = repo_path(r->cfg->repos_dir, repo->owner, repo->name);
	int found;

	if (!path)
		return err_set(e, ERR_NOMEM, "out of memory");
	found = pushscan_run(path, &scan, 1, NULL, NULL, msg, sizeof(msg));
	free(path);
	if (!found)
		return 0;
	json_add_str(r->audit_details, "reason", msg);
	return err_set(e, ERR_DENIED, "%s", msg);
}

/* The merge's git.push.ref row, as the hook writes one per pushed ref (via "rest"). */
static int merge_audit(struct req *r, const char *ref, const git_oid *old, const git_oid *new_,
		       struct err *e)
{
	char o[GIT_OID_HEXSZ + 1], n[GIT_OID_HEXSZ + 1];
	struct audit_ref a = {
		.status = "200", .account_id = r->caller.account_id, .login = r->caller.login,
		.token_id = r->caller.token_id, .token_kind = token_kind_name(r->caller.kind),
		.repository = r->audit_repo, .request_id = r->request_id, .ref = ref,
		.old = git_oid_tostr(o, sizeof(o), old), .new_ = git_oid_tostr(n, sizeof(n), new_),
		.result = "accepted", .kind = "normal", .via = "rest",
	};

	return audit_push_ref(r->db, &a, e);
}

/* 201 {sha, fast_forward, commit: {message, author, parents}}. */
static int merge_answer(struct req *r, git_repository *g, const struct merge *m, struct err *e)
{
	git_commit *c = NULL;
	json_object *o, *inner, *parents;
	char hex[GIT_OID_HEXSZ + 1];

	if (git_commit_lookup(&c, g, &m->new_) < 0)
		return err_set(e, ERR_FAIL, "cannot read the merged commit");
	o = json_object_new_object();
	inner = json_object_new_object();
	parents = json_object_new_array();
	json_add_str(o, "sha", git_oid_tostr(hex, sizeof(hex), &m->new_));
	json_add_bool(o, "fast_forward", m->kind == MERGE_FAST_FORWARD);
	json_object_object_add(inner, "message", review_message_json(c));
	json_object_object_add(inner, "author", review_signature_json(git_commit_author(c)));
	for (unsigned i = 0; i < git_commit_parentcount(c); i++) {
		json_object *p = json_object_new_object();
		json_add_str(p, "sha", git_oid_tostr(hex, sizeof(hex), git_commit_parent_id(c, i)));
		json_object_array_add(parents, p);
	}
	json_object_object_add(inner, "parents", parents);
	json_object_object_add(o, "commit", inner);
	git_commit_free(c);
	http_json(r, 201, o);
	return 0;
}

/* The merge commit's author: the caller's account name and email, else its login. */
static struct merge_author author_of(const struct req *r, const struct merge_req *mr,
				     char email[320])
{
	const struct account *a = &r->caller.account;

	snprintf(email, 320, "%s", a->has_email && a->email[0] ? a->email : "");
	if (!email[0])
		snprintf(email, 320, "%s@users.noreply.sandboxd", r->caller.login);
	return (struct merge_author){ .name = a->has_name && a->name[0] ? a->name : r->caller.login,
				      .email = email, .message = mr->message };
}

/* SPEC's 409 carries the paths beside the message: an answer err cannot hold, written
 * here; nothing was changed. */
static void conflict_answer(struct req *r, const struct err *e, json_object *conflicts)
{
	json_object *o = json_object_new_object();

	json_add_str(o, "message", e->msg);
	json_object_object_add(o, "files", conflicts);
	json_object_get(conflicts);
	json_object_object_add(r->audit_details, "conflicts", conflicts);
	http_json(r, 409, o);
}

/* The merge made (m) checked as a push, put in place (undone if the request aborts later),
 * audited and answered. */
static int merge_apply(struct req *r, const struct repo *repo, git_repository *g,
		       struct merge_undo *u, const struct merge *m, struct err *e)
{
	int rc;

	if ((rc = merge_scan(r, repo, u->ref, &m->new_, e)) ||
	    (rc = merge_update(g, u->ref, &m->old, &m->new_, e)))
		return rc;
	u->cfg = r->cfg;
	u->repo = *repo;
	u->old = m->old;
	u->new_ = m->new_;
	if (http_on_abort(r, undo_merge, u)) {
		undo_merge(u);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	json_add_str(r->audit_details, "result",
		     m->kind == MERGE_FAST_FORWARD ? "fast-forward" : "merge commit");
	if ((rc = merge_audit(r, u->ref, &m->old, &m->new_, e)))
		return rc;
	return merge_answer(r, g, m, e);
}

int api_review_merge(struct req *r, struct err *e)
{
	struct merge_req mr;
	struct repo repo;
	struct merge m;
	git_repository *g = NULL;
	json_object *conflicts = NULL;
	struct merge_undo *u = pool_alloc(r->pool, sizeof(*u));
	char email[320];
	int rc;

	if (!u)
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((rc = merge_body(r, &mr, e)) ||
	    (rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_WRITE, 1, &repo,
			    e)))
		return rc;
	json_add_str(r->audit_details, "base", mr.base);
	json_add_str(r->audit_details, "head", mr.head);
	if (mr.ephemeral)
		json_add_str(r->audit_details, "namespace", "ephemeral");
	struct merge_author who = author_of(r, &mr, email);
	snprintf(u->ref, sizeof(u->ref), "refs/heads/%s", mr.base);
	if ((rc = merge_rules(r, &repo, u->ref, e)) ||
	    (rc = review_open(&g, r->cfg->repos_dir, &repo, e)))
		goto out;
	rc = merge_make(&m, &conflicts, g, u->ref, mr.ephemeral, mr.head, &who, e);
	if (rc && conflicts) {
		conflict_answer(r, e, conflicts);
		rc = 0;
	} else if (!rc && m.kind == MERGE_NOTHING) {
		json_add_str(r->audit_details, "result", "nothing to merge");
		http_empty(r, 204);
	} else if (!rc) {
		rc = merge_apply(r, &repo, g, u, &m, e);
	}
out:
	git_repository_free(g);
	return rc;
}
