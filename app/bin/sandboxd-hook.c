/* sandboxd-hook: the pre-receive and post-receive hooks of every hosted repository
 * (installed through core.hooksPath in http-backend's environment, never as a file in a
 * repository; one binary, told apart by the name it runs under).
 *
 * pre-receive, for each ref in the push, in order: the ephemeral namespace prefix is put
 * back on the name, the ref policies decide (first match), branch protection guards the
 * default branch, and the new blobs are scanned for secrets. One refused ref refuses the
 * whole push; every ref gets an audit row. git prints what we write to stderr as
 * "remote: …" lines. post-receive only reports which refs landed (pushreport.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <git2.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include "sandboxd/audit.h"
#include "sandboxd/db.h"
#include "sandboxd/json.h"
#include "sandboxd/policy.h"
#include "sandboxd/pushreport.h"
#include "sandboxd/scan.h"
#include "sandboxd/banned.h"

#define MAX_REFS PUSH_REFS_MAX
#define MAX_COMMITS 20000
#define ZERO "0000000000000000000000000000000000000000"

struct update {
	char old[GIT_OID_HEXSZ + 1];
	char new_[GIT_OID_HEXSZ + 1];
	char ref[1024];        /* the full stored name (namespace prefix put back) */
	const char *reason;    /* NULL: accepted */
};

static char reasons[MAX_REFS][512];

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v ? v : "";
}

/* The variable's value, or NULL (SQL NULL) when it is unset or empty. */
static const char *or_null(const char *name)
{
	return env(name)[0] ? env(name) : NULL;
}

/* 1 when old is an ancestor of new: `git merge-base --is-ancestor`, which uses the
 * commit-graph and stays fast on long histories (libgit2's walk does not). */
static int fast_forward(const char *old, const char *new_)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { (char *)"git", (char *)"merge-base", (char *)"--is-ancestor",
				 (char *)old, (char *)new_, NULL };
		execvp("git", argv);
		_exit(127);
	}
	if (pid < 0)
		return 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void refuse(struct update *u, int i, const char *fmt, const char *a, const char *b)
{
	snprintf(reasons[i], sizeof(reasons[i]), fmt, a, b);
	u->reason = reasons[i];
}

/* Ref policies and branch protection for one update. */
static void check_ref(struct update *u, int i, const struct policy_list *policies,
		      const char *default_ref, int agent)
{
	int creating = strcmp(u->old, ZERO) == 0, deleting = strcmp(u->new_, ZERO) == 0;
	int ff = -1;  /* unknown until needed */
	const char *pattern = NULL;
	unsigned ops = policy_decide(policies, u->ref, &pattern);

	if (ops) {
		enum policy_update up = POLICY_CREATE;
		if (deleting)
			up = POLICY_DELETE;
		else if (!creating && !(ops & POLICY_NO_PUSH))
			up = (ff = fast_forward(u->old, u->new_)) ? POLICY_FAST_FORWARD
								   : POLICY_NON_FAST_FORWARD;
		else if (!creating)
			up = POLICY_NON_FAST_FORWARD; /* no-push refuses either way */
		if (policy_refused(ops, pattern, u->ref, up, reasons[i], sizeof(reasons[i]))) {
			u->reason = reasons[i];
			return;
		}
	}
	if (strcmp(u->ref, default_ref))
		return;
	if (agent) {
		refuse(u, i, "%s: agents may not update the default branch%s", u->ref, "");
		return;
	}
	if (deleting) {
		refuse(u, i, "%s: the default branch can't be deleted%s", u->ref, "");
		return;
	}
	if (!creating && (ff < 0 ? !fast_forward(u->old, u->new_) : !ff))
		refuse(u, i, "%s: the default branch takes no force-push (not a fast-forward)%s",
		       u->ref, "");
}

/* Scans the blobs that this push brings (those in the quarantine) in the commits it adds.
 * Returns 1 with msg filled on the first secret. */
static int scan_push(struct update *u, int n, char *msg, size_t msgsz)
{
	git_repository *repo = NULL;
	git_odb *quarantine = NULL;
	git_revwalk *walk = NULL;
	const char *qpath = getenv("GIT_QUARANTINE_PATH");
	git_oid oid;
	int found = 0, commits = 0;

	if (git_repository_open_ext(&repo, ".", GIT_REPOSITORY_OPEN_FROM_ENV, NULL) < 0 ||
	    git_repository_set_namespace(repo, NULL) < 0 || git_revwalk_new(&walk, repo) < 0) {
		snprintf(msg, msgsz, "cannot open the repository to scan the push");
		found = 1;
		goto out;
	}
	if (qpath && git_odb_open(&quarantine, qpath) < 0)
		quarantine = NULL;
	for (int i = 0; i < n; i++)
		if (strcmp(u[i].new_, ZERO) && git_oid_fromstr(&oid, u[i].new_) == 0)
			git_revwalk_push(walk, &oid);
	/* What the repository already had is not this push's: hide every existing ref. */
	git_revwalk_hide_glob(walk, "refs/*");
	while (!found && git_revwalk_next(&oid, walk) == 0 && commits++ < MAX_COMMITS) {
		git_commit *c = NULL, *parent = NULL;
		git_tree *tree = NULL, *ptree = NULL;
		git_diff *diff = NULL;

		if (git_commit_lookup(&c, repo, &oid) < 0 || git_commit_tree(&tree, c) < 0)
			goto next;
		if (git_commit_parentcount(c) > 0 && git_commit_parent(&parent, c, 0) == 0)
			git_commit_tree(&ptree, parent);
		if (git_diff_tree_to_tree(&diff, repo, ptree, tree, NULL) < 0)
			goto next;
		for (size_t d = 0; !found && d < git_diff_num_deltas(diff); d++) {
			const git_diff_delta *delta = git_diff_get_delta(diff, d);
			git_blob *blob = NULL;
			struct scan_hit hit;

			if (delta->status != GIT_DELTA_ADDED && delta->status != GIT_DELTA_MODIFIED &&
			    delta->status != GIT_DELTA_RENAMED && delta->status != GIT_DELTA_COPIED)
				continue;
			if (quarantine && !git_odb_exists(quarantine, &delta->new_file.id))
				continue;
			if (git_blob_lookup(&blob, repo, &delta->new_file.id) < 0)
				continue;
			if (scan_buffer(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
					&hit)) {
				char sha[GIT_OID_HEXSZ + 1];
				git_oid_tostr(sha, sizeof(sha), &oid);
				snprintf(msg, msgsz,
					 "push refused: %s found in %s (line %zu) in commit %.12s; remove it "
					 "from the history and push again",
					 hit.rule, delta->new_file.path, hit.line, sha);
				found = 1;
			}
			git_blob_free(blob);
		}
next:
		git_diff_free(diff);
		git_tree_free(ptree);
		git_tree_free(tree);
		git_commit_free(parent);
		git_commit_free(c);
	}
out:
	git_revwalk_free(walk);
	git_odb_free(quarantine);
	git_repository_free(repo);
	return found;
}

/* One audit row per ref, all in one transaction. 0 when written. */
static int audit(struct update *u, int n, const char *push_reason)
{
	struct db db;
	struct err e;
	int rc;

	db_init(&db, env("SANDBOXD_DATABASE_URL"));
	if ((rc = db_begin(&db, &e)))
		goto out;
	for (int i = 0; i < n && !rc; i++) {
		const char *reason = u[i].reason ? u[i].reason : push_reason;
		struct audit_ref a = {
			.status = reason ? "403" : "200",
			.account_id = or_null("SANDBOXD_HOOK_ACCOUNT_ID"),
			.login = env("SANDBOXD_HOOK_LOGIN"),
			.token_id = or_null("SANDBOXD_HOOK_TOKEN_ID"),
			.token_kind = env("SANDBOXD_HOOK_TOKEN_KIND"),
			.repository = env("SANDBOXD_HOOK_REPO"),
			.request_id = env("SANDBOXD_HOOK_REQUEST_ID"),
			.ref = u[i].ref, .old = u[i].old, .new_ = u[i].new_,
			.result = reason ? "refused" : "accepted", .reason = reason,
			.kind = env("SANDBOXD_HOOK_NAMESPACE")[0] ? "ephemeral" : "normal",
		};
		rc = audit_push_ref(&db, &a, &e);
	}
	if (!rc)
		rc = db_commit(&db, &e);
out:
	if (rc)
		fprintf(stderr, "sandboxd: audit log unavailable: %s\n", e.msg);
	db_close(&db);
	return rc;
}

/* Tells the worker (pushreport.h) what became of each ref: "accepted" or "updated". */
static void report(const char *kind, const struct update *u, int n)
{
	if (strcmp(env("SANDBOXD_HOOK_REPORT_FD"), "3"))
		return;
	for (int i = 0; i < n; i++)
		dprintf(PUSH_REPORT_FD, "%s %s %s %s\n", kind, u[i].old, u[i].new_, u[i].ref);
}

/* Reads git's "old new ref" lines from stdin into u; returns how many, or -1 past
 * MAX_REFS. The namespace prefix is put back on each name: policies match stored names. */
static int read_updates(struct update *u, const char *ns)
{
	char line[2200];
	int n = 0;

	while (fgets(line, sizeof(line), stdin)) {
		char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		size_t len = strlen(line);

		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (n == MAX_REFS)
			return -1;
		if (!sp1 || !sp2 || sp1 - line != GIT_OID_HEXSZ || sp2 - sp1 - 1 != GIT_OID_HEXSZ)
			continue;
		snprintf(u[n].old, sizeof(u[n].old), "%.*s", GIT_OID_HEXSZ, line);
		snprintf(u[n].new_, sizeof(u[n].new_), "%.*s", GIT_OID_HEXSZ, sp1 + 1);
		if (ns[0])
			snprintf(u[n].ref, sizeof(u[n].ref), "refs/namespaces/%s/%s", ns, sp2 + 1);
		else
			snprintf(u[n].ref, sizeof(u[n].ref), "%s", sp2 + 1);
		u[n].reason = NULL;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	static struct update u[MAX_REFS];
	struct policy_list policies;
	char default_ref[300], scan_msg[1024] = "";
	const char *ns = env("SANDBOXD_HOOK_NAMESPACE"), *name;
	int n, refused = 0, agent = strcmp(env("SANDBOXD_HOOK_AGENT"), "1") == 0;
	struct err e;

	/* Pushes that did not come through sandboxd (an operator on the host) are not ours. */
	if (!getenv("SANDBOXD_HOOK_REPO"))
		return 0;
	name = argc > 0 && argv[0] ? argv[0] : "";
	if (strrchr(name, '/'))
		name = strrchr(name, '/') + 1;
	if (!strcmp(name, "post-receive")) {
		if ((n = read_updates(u, ns)) > 0)
			report("updated", u, n);
		return 0;
	}
	if ((n = read_updates(u, ns)) < 0) {
		fprintf(stderr, "sandboxd: push refused: more than %d refs in one push\n", MAX_REFS);
		return 1;
	}
	git_libgit2_init();
	snprintf(default_ref, sizeof(default_ref), "refs/heads/%s",
		 env("SANDBOXD_HOOK_DEFAULT_BRANCH"));
	if (policy_parse_json(env("SANDBOXD_HOOK_POLICIES"), &policies, &e)) {
		fprintf(stderr, "sandboxd: bad ref policies: %s\n", e.msg);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		check_ref(&u[i], i, &policies, ns[0] ? "" : default_ref, agent);
		if (u[i].reason) {
			fprintf(stderr, "sandboxd: %s\n", u[i].reason);
			refused++;
		}
	}
	/* Scanning is the expensive part: only a push that passed the ref checks needs it. */
	if (!refused && scan_push(u, n, scan_msg, sizeof(scan_msg))) {
		fprintf(stderr, "sandboxd: %s\n", scan_msg);
		refused = n;
	}
	if (audit(u, n, scan_msg[0] ? scan_msg : refused ? "another ref of this push was refused"
							 : NULL))
		refused = n ? n : 1;
	if (!refused)
		report("accepted", u, n);
	git_libgit2_shutdown();
	return refused ? 1 : 0;
}
