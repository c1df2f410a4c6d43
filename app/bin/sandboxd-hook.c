/* sandboxd-hook: the pre-receive and post-receive hooks of every hosted repository
 * (installed through core.hooksPath in http-backend's environment, never as a file in a
 * repository; one binary, told apart by the name it runs under).
 *
 * pre-receive, for each ref in the push, in order: the ephemeral namespace prefix is put
 * back on the name, the ref policies decide (first match), branch protection guards the
 * default branch, and the new blobs are scanned for secrets. One refused ref refuses the
 * whole push; every ref gets an audit row. git prints what we write to stderr as
 * "remote: …" lines. post-receive only reports which refs landed (pushreport.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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
#include "sandboxd/packread.h"
#include "sandboxd/policy.h"
#include "sandboxd/pushreport.h"
#include "sandboxd/scan.h"
#include "sandboxd/banned.h"

#define MAX_REFS PUSH_REFS_MAX
/* New commits in one push that push protection walks; past them the push is refused. */
#define MAX_COMMITS 1000000
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

/* The oids already scanned in this push (blobs) or walked (trees): each is read once,
 * however many commits, paths or refs point at it. Open addressing, grown at half full. */
struct oidset {
	git_oid *slot;
	size_t cap, n;
};

static int oid_is_zero(const git_oid *o)
{
	static const git_oid zero;
	return git_oid_cmp(o, &zero) == 0;
}

static size_t oid_hash(const git_oid *o, size_t cap)
{
	size_t h;

	memcpy(&h, o->id, sizeof(h));  /* an oid's bytes are already uniform */
	return h & (cap - 1);
}

/* 1 when o was added now, 0 when it was there already, -1 out of memory. */
static int oidset_add(struct oidset *s, const git_oid *o)
{
	size_t i;

	if (s->n * 2 >= s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		git_oid *slot;

		if (cap > SIZE_MAX / sizeof(*slot) || !(slot = calloc(cap, sizeof(*slot))))
			return -1;
		for (size_t k = 0; k < s->cap; k++) {
			if (oid_is_zero(&s->slot[k]))
				continue;
			for (i = oid_hash(&s->slot[k], cap); !oid_is_zero(&slot[i]); i = (i + 1) & (cap - 1))
				;
			slot[i] = s->slot[k];
		}
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
	}
	for (i = oid_hash(o, s->cap); !oid_is_zero(&s->slot[i]); i = (i + 1) & (s->cap - 1))
		if (git_oid_equal(&s->slot[i], o))
			return 0;
	s->slot[i] = *o;
	s->n++;
	return 1;
}

/* A blob to scan, and what to name in the refusal. */
struct job {
	git_oid id;
	char *path;                     /* malloc'd */
	char where[GIT_OID_HEXSZ + 1];  /* the commit that adds it, or "" */
	const char *ref;                /* else the ref that points at it */
};

struct scan {
	git_repository *repo;
	struct oidset seen;
	struct job *jobs;
	size_t njobs, cap;
	char *msg;
	size_t msgsz;
	int found;         /* 1: refuse, msg says why (a secret, or what could not be read) */
	const char *ref;   /* for a tree or blob a ref points at directly: that ref */
	char where[GIT_OID_HEXSZ + 1];  /* the commit being scanned, or "" */
};

/* The blobs are read and scanned by SCAN_THREADS_MAX threads at most: git waits for the
 * hook with the push received, so the machine's cores are otherwise idle, and inflating
 * the blobs is most of the hook's time. Each thread opens its own repository (libgit2's
 * rule for threads); the refusal names the first secret in walk order, as one thread
 * would. */
#define SCAN_THREADS_MAX 4
#define SCAN_THREADS_MIN_JOBS 64

/* Blobs stored whole in the push's pack are inflated by packread (libdeflate), the rest
 * by libgit2; a blob larger than this goes through libgit2 as well. */
#define FAST_BLOB_MAX ((size_t)1 << 30)

struct scan_pool {
	struct scan *s;
	struct packread *packs;    /* the pushed objects' packs (packread.h) */
	atomic_size_t next;
	atomic_size_t best;        /* the lowest job index with a finding, or SIZE_MAX */
	pthread_mutex_t mu;
	struct scan_hit hit;       /* best's secret, or */
	char err[200];             /* best's read error */
};

static void pool_record(struct scan_pool *p, size_t i, const struct scan_hit *hit,
			const char *err)
{
	pthread_mutex_lock(&p->mu);
	if (i < atomic_load(&p->best)) {
		atomic_store(&p->best, i);
		if (hit)
			p->hit = *hit;
		snprintf(p->err, sizeof(p->err), "%s", err ? err : "");
	}
	pthread_mutex_unlock(&p->mu);
}

/* Scans job i's blob: read from the pack by packread when it can, else by libgit2 (a
 * delta, a loose object, an object already in the repository). 0, or -1 when the blob
 * could not be read (recorded: the push is refused). */
static int scan_one(struct scan_pool *p, git_odb *odb, struct libdeflate_decompressor *d,
		    size_t i)
{
	git_odb_object *obj = NULL;
	unsigned char *data = NULL;
	size_t len = 0;
	struct scan_hit hit;
	int found;

	if (d && packread_blob(p->packs, d, p->s->jobs[i].id.id, FAST_BLOB_MAX, &data, &len)) {
		free(data);
		data = NULL;
	}
	if (!data && git_odb_read(&obj, odb, &p->s->jobs[i].id) < 0) {
		pool_record(p, i, NULL, "cannot read a blob to scan it");
		return -1;
	}
	found = data ? scan_buffer(data, len, &hit)
		     : scan_buffer(git_odb_object_data(obj), git_odb_object_size(obj), &hit);
	if (found)
		pool_record(p, i, &hit, NULL);
	free(data);
	git_odb_object_free(obj);
	return 0;
}

static void *pool_work(void *arg)
{
	struct scan_pool *p = arg;
	git_repository *repo = NULL;
	git_odb *odb = NULL;
	/* NULL (out of memory) only means every blob is read by libgit2. */
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	size_t i;

	if (git_repository_open_ext(&repo, NULL, GIT_REPOSITORY_OPEN_FROM_ENV, NULL) < 0 ||
	    git_repository_odb(&odb, repo) < 0) {
		pool_record(p, 0, NULL, "cannot open the repository to scan the push");
		goto out;
	}
	/* Each thread takes the next job; past a finding, later jobs do not matter. */
	while ((i = atomic_fetch_add(&p->next, 1)) < p->s->njobs && i < atomic_load(&p->best))
		if (scan_one(p, odb, d, i))
			break;
out:
	if (d)
		libdeflate_free_decompressor(d);
	git_odb_free(odb);
	git_repository_free(repo);
	return NULL;
}

/* The packs of the objects directory the push's objects are in: receive-pack's quarantine
 * (GIT_OBJECT_DIRECTORY in the hook's environment), else the repository's own. */
static int open_packs(struct scan *s, struct packread **out)
{
	const char *dir = getenv("GIT_OBJECT_DIRECTORY");
	char own[4096];
	struct err e;

	if (!dir || !dir[0]) {
		snprintf(own, sizeof(own), "%sobjects", git_repository_path(s->repo));
		dir = own;
	}
	return packread_open(out, dir, &e);
}

/* Scans the queued blobs; fills msg and sets found on the first finding. */
static void scan_jobs(struct scan *s)
{
	struct scan_pool p = { .s = s };
	pthread_t tid[SCAN_THREADS_MAX];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = 0, want = cpus < 1 ? 1 : cpus > SCAN_THREADS_MAX ? SCAN_THREADS_MAX : (int)cpus;
	size_t best;

	if (s->njobs == 0)
		return;
	atomic_init(&p.next, 0);
	atomic_init(&p.best, SIZE_MAX);
	pthread_mutex_init(&p.mu, NULL);
	if (s->njobs < SCAN_THREADS_MIN_JOBS)
		want = 1;
	if (open_packs(s, &p.packs)) {
		snprintf(s->msg, s->msgsz, "push refused: out of memory while scanning it");
		s->found = 1;
		return;
	}
	/* This thread is one of them; a thread that cannot start leaves its share to others. */
	for (int k = 1; k < want; k++)
		if (pthread_create(&tid[nthreads], NULL, pool_work, &p) == 0)
			nthreads++;
	pool_work(&p);
	for (int k = 0; k < nthreads; k++)
		pthread_join(tid[k], NULL);
	pthread_mutex_destroy(&p.mu);
	packread_free(p.packs);
	if ((best = atomic_load(&p.best)) == SIZE_MAX)
		return;
	s->found = 1;
	if (p.err[0]) {
		char sha[GIT_OID_HEXSZ + 1];

		git_oid_tostr(sha, sizeof(sha), &s->jobs[best].id);
		snprintf(s->msg, s->msgsz, "push refused: %s (%.12s)", p.err, sha);
	} else if (s->jobs[best].where[0]) {
		snprintf(s->msg, s->msgsz,
			 "push refused: %s found in %s (line %zu) in commit %.12s; remove it from the "
			 "history and push again", p.hit.rule, s->jobs[best].path, p.hit.line,
			 s->jobs[best].where);
	} else {
		snprintf(s->msg, s->msgsz,
			 "push refused: %s found in %s (line %zu) that %.300s points at; remove it and "
			 "push again", p.hit.rule, s->jobs[best].path, p.hit.line, s->jobs[best].ref);
	}
}

static int scan_fail(struct scan *s, const char *what, const git_oid *oid)
{
	char sha[GIT_OID_HEXSZ + 1];

	const git_error *ge = git_error_last();

	git_oid_tostr(sha, sizeof(sha), oid);
	snprintf(s->msg, s->msgsz, "push refused: cannot read %s %.12s to scan it (%s)", what, sha,
		 ge && ge->message ? ge->message : "no detail");
	s->found = 1;
	return -1;
}

/* Queues one blob for scan_jobs, once per push. path names it in the refusal. 0, or -1
 * to stop (out of memory: the push is refused). */
static int scan_blob(struct scan *s, const git_oid *id, const char *path)
{
	int added = oidset_add(&s->seen, id);
	struct job *j;

	if (added == 0)
		return 0;
	if (added > 0 && s->njobs == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct job *v = cap <= SIZE_MAX / sizeof(*v) ? realloc(s->jobs, cap * sizeof(*v)) : NULL;

		if (!v)
			added = -1;
		else
			s->jobs = v, s->cap = cap;
	}
	if (added < 0 || !(path = strdup(path))) {
		snprintf(s->msg, s->msgsz, "push refused: out of memory while scanning it");
		s->found = 1;
		return -1;
	}
	j = &s->jobs[s->njobs++];
	j->id = *id;
	j->path = (char *)path;
	j->ref = s->ref;
	snprintf(j->where, sizeof(j->where), "%s", s->where);
	return 0;
}

/* A message (commit or tag) is pushed text too: scanned with the same rules. */
static int scan_message(struct scan *s, const char *text, const char *what, const git_oid *oid)
{
	struct scan_hit hit;
	char sha[GIT_OID_HEXSZ + 1];

	if (!text || !scan_buffer((const unsigned char *)text, strlen(text), &hit))
		return 0;
	git_oid_tostr(sha, sizeof(sha), oid);
	snprintf(s->msg, s->msgsz, "push refused: %s found in the message of %s %.12s (line %zu); "
		 "rewrite it and push again", hit.rule, what, sha, hit.line);
	s->found = 1;
	return -1;
}

static int tree_cb(const char *root, const git_tree_entry *entry, void *payload)
{
	struct scan *s = payload;
	char path[4096];
	int added;

	if (git_tree_entry_type(entry) == GIT_OBJECT_TREE) {
		/* A subtree seen before holds nothing new: skip it (a positive answer). */
		if ((added = oidset_add(&s->seen, git_tree_entry_id(entry))) < 0)
			return scan_fail(s, "tree", git_tree_entry_id(entry));
		return added ? 0 : 1;
	}
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB)
		return 0;  /* a submodule's commit lives in another repository */
	snprintf(path, sizeof(path), "%s%s", root, git_tree_entry_name(entry));
	return scan_blob(s, git_tree_entry_id(entry), path);
}

/* Every blob of a tree that a ref points at directly (not through a commit). */
static int scan_tree(struct scan *s, const git_oid *id)
{
	git_tree *tree = NULL;
	int added = oidset_add(&s->seen, id), rc = 0;

	if (added <= 0)
		return added < 0 ? scan_fail(s, "tree", id) : 0;
	if (git_tree_lookup(&tree, s->repo, id) < 0)
		return scan_fail(s, "tree", id);
	if (git_tree_walk(tree, GIT_TREEWALK_PRE, tree_cb, s) < 0 && !s->found)
		rc = scan_fail(s, "tree", id);
	git_tree_free(tree);
	return s->found ? -1 : rc;
}

/* One new commit: its message, and every blob its tree has that its first parent's does
 * not (what the parent has is reachable through the parent, new or old). */
static int scan_commit(struct scan *s, const git_oid *oid)
{
	git_commit *c = NULL, *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	int rc = 0;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	/* Only the deltas are needed: never load a blob to guess whether it is binary. */
	opts.flags |= GIT_DIFF_SKIP_BINARY_CHECK;
	git_oid_tostr(s->where, sizeof(s->where), oid);
	if (git_commit_lookup(&c, s->repo, oid) < 0 || git_commit_tree(&tree, c) < 0) {
		rc = scan_fail(s, "commit", oid);
		goto out;
	}
	if ((rc = scan_message(s, git_commit_message_raw(c), "commit", oid)))
		goto out;
	/* A parent missing (a shallow boundary) or unreadable: diff against nothing, which
	 * scans the whole tree, a superset. */
	if (git_commit_parentcount(c) > 0 && git_commit_parent(&parent, c, 0) == 0 &&
	    git_commit_tree(&ptree, parent) < 0)
		ptree = NULL;
	if (git_diff_tree_to_tree(&diff, s->repo, ptree, tree, &opts) < 0) {
		rc = scan_fail(s, "commit", oid);
		goto out;
	}
	for (size_t d = 0; !rc && d < git_diff_num_deltas(diff); d++) {
		const git_diff_delta *delta = git_diff_get_delta(diff, d);

		if (delta->status == GIT_DELTA_DELETED || delta->new_file.mode == GIT_FILEMODE_COMMIT ||
		    delta->new_file.mode == GIT_FILEMODE_TREE || oid_is_zero(&delta->new_file.id))
			continue;
		rc = scan_blob(s, &delta->new_file.id, delta->new_file.path);
	}
out:
	git_diff_free(diff);
	git_tree_free(ptree);
	git_tree_free(tree);
	git_commit_free(parent);
	git_commit_free(c);
	return rc;
}

/* What a pushed value points at: through annotated tags (their messages scanned) to a
 * commit (walked below), a tree or a blob (scanned here, whole: a ref that points at one
 * directly makes all of it reachable). */
static int scan_target(struct scan *s, git_revwalk *walk, const char *ref, const git_oid *id)
{
	git_object *obj = NULL;
	int rc = 0;

	s->where[0] = 0;
	s->ref = ref;
	if (git_object_lookup(&obj, s->repo, id, GIT_OBJECT_ANY) < 0)
		return scan_fail(s, "object", id);
	for (int depth = 0; git_object_type(obj) == GIT_OBJECT_TAG; depth++) {
		git_tag *tag = (git_tag *)obj;
		git_object *target = NULL;

		if ((rc = scan_message(s, git_tag_message(tag), "tag", git_object_id(obj))))
			goto out;
		if (depth == 100 || git_tag_target(&target, tag) < 0) {
			rc = scan_fail(s, "tag", git_object_id(obj));
			goto out;
		}
		git_object_free(obj);
		obj = target;
	}
	switch (git_object_type(obj)) {
	case GIT_OBJECT_COMMIT:
		if (git_revwalk_push(walk, git_object_id(obj)) < 0)
			rc = scan_fail(s, "commit", git_object_id(obj));
		break;
	case GIT_OBJECT_TREE:
		rc = scan_tree(s, git_object_id(obj));
		break;
	case GIT_OBJECT_BLOB:
		rc = scan_blob(s, git_object_id(obj), "the blob");
		break;
	default:
		rc = scan_fail(s, "object", git_object_id(obj));
	}
out:
	git_object_free(obj);
	return rc;
}

/* Push protection (SPEC §5.4): every blob that the pushed values newly make reachable,
 * wherever it sits (this push's quarantine or the repository: a blob pushed earlier under
 * a tag, then added by a commit, is scanned again), whatever points at it. "Newly" means
 * not reachable before from refs/heads/ or refs/tags/ refs: the walk hides the commits
 * those reach, and each new commit is diffed against its first parent. Returns 1 with msg filled
 * when the push must be refused (a secret, more than MAX_COMMITS new commits, or anything
 * that could not be read: the scan fails closed). */
static int scan_push(struct update *u, int n, char *msg, size_t msgsz)
{
	struct scan s = { .msg = msg, .msgsz = msgsz };
	git_revwalk *walk = NULL;
	git_oid oid;
	size_t commits = 0;
	int rc = GIT_ITEROVER;

	if (git_repository_open_ext(&s.repo, NULL, GIT_REPOSITORY_OPEN_FROM_ENV, NULL) < 0 ||
	    git_repository_set_namespace(s.repo, NULL) < 0 || git_revwalk_new(&walk, s.repo) < 0 ||
	    git_revwalk_hide_glob(walk, "refs/heads/*") < 0 ||
	    git_revwalk_hide_glob(walk, "refs/tags/*") < 0) {
		const git_error *ge = git_error_last();

		snprintf(msg, msgsz, "push refused: cannot open the repository to scan the push (%s)",
			 ge && ge->message ? ge->message : "no detail");
		s.found = 1;
		goto out;
	}
	for (int i = 0; i < n && !s.found; i++) {
		if (!strcmp(u[i].new_, ZERO))
			continue;
		if (git_oid_fromstr(&oid, u[i].new_) < 0) {
			snprintf(msg, msgsz, "push refused: %.300s: bad object id", u[i].ref);
			s.found = 1;
			break;
		}
		scan_target(&s, walk, u[i].ref, &oid);
	}
	while (!s.found && (rc = git_revwalk_next(&oid, walk)) == 0) {
		if (++commits > MAX_COMMITS) {
			snprintf(msg, msgsz, "push refused: more than %d new commits in one push (the "
				 "most that push protection scans); push the history in parts",
				 MAX_COMMITS);
			s.found = 1;
			break;
		}
		scan_commit(&s, &oid);
	}
	if (!s.found && rc != GIT_ITEROVER) {
		snprintf(msg, msgsz, "push refused: cannot walk the pushed history to scan it");
		s.found = 1;
	}
	if (!s.found)
		scan_jobs(&s);
out:
	git_revwalk_free(walk);
	git_repository_free(s.repo);
	free(s.seen.slot);
	for (size_t k = 0; k < s.njobs; k++)
		free(s.jobs[k].path);
	free(s.jobs);
	return s.found;
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

/* The variables the worker sets for every push (app/githttp.c); an empty value is a
 * value ("no policies", "no namespace"), a missing one means the environment was cut. */
static const char *const required_env[] = {
	"SANDBOXD_DATABASE_URL", "SANDBOXD_HOOK_REPO", "SANDBOXD_HOOK_REPO_ID",
	"SANDBOXD_HOOK_DEFAULT_BRANCH", "SANDBOXD_HOOK_LOGIN", "SANDBOXD_HOOK_ACCOUNT_ID",
	"SANDBOXD_HOOK_AGENT", "SANDBOXD_HOOK_TOKEN_ID", "SANDBOXD_HOOK_TOKEN_KIND",
	"SANDBOXD_HOOK_POLICIES", "SANDBOXD_HOOK_REQUEST_ID", "SANDBOXD_HOOK_NAMESPACE",
	"SANDBOXD_HOOK_REPORT_FD",
};

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
	int refused = 0;
	struct err e;

	snprintf(default_ref, sizeof(default_ref), "refs/heads/%s",
		 env("SANDBOXD_HOOK_DEFAULT_BRANCH"));
	if (policy_parse_json(env("SANDBOXD_HOOK_POLICIES"), &policies, &e)) {
		fprintf(stderr, "sandboxd: bad ref policies: %s\n", e.msg);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(u[i].ref);

		/* Before any check that reads the name: a policy must never see a cut one. */
		if (len > REF_NAME_MAX) {
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
	if (!refused && scan_push(u, n, scan_msg, sizeof(scan_msg))) {
		fprintf(stderr, "sandboxd: %s\n", scan_msg);
		refused = n;
	}
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

	/* Pushes that did not come through sandboxd (an operator on the host) are not ours. */
	if (!through_sandboxd())
		return 0;
	name = argc > 0 && argv[0] ? argv[0] : "";
	if (strrchr(name, '/'))
		name = strrchr(name, '/') + 1;
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
