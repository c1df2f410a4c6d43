/* policy.h: ref policies (SPEC §5, item 2). Pure: no I/O; only policy_parse_json allocates
 * (json-c, freed before it returns).
 *
 * A policy list is an ordered array of {pattern, ops}. The pattern is a glob on the full
 * ref name as stored (for an ephemeral push `refs/namespaces/ephemeral/refs/heads/…`): `*`
 * matches any run of characters, `/` included, and the empty run; every other character,
 * `?`, `[`, `]` and `\` among them, stands for itself. Matching is case-sensitive. The first
 * policy whose pattern matches a ref decides; a ref that matches none is unrestricted.
 * `no-push` refuses every update of the ref; `no-force-push` refuses non-fast-forward
 * updates and deletions (creations and fast-forwards pass).
 *
 * Work is bounded: a pattern is at most POLICY_PATTERN_MAX bytes and matching it against a
 * name of n bytes costs at most O(POLICY_PATTERN_MAX * n) (no exponential backtracking);
 * names are at most POLICY_REFNAME_MAX bytes (see policy_decide). */
#ifndef SANDBOXD_POLICY_H
#define SANDBOXD_POLICY_H
#include <stddef.h>
#include <json-c/json.h>
#include "sandboxd/common/err.h"

#define POLICY_MAX 32            /* policies in one list */
#define POLICY_PATTERN_MAX 256   /* bytes in one pattern */
/* Longer ref names cannot be stored by git (a loose ref is a file: PATH_MAX). */
#define POLICY_REFNAME_MAX 4096
/* A reason buffer of this size never truncates a reason for a ref name within bounds. */
#define POLICY_REASON_MAX (POLICY_REFNAME_MAX + POLICY_PATTERN_MAX + 96)
/* The longest JSON text policy_parse_json reads: ample for POLICY_MAX escaped policies. */
#define POLICY_JSON_MAX 65536

/* ops: a bitmask. */
enum {
	POLICY_NO_PUSH = 1 << 0,
	POLICY_NO_FORCE_PUSH = 1 << 1,
};

struct policy {
	char pattern[POLICY_PATTERN_MAX + 1];  /* NUL-terminated, 1..POLICY_PATTERN_MAX bytes */
	unsigned ops;                          /* non-zero */
};

/* Policies v[0..n) in order. Plain data: copy it freely; nothing to free. */
struct policy_list {
	size_t n;
	struct policy v[POLICY_MAX];
};

/* What a ref update does. */
enum policy_update {
	POLICY_CREATE,            /* old is the zero id */
	POLICY_DELETE,            /* new is the zero id */
	POLICY_FAST_FORWARD,      /* old is an ancestor of new */
	POLICY_NON_FAST_FORWARD,  /* anything else: a force-push */
};

/* 1 if the NUL-terminated name matches the NUL-terminated pattern (the glob above), 0 if
 * not. Iterative; O(strlen(pattern) * strlen(name)) at worst, O(strlen(name)) typically. */
int policy_glob_match(const char *pattern, const char *name) __attribute__((warn_unused_result));

/* Parses and validates a list such as the `ref_policies` claim:
 *   [{"pattern": "refs/tags/v*", "ops": ["no-push"]}, …]
 * at most POLICY_MAX objects; pattern a string of 1..POLICY_PATTERN_MAX bytes without
 * control characters (reasons quote it on one line); ops a non-empty array of distinct
 * strings, each "no-push" or "no-force-push". Unknown members are ignored. A NULL arr (the
 * claim is absent or JSON null) is the empty list. `field` names arr in messages, e.g.
 * "ref_policies" (also the default when NULL) gives
 * "ref_policies[1].ops[0] must be 'no-push' or 'no-force-push'".
 * Returns 0 with *out filled, or ERR_INVALID with e naming the first offending element;
 * *out is then the empty list. Nothing to free: *out holds copies of the patterns. */
int policy_parse(json_object *arr, const char *field, struct policy_list *out,
		 struct err *e) __attribute__((warn_unused_result));

/* policy_parse on a JSON text (such as the hook's environment carries): NULL, "" and
 * "null" are the empty list; text over POLICY_JSON_MAX bytes is ERR_TOOBIG; text that is
 * not JSON is ERR_INVALID ("ref_policies is not valid JSON: <detail>"). Messages name the
 * array "ref_policies". */
int policy_parse_json(const char *text, struct policy_list *out, struct err *e)
	__attribute__((warn_unused_result));

/* The ops of the first policy whose pattern matches the NUL-terminated refname, with
 * *pattern (if pattern is not NULL) pointing at that policy's pattern inside list; 0
 * (unrestricted) and *pattern = NULL when none matches. Fails closed: a refname longer than
 * POLICY_REFNAME_MAX bytes is not matched and gets POLICY_NO_PUSH with *pattern = NULL,
 * unless the list is empty (an empty list restricts nothing). */
unsigned policy_decide(const struct policy_list *list, const char *refname,
		       const char **pattern);

/* Whether a caller with these policies may push at least some ref whose name starts with
 * base ("refs/", or "refs/namespaces/ephemeral/refs/" for an ephemeral git URL): 0 when a
 * no-push policy that matches every such name comes before any policy that lets a push
 * through (e.g. [{"pattern": "*", "ops": ["no-push"]}]); 1 otherwise, also for the empty
 * list. What uploads LFS objects asks (decision 0088): an object is only of use to a push.
 * It errs on the side of 1: no-push patterns that only together cover every name leave it
 * at 1, and the push itself is then refused by ref. */
int policy_may_push_some(const struct policy_list *list, const char *base)
	__attribute__((warn_unused_result));

/* Whether an update with these ops is refused. Returns 1 if refused, with a one-line reason
 * written to reason (reasonsz bytes, always NUL-terminated when reasonsz > 0, truncated if
 * short), e.g.
 *   refs/heads/main: push refused by ref policy 'refs/heads/ma*' (no-push)
 *   … by ref policy 'refs/heads/ma*' (no-force-push: not a fast-forward)
 *   … by ref policy 'refs/heads/ma*' (no-force-push: deletion)
 * or 0 if allowed, with reason set to "". pattern names the deciding policy; NULL means no
 * policy decided (the fail-closed case of policy_decide): the reason then says the ref name
 * is too long. no-push wins over no-force-push when both are set. */
int policy_refused(unsigned ops, const char *pattern, const char *refname,
		   enum policy_update update, char *reason, size_t reasonsz)
	__attribute__((warn_unused_result));

/* policy_decide then policy_refused: what the pre-receive hook calls for each ref. */
int policy_check(const struct policy_list *list, const char *refname,
		 enum policy_update update, char *reason, size_t reasonsz)
	__attribute__((warn_unused_result));

/* One ref update against every push rule (SPEC §5 items 2 and 3), as the pre-receive hook
 * and the REST routes that change refs (DELETE …/git/refs) both decide it: the ref
 * policies first (first match), then branch protection of the default branch: agents may
 * not update it at all, nobody deletes it, nobody force-pushes it. */
struct policy_push {
	const struct policy_list *policies;  /* the caller's (a git URL's); empty for tokens */
	const char *ref;          /* the full stored name (namespace prefix included) */
	const char *default_ref;  /* "refs/heads/<default>", or "" where none applies (the
				     ephemeral namespace has no default branch) */
	int agent;                /* the caller is an agent account */
	int creating, deleting;   /* old is the zero id; new is the zero id */
	/* Asked at most once, and only when a rule needs it: 1 when old is an ancestor of new.
	 * May be NULL when creating or deleting (then never asked). */
	int (*fast_forward)(void *arg);
	void *arg;
};

/* Whether the update p describes is refused. Returns 1 with a one-line reason in reason
 * (reasonsz bytes, always NUL-terminated when reasonsz > 0), e.g.
 *   refs/heads/main: the default branch can't be deleted
 *   refs/heads/main: agents may not update the default branch
 *   refs/heads/main: the default branch takes no force-push (not a fast-forward)
 * or a policy_refused reason; 0 when allowed, with reason "". */
int policy_push_refused(const struct policy_push *p, char *reason, size_t reasonsz)
	__attribute__((warn_unused_result));

#endif
