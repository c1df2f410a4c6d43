/* merge.h: merging head into a branch for POST …/merges (SPEC §5), with libgit2. The
 * result is written to the object database only; the branch moves in a second step
 * (merge_update), so that the caller checks the rules of a push on the result in between,
 * and a push that lands meanwhile wins (compare-and-swap on the ref). */
#ifndef SANDBOXD_MERGE_H
#define SANDBOXD_MERGE_H
#include <git2.h>
#include <json-c/json.h>
#include "sandboxd/common/err.h"

enum merge_kind {
	MERGE_NOTHING,       /* head is already in base: nothing to do */
	MERGE_FAST_FORWARD,  /* base is an ancestor of head: base moves to head */
	MERGE_COMMIT,        /* diverged: a merge commit of base and head (in that order) */
};

struct merge {
	enum merge_kind kind;
	git_oid old;   /* base's commit the merge was made on */
	git_oid new_;  /* what base is to point at (MERGE_NOTHING: old) */
};

/* Who makes a merge commit, and how it reads. */
struct merge_author {
	const char *name, *email;  /* author and committer, now */
	const char *message;       /* NULL: "Merge <head> into <base>" */
};

/* Merges head (a ref spec, in the ephemeral namespace when ephemeral: review_resolve) into
 * the branch base_ref (a full name, refs/heads/…), which must exist. Returns 0 with *out
 * filled; ERR_NOTFOUND "unknown ref" (base or head); 409 (ERR_EXISTS) "merge conflict"
 * with *conflicts the array of conflicting paths (at most 300; the caller owns it; NULL
 * otherwise) and nothing written; ERR_INVALID when the author cannot sign a commit (a name
 * or email with '<', '>' or a newline); ERR_FAIL/ERR_NOMEM. */
int merge_make(struct merge *out, json_object **conflicts, git_repository *g,
	       const char *base_ref, int ephemeral, const char *head,
	       const struct merge_author *who, struct err *e) __attribute__((warn_unused_result));

/* Moves ref from old to new_, only if it still points at old: 0, 409 (ERR_EXISTS) "base
 * moved; try again" when a push or another merge won the race, or ERR_FAIL. */
int merge_update(git_repository *g, const char *ref, const git_oid *old, const git_oid *new_,
		 struct err *e) __attribute__((warn_unused_result));

#endif
