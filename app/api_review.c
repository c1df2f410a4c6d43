/* api_review.c: reviewing agent work over REST (SPEC §5): branches, a commit, a
 * comparison, and deleting a ref under the rules of a push. The git work is review.c's. */
#include <stdio.h>
#include <string.h>
#include <git2.h>
#include "sandboxd/api.h"
#include "sandboxd/auth.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/policy.h"
#include "sandboxd/review.h"
#include "sandboxd/banned.h"

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
