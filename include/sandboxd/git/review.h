/* review.h: what the review routes read from a repository (SPEC §5 "Reviewing agent work"):
 * branches, one commit with its files, a comparison of two commits. libgit2 does the work;
 * nothing here knows HTTP or the caller: the answers are json-c objects in GitHub's shapes,
 * errors are codes with a message (err.h).
 *
 * Names: a ref spec is what a client writes, e.g. "feature/x" (a branch, then a tag of that
 * name) or a commit id of 7 to 40 hex digits. `ephemeral` puts the ephemeral namespace's
 * prefix (REVIEW_NS) in front of the ref names, so that its refs are named as its clients
 * see them; commit ids are the same in both namespaces.
 *
 * Bounds (GitHub's): at most REVIEW_COMMITS_MAX commits and REVIEW_FILES_MAX files in one
 * answer, with "commits_truncated" / "files_truncated" true when cut. A file's "patch" is
 * there only for text: a binary file (or one that is not UTF-8) says "patch_omitted":
 * "binary"; a file whose blob passes REVIEW_BLOB_MAX, whose patch passes REVIEW_PATCH_MAX,
 * or that comes after the answer's patches passed REVIEW_PATCHES_MAX together says
 * "patch_omitted": "too large". */
#ifndef SANDBOXD_REVIEW_H
#define SANDBOXD_REVIEW_H
#include <stddef.h>
#include <git2.h>
#include <json-c/json.h>
#include "sandboxd/forge/auth.h"
#include "sandboxd/common/err.h"

#define REVIEW_COMMITS_MAX 250
#define REVIEW_FILES_MAX 300
#define REVIEW_BLOB_MAX (1024 * 1024)     /* bytes of either side of a file with a patch */
#define REVIEW_PATCH_MAX (64 * 1024)      /* bytes of one file's patch */
#define REVIEW_PATCHES_MAX (8 * 1024 * 1024) /* bytes of all the patches of one answer */
#define REVIEW_NS "refs/namespaces/ephemeral/"
/* The longest full ref name handled: a ref spec in a path is at most ROUTER_PARAM_MAX. */
#define REVIEW_REF_MAX 320

/* The query's namespace= value: absent or empty is the normal refs (*ephemeral 0),
 * "ephemeral" the ephemeral namespace (1). Returns 0, or 422 (ERR_ANSWER) "query
 * 'namespace' must be absent or 'ephemeral'" for any other value or a repeated one. */
int review_namespace(const char *query, int *ephemeral, struct err *e)
	__attribute__((warn_unused_result));

/* Splits "base...head" at its first "..." (no ref name may hold ".."). Returns 0 with both
 * parts copied (NUL-terminated), or 422 "compare takes '{base}...{head}'" when a part is
 * missing or does not fit its buffer. */
int review_split_range(const char *range, char *base, size_t basesz, char *head,
		       size_t headsz, struct err *e) __attribute__((warn_unused_result));

/* The full stored name of a DELETE …/git/refs/{ref} path: "heads/x" -> "refs/heads/x"
 * ("refs/namespaces/ephemeral/refs/heads/x" when ephemeral). Returns 0, or 422 "ref must
 * start with 'heads/' or 'tags/'" / "'<ref>' is not a valid ref name". */
int review_full_ref(const char *ref, int ephemeral, char *out, size_t outsz, struct err *e)
	__attribute__((warn_unused_result));

/* "ahead", "behind", "diverged" or "identical": head against base, by the commits each
 * has that the other lacks. */
const char *review_status(size_t ahead, size_t behind);

/* 1 when s is 7 to 40 hex digits (a commit id or an abbreviation of one), else 0. */
int review_is_hex(const char *s) __attribute__((warn_unused_result));

/* The commit spec names (a branch, a tag, then a commit id; in the namespace when
 * ephemeral). The caller frees *out. 0, ERR_NOTFOUND "unknown ref", or ERR_FAIL. */
int review_resolve(git_commit **out, git_repository *g, int ephemeral, const char *spec,
		   struct err *e) __attribute__((warn_unused_result));

/* A commit's message as GitHub gives it: without the newlines git ends it with. */
json_object *review_message_json(const git_commit *c);

/* {name, email, date} of a signature, the date in RFC 3339 UTC. */
json_object *review_signature_json(const git_signature *s);

/* Opens the repository's bare directory; the caller frees *out (git_repository_free).
 * 0 or ERR_FAIL/ERR_NOMEM. */
int review_open(git_repository **out, const char *repos_dir, const struct repo *repo,
		struct err *e) __attribute__((warn_unused_result));

/* [{name, commit: {sha}, protected}] of every branch, sorted by name; protected is the
 * default branch (SPEC §5 item 3: never deleted or force-pushed); the ephemeral namespace
 * has none. The caller owns *out. 0, or ERR_FAIL/ERR_NOMEM. */
int review_branches(json_object **out, git_repository *g, int ephemeral,
		    const char *default_branch, struct err *e) __attribute__((warn_unused_result));

/* {sha, commit: {message, author, committer}, parents: [{sha}], files: […],
 * files_truncated} of the commit spec names, its files against its first parent (a root
 * commit: against nothing). The caller owns *out. 0, ERR_NOTFOUND "unknown ref", or
 * ERR_FAIL/ERR_NOMEM. */
int review_commit(json_object **out, git_repository *g, int ephemeral, const char *spec,
		  struct err *e) __attribute__((warn_unused_result));

/* {status, ahead_by, behind_by, total_commits, merge_base_commit: {sha}, commits: […],
 * commits_truncated, files: […], files_truncated} of head (in the namespace when ephemeral)
 * against base (a normal ref or a commit id): the commits head has that base lacks, oldest
 * first, and the files changed from their merge base to head (GitHub's three dots). The
 * caller owns *out. 0, ERR_NOTFOUND "unknown ref", 422 "'<base>' and '<head>' have no
 * common ancestor", or ERR_FAIL/ERR_NOMEM. */
int review_compare(json_object **out, git_repository *g, int ephemeral, const char *base,
		   const char *head, struct err *e) __attribute__((warn_unused_result));

/* The commit id full (a full stored ref name) points at, into sha. 0, ERR_NOTFOUND
 * "unknown ref", or ERR_FAIL. */
int review_ref_target(git_repository *g, const char *full, char sha[GIT_OID_HEXSZ + 1],
		      struct err *e) __attribute__((warn_unused_result));

/* Deletes full if it still points at sha (what the caller checked): 0, 409 (ERR_EXISTS)
 * "ref moved; try again" when a push won the race, ERR_NOTFOUND "unknown ref", ERR_FAIL. */
int review_ref_delete(git_repository *g, const char *full, const char *sha, struct err *e)
	__attribute__((warn_unused_result));

#endif
