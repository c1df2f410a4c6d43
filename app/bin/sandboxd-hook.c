/* sandboxd-hook: the pre-receive and post-receive hooks of every hosted repository
 * (installed through core.hooksPath in http-backend's environment, never as a file in a
 * repository; one binary, told apart by the name it runs under).
 *
 * pre-receive, for each ref in the push, in order: the ephemeral namespace prefix is put
 * back on the name, the ref policies decide (first match), branch protection guards the
 * default branch, and the new blobs are scanned for secrets (and, for a push from a sandbox,
 * for the values of its secrets: valscan.h, read from the descriptor the worker names in
 * SANDBOXD_HOOK_VALUES; a ref whose name holds one is refused too). One refused ref refuses the
 * whole push; every ref gets an audit row. git prints what we write to stderr as
 * "remote: …" lines. post-receive only reports which refs landed (pushreport.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <git2.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include "sandboxd/core/audit.h"
#include "sandboxd/core/db.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/policy.h"
#include "sandboxd/proto/pushreport.h"
#include "sandboxd/git/pushscan.h"
#include "sandboxd/git/streamscan.h"
#include "sandboxd/proto/valscan.h"
#include "sandboxd/common/banned.h"

#define MAX_REFS PUSH_REFS_MAX
#define ZERO "0000000000000000000000000000000000000000"

/* The longest full ref name (namespace prefix included) a push may create or update: git
 * itself sets none below its pkt-line limit (65516 bytes), and our policies, audit rows and
 * reports need one. Longer names are refused, and audited whole. */
#define REF_NAME_MAX 1023

struct update {
	char old[GIT_OID_HEXSZ + 1];
	char new_[GIT_OID_HEXSZ + 1];
	char *ref;             /* the full stored name (namespace prefix put back), malloc'd */
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

static int ff_of(void *arg)
{
	const struct update *u = arg;
	return fast_forward(u->old, u->new_);
}

/* Ref policies and branch protection for one update: the rules policy_push_refused keeps
 * for every door that changes refs (the REST routes too). */
static void check_ref(struct update *u, int i, const struct policy_list *policies,
		      const char *default_ref, int agent)
{
	struct policy_push p = {
		.policies = policies, .ref = u->ref, .default_ref = default_ref, .agent = agent,
		.creating = strcmp(u->old, ZERO) == 0, .deleting = strcmp(u->new_, ZERO) == 0,
		.fast_forward = ff_of, .arg = u,
	};

	if (policy_push_refused(&p, reasons[i], sizeof(reasons[i])))
		u->reason = reasons[i];
}

/* The most the values' descriptor may hold: 16 lines of a 128-byte name and 4096 bytes in
 * hex, with room to spare. */
#define VALUES_MAX ((size_t)256 << 10)

/* The secrets of the sandbox that pushes (valscan.h), from the descriptor that
 * SANDBOXD_HOOK_VALUES names ("": not a sandbox's push, or one without secrets). 0 with v
 * filled (empty for none); 1 with msg filled when they cannot be read: the push is refused,
 * never scanned without them. */
static int read_values(struct valscan *v, char *msg, size_t msgsz)
{
	const char *spec = env("SANDBOXD_HOOK_VALUES");
	char *text;
	size_t len = 0;
	ssize_t got = 1;
	struct err e = { .msg = "" };
	int rc;

	valscan_init(v);
	if (!spec[0])
		return 0;
	if (strcmp(spec, "6") || !(text = malloc(VALUES_MAX))) {
		snprintf(msg, msgsz, "push refused: the sandbox's secrets could not be read to scan "
			 "the push (an internal error; nothing was changed)");
		return 1;
	}
	/* From its start: the worker wrote it and left the offset at 0, but say so. */
	if (lseek(6, 0, SEEK_SET) < 0)
		got = -1;
	while (got > 0 && len < VALUES_MAX)
		if ((got = read(6, text + len, VALUES_MAX - len)) > 0)
			len += (size_t)got;
		else if (got < 0 && errno == EINTR)
			got = 1;
	close(6);
	rc = got < 0 || len == VALUES_MAX ? ERR_INVALID : valscan_decode(v, text, len, &e);
	explicit_bzero(text, VALUES_MAX);
	free(text);
	if (rc) {
		valscan_free(v);
		snprintf(msg, msgsz, "push refused: the sandbox's secrets could not be read to scan "
			 "the push (an internal error; nothing was changed)%s%s", e.msg[0] ? ": " : "",
			 e.msg);
		return 1;
	}
	return 0;
}

/* A ref whose name holds a value of the sandbox's secrets is refused, and its name is kept
 * out of the audit row and of what git prints: it becomes REF_WITHHELD, in place (a name
 * that holds a value of 8 bytes or more is longer). */
#define REF_WITHHELD "(withheld)"
static void check_ref_names(struct update *u, int n, const struct valscan *v)
{
	struct scan_hit hit;

	for (int i = 0; i < n; i++) {
		if (!valscan_find(v, u[i].ref, strlen(u[i].ref), &hit))
			continue;
		snprintf(reasons[i], sizeof(reasons[i]), "push refused: %s found in the name of a ref "
			 "(withheld here); push it under another name", hit.rule);
		u[i].reason = reasons[i];
		explicit_bzero(u[i].ref, strlen(u[i].ref));
		memcpy(u[i].ref, REF_WITHHELD, sizeof(REF_WITHHELD));
	}
}

/* Push protection (pushscan.h) over the updates, in the repository of the hook's
 * environment (the push's quarantine included), but for the blobs the worker's scanner
 * found clean while the pack streamed in (streamscan.h), with the sandbox's values (v, maybe
 * empty). 1 with msg filled when refused. */
static int scan_push(struct update *u, int n, const struct valscan *v, char *msg, size_t msgsz)
{
	struct pushscan_ref *refs = calloc(n > 0 ? (size_t)n : 1, sizeof(*refs));
	struct pushscan_scanned scanned;
	int found, have = streamscan_collect(env("SANDBOXD_HOOK_SCANNED"), &scanned) == 0;

	if (!refs) {
		snprintf(msg, msgsz, "push refused: out of memory while scanning it");
		if (have)
			streamscan_free(&scanned);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		refs[i].ref = u[i].ref;
		refs[i].new_ = u[i].new_;
	}
	found = pushscan_run(NULL, refs, (size_t)n, have ? &scanned : NULL, v, msg, msgsz);
	free(refs);
	if (have)
		streamscan_free(&scanned);
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

/* Reads git's "old new ref" lines from stdin into u; returns how many, -1 past MAX_REFS,
 * -2 out of memory or on a line that is not "old new ref". The namespace prefix is put
 * back on each name: policies match stored names. Names are kept whole, however long. */
static int read_updates(struct update *u, const char *ns)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int n = 0;

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (n == MAX_REFS) {
			n = -1;
			break;
		}
		if ((size_t)len < 2 * GIT_OID_HEXSZ + 3 || line[GIT_OID_HEXSZ] != ' ' ||
		    line[2 * GIT_OID_HEXSZ + 1] != ' ' || strlen(line) != (size_t)len) {
			n = -2;
			break;
		}
		snprintf(u[n].old, sizeof(u[n].old), "%.*s", GIT_OID_HEXSZ, line);
		snprintf(u[n].new_, sizeof(u[n].new_), "%.*s", GIT_OID_HEXSZ, line + GIT_OID_HEXSZ + 1);
		u[n].reason = NULL;
		if (ns[0] ? asprintf(&u[n].ref, "refs/namespaces/%s/%s", ns,
				     line + 2 * GIT_OID_HEXSZ + 2) < 0
			  : !(u[n].ref = strdup(line + 2 * GIT_OID_HEXSZ + 2))) {
			u[n].ref = NULL;
			n = -2;
			break;
		}
		n++;
	}
	free(line);
	return n;
}

static void free_updates(struct update *u, int n)
{
	for (int i = 0; i < n; i++)
		free(u[i].ref);
}

/* The variables the worker sets for every push (app/http/githttp.c); an empty value is a
 * value ("no policies", "no namespace"), a missing one means the environment was cut. */
static const char *const required_env[] = {
	"SANDBOXD_DATABASE_URL", "SANDBOXD_HOOK_REPO", "SANDBOXD_HOOK_REPO_ID",
	"SANDBOXD_HOOK_DEFAULT_BRANCH", "SANDBOXD_HOOK_LOGIN", "SANDBOXD_HOOK_ACCOUNT_ID",
	"SANDBOXD_HOOK_AGENT", "SANDBOXD_HOOK_TOKEN_ID", "SANDBOXD_HOOK_TOKEN_KIND",
	"SANDBOXD_HOOK_POLICIES", "SANDBOXD_HOOK_REQUEST_ID", "SANDBOXD_HOOK_NAMESPACE",
	"SANDBOXD_HOOK_REPORT_FD", "SANDBOXD_HOOK_VALUES",
};
/* Not among them: SANDBOXD_HOOK_SCANNED (streamscan.h), whose absence drops no check, only
 * the blobs the hook may skip. */

/* 1 when this push came through sandboxd: http-backend's root or any of the hook's own
 * variables is there. An operator pushing on the host has none of them (SANDBOXD_URL and
 * the like from var/local.env do not count). */
static int through_sandboxd(void)
{
	extern char **environ;

	if (getenv("GIT_PROJECT_ROOT"))
		return 1;
	for (char **v = environ; v && *v; v++)
		if (!strncmp(*v, "SANDBOXD_HOOK_", 14))
			return 1;
	return 0;
}

/* The ref checks of every update, then the scan and the audit rows: 0 when the push is
 * accepted. n updates are in u. */
static int check_push(struct update *u, int n, const char *ns, int agent)
{
	struct policy_list policies;
	char default_ref[300], scan_msg[1024] = "";
	struct valscan values;
	int refused = 0;
	struct err e;

	snprintf(default_ref, sizeof(default_ref), "refs/heads/%s",
		 env("SANDBOXD_HOOK_DEFAULT_BRANCH"));
	if (policy_parse_json(env("SANDBOXD_HOOK_POLICIES"), &policies, &e)) {
		fprintf(stderr, "sandboxd: bad ref policies: %s\n", e.msg);
		return 1;
	}
	/* Values that cannot be read refuse the push whole, as a failed scan does. */
	if (read_values(&values, scan_msg, sizeof(scan_msg))) {
		fprintf(stderr, "sandboxd: %s\n", scan_msg);
		refused = n;
	}
	check_ref_names(u, n, &values);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(u[i].ref);

		if (u[i].reason) {
			/* Its name holds a secret (check_ref_names): refused already. */
		} else if (len > REF_NAME_MAX) {
			/* Before any check that reads the name: a policy must never see a cut one. */
			snprintf(reasons[i], sizeof(reasons[i]), "%.64s…: ref names are limited to %d "
				 "bytes (this one has %zu)", u[i].ref, REF_NAME_MAX, len);
			u[i].reason = reasons[i];
		} else {
			check_ref(&u[i], i, &policies, ns[0] ? "" : default_ref, agent);
		}
		if (u[i].reason) {
			fprintf(stderr, "sandboxd: %s\n", u[i].reason);
			refused++;
		}
	}
	/* Scanning is the expensive part: only a push that passed the ref checks needs it. */
	if (!refused && scan_push(u, n, &values, scan_msg, sizeof(scan_msg))) {
		fprintf(stderr, "sandboxd: %s\n", scan_msg);
		refused = n;
	}
	valscan_free(&values);
	if (audit(u, n, scan_msg[0] ? scan_msg : refused ? "another ref of this push was refused"
							 : NULL))
		refused = n ? n : 1;
	if (!refused)
		report("accepted", u, n);
	return refused ? 1 : 0;
}

/* pre-receive: 0 lets the push in. */
static int pre_receive(struct update *u, const char *ns)
{
	int n, rc, agent = strcmp(env("SANDBOXD_HOOK_AGENT"), "1") == 0;

	/* Fail closed: a push whose checks cannot all run is refused, whatever is missing. */
	for (size_t k = 0; k < sizeof(required_env) / sizeof(required_env[0]); k++)
		if (!getenv(required_env[k])) {
			fprintf(stderr, "sandboxd: push refused: %s is missing from the hook's "
				"environment (an internal error; nothing was changed)\n", required_env[k]);
			return 1;
		}
	if ((n = read_updates(u, ns)) < 0) {
		if (n == -1)
			fprintf(stderr, "sandboxd: push refused: more than %d refs in one push\n",
				MAX_REFS);
		else
			fprintf(stderr, "sandboxd: push refused: cannot read the ref updates\n");
		free_updates(u, MAX_REFS);
		return 1;
	}
	git_libgit2_init();
	/* receive-pack's index-pack has hashed every pushed object, and fsck checked them;
	 * hashing each blob again on read (libgit2's collision-detecting SHA-1) would cost as
	 * much as the scan itself. */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	rc = check_push(u, n, ns, agent);
	free_updates(u, n);
	git_libgit2_shutdown();
	return rc;
}

int main(int argc, char **argv)
{
	const char *ns = env("SANDBOXD_HOOK_NAMESPACE"), *name;
	struct update *u;
	int n, rc = 0;

	name = argc > 0 && argv[0] ? argv[0] : "";
	if (strrchr(name, '/'))
		name = strrchr(name, '/') + 1;
	/* The worker's scanner of a push as it streams in (streamscan.h), not a hook. */
	if (!strcmp(name, STREAMSCAN_NAME))
		return streamscan_serve(0, 3);
	/* Pushes that did not come through sandboxd (an operator on the host) are not ours. */
	if (!through_sandboxd())
		return 0;
	if (!(u = calloc(MAX_REFS, sizeof(*u)))) {
		fprintf(stderr, "sandboxd: push refused: out of memory\n");
		return 1;
	}
	if (!strcmp(name, "post-receive")) {
		if ((n = read_updates(u, ns)) > 0)
			report("updated", u, n);
		free_updates(u, n < 0 ? MAX_REFS : n);
	} else {
		rc = pre_receive(u, ns);
	}
	free(u);
	return rc;
}
