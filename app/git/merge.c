/* merge.c: a merge of head into a branch, made with libgit2, and the ref moved after. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/lib/json.h"
#include "sandboxd/git/merge.h"
#include "sandboxd/git/review.h"
#include "sandboxd/common/banned.h"

#define CONFLICTS_MAX 300

static int git_fail(struct err *e, const char *what)
{
	const git_error *ge = git_error_last();
	return err_set(e, ERR_FAIL, "cannot %s: %s", what, ge && ge->message ? ge->message : "unknown");
}

/* The conflicting paths of idx, once each. */
static int conflict_paths(json_object **out, git_index *idx, struct err *e)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *ours, *theirs;
	json_object *arr = json_object_new_array();
	int grc;

	if (!arr || git_index_conflict_iterator_new(&it, idx) < 0) {
		json_object_put(arr);
		return arr ? git_fail(e, "list the conflicts") : err_set(e, ERR_NOMEM, "out of memory");
	}
	while ((grc = git_index_conflict_next(&anc, &ours, &theirs, it)) == 0 &&
	       json_object_array_length(arr) < CONFLICTS_MAX) {
		const git_index_entry *any = ours ? ours : theirs ? theirs : anc;
		json_object_array_add(arr, json_object_new_string(any->path));
	}
	git_index_conflict_iterator_free(it);
	*out = arr;
	return 0;
}

/* The merge commit of base and head, written to the object database. */
static int make_commit(git_oid *out, json_object **conflicts, git_repository *g,
		       git_commit *base, git_commit *head, const char *base_name,
		       const char *head_name, const struct merge_author *who, struct err *e)
{
	git_merge_options opts;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_oid tree_id;
	char msg[600];
	const git_commit *parents[2] = { base, head };
	int rc = 0;

	git_merge_options_init(&opts, GIT_MERGE_OPTIONS_VERSION);
	if (git_signature_now(&sig, who->name, who->email) < 0)
		return err_set(e, ERR_INVALID, "the caller's name or email cannot sign a commit");
	if (git_merge_commits(&idx, g, base, head, &opts) < 0) {
		rc = git_fail(e, "merge");
		goto out;
	}
	if (git_index_has_conflicts(idx)) {
		if (!(rc = conflict_paths(conflicts, idx, e)))
			rc = err_http(e, 409, "merge conflict");
		goto out;
	}
	snprintf(msg, sizeof(msg), "Merge %.250s into %.250s", head_name, base_name);
	if (git_index_write_tree_to(&tree_id, idx, g) < 0 ||
	    git_tree_lookup(&tree, g, &tree_id) < 0 ||
	    git_commit_create(out, g, NULL, sig, sig, NULL, who->message ? who->message : msg,
			      tree, 2, parents) < 0)
		rc = git_fail(e, "write the merge commit");
out:
	git_tree_free(tree);
	git_index_free(idx);
	git_signature_free(sig);
	return rc;
}

int merge_make(struct merge *out, json_object **conflicts, git_repository *g,
	       const char *base_ref, int ephemeral, const char *head,
	       const struct merge_author *who, struct err *e)
{
	git_commit *b = NULL, *h = NULL;
	git_oid mb;
	const char *base_name = base_ref + strlen("refs/heads/");
	int rc, grc;

	memset(out, 0, sizeof(*out));
	*conflicts = NULL;
	grc = git_reference_name_to_id(&out->old, g, base_ref);
	if (grc == GIT_ENOTFOUND || grc == GIT_EINVALIDSPEC)
		return err_set(e, ERR_NOTFOUND, "unknown ref");
	if (grc < 0)
		return git_fail(e, "read the base");
	out->new_ = out->old;
	if (git_commit_lookup(&b, g, &out->old) < 0)
		return git_fail(e, "read the base");
	if ((rc = review_resolve(&h, g, ephemeral, head, e)))
		goto out;
	grc = git_merge_base(&mb, g, &out->old, git_commit_id(h));
	if (grc < 0 && grc != GIT_ENOTFOUND) {
		rc = git_fail(e, "find the merge base");
		goto out;
	}
	if (grc == 0 && git_oid_equal(&mb, git_commit_id(h))) {
		out->kind = MERGE_NOTHING;  /* head is in base already */
	} else if (grc == 0 && git_oid_equal(&mb, &out->old)) {
		out->kind = MERGE_FAST_FORWARD;
		out->new_ = *git_commit_id(h);
	} else {
		/* Diverged, or unrelated histories (git's merge of those: no common ancestor). */
		out->kind = MERGE_COMMIT;
		rc = make_commit(&out->new_, conflicts, g, b, h, base_name, head, who, e);
	}
out:
	git_commit_free(h);
	git_commit_free(b);
	return rc;
}

int merge_update(git_repository *g, const char *ref, const git_oid *old, const git_oid *new_,
		 struct err *e)
{
	git_reference *out = NULL;
	int grc = git_reference_create_matching(&out, g, ref, new_, 1, old, "sandboxd: merge");

	git_reference_free(out);
	if (grc == GIT_EMODIFIED || grc == GIT_ELOCKED || grc == GIT_ENOTFOUND)
		return err_http(e, 409, "base moved; try again");
	return grc < 0 ? git_fail(e, "move the base") : 0;
}
