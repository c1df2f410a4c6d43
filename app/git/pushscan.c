/* pushscan.c: push protection (SPEC §5 item 4): the secrets scan of what a push or a merge
 * newly makes reachable, for the pre-receive hook and the REST merge alike. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <git2.h>
#include "sandboxd/common/err.h"
#include "sandboxd/git/packread.h"
#include "sandboxd/git/pushscan.h"
#include "sandboxd/proto/scan.h"
#include "sandboxd/proto/valscan.h"
#include "sandboxd/common/banned.h"

#define ZERO "0000000000000000000000000000000000000000"

/* The repository at path, or (NULL) the one the hook's environment names (GIT_DIR, and the
 * push's quarantine through GIT_OBJECT_DIRECTORY). */
static int open_repo(git_repository **out, const char *path)
{
	if (path)
		return git_repository_open_bare(out, path);
	return git_repository_open_ext(out, NULL, GIT_REPOSITORY_OPEN_FROM_ENV, NULL);
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
	int rules_done;                 /* scan.h's rules found it clean as the pack streamed in */
};

struct scan {
	const char *path;  /* the bare repository, or NULL: the hook's environment */
	const struct pushscan_scanned *scanned;  /* blobs scanned as the pack streamed in */
	const struct valscan *values;  /* the pushing sandbox's secrets, or NULL */
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
	const struct job *job = &p->s->jobs[i];
	const struct valscan *values = p->s->values;
	const unsigned char *bytes;
	struct scan_hit hit;
	int found = 0;

	if (d && packread_blob(p->packs, d, p->s->jobs[i].id.id, FAST_BLOB_MAX, &data, &len)) {
		free(data);
		data = NULL;
	}
	if (!data && git_odb_read(&obj, odb, &p->s->jobs[i].id) < 0) {
		pool_record(p, i, NULL, "cannot read a blob to scan it");
		return -1;
	}
	bytes = data ? data : git_odb_object_data(obj);
	len = data ? len : git_odb_object_size(obj);
	/* The sandbox's own secret first: the refusal names it rather than a format. */
	if (values)
		found = valscan_find(values, bytes, len, &hit);
	if (!found && !job->rules_done)
		found = scan_buffer(bytes, len, &hit);
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

	if (open_repo(&repo, p->s->path) < 0 || git_repository_odb(&odb, repo) < 0) {
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
	const char *dir = s->path ? NULL : getenv("GIT_OBJECT_DIRECTORY");
	char own[4096];
	struct err e;

	if (!dir || !dir[0]) {
		snprintf(own, sizeof(own), "%sobjects", git_repository_path(s->repo));
		dir = own;
	}
	return packread_open(out, dir, &e);
}

static int by_offset(const void *key, const void *elem)
{
	uint64_t k = *(const uint64_t *)key, o = ((const struct packscan_blob *)elem)->offset;

	return k < o ? -1 : k > o;
}

/* 1 when job's blob was scanned clean as the pack streamed in: its entry in the
 * quarantine's pack is the one reported, the same offset, size and CRC-32 of its bytes. */
static int scanned_before(const struct scan *s, const struct packread *packs,
			  const struct job *job)
{
	const struct packscan_blob *b;
	uint64_t offset, size;
	uint32_t crc;

	if (packread_where(packs, job->id.id, &offset, &size, &crc))
		return 0;
	b = bsearch(&offset, s->scanned->blob, s->scanned->n, sizeof(*b), by_offset);
	return b && b->size == size && b->crc == crc;
}

/* Drops the jobs whose blobs were scanned already, keeping the others in walk order. The
 * scanner knew the rules, not a sandbox's values: with values to look for, such a blob is
 * read again, for them alone. */
static void drop_scanned(struct scan *s, const struct packread *packs)
{
	size_t kept = 0;

	if (!s->scanned || !s->scanned->n)
		return;
	for (size_t i = 0; i < s->njobs; i++) {
		int before = scanned_before(s, packs, &s->jobs[i]);

		if (before && !s->values) {
			free(s->jobs[i].path);
			continue;
		}
		s->jobs[i].rules_done = before;
		s->jobs[kept++] = s->jobs[i];
	}
	s->njobs = kept;
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
	if (open_packs(s, &p.packs)) {
		snprintf(s->msg, s->msgsz, "push refused: out of memory while scanning it");
		s->found = 1;
		return;
	}
	drop_scanned(s, p.packs);
	if (s->njobs == 0) {
		packread_free(p.packs);
		return;
	}
	atomic_init(&p.next, 0);
	atomic_init(&p.best, SIZE_MAX);
	pthread_mutex_init(&p.mu, NULL);
	if (s->njobs < SCAN_THREADS_MIN_JOBS)
		want = 1;
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
	j->rules_done = 0;
	snprintf(j->where, sizeof(j->where), "%s", s->where);
	return 0;
}

/* A sandbox's value anywhere in a commit or a tag object: its header (author, committer,
 * tagger, a tag's name) as much as its message. */
static int scan_object_values(struct scan *s, const git_oid *oid, const char *what)
{
	git_odb *odb = NULL;
	git_odb_object *obj = NULL;
	struct scan_hit hit;
	char sha[GIT_OID_HEXSZ + 1];
	int found;

	if (!s->values)
		return 0;
	if (git_repository_odb(&odb, s->repo) < 0 || git_odb_read(&obj, odb, oid) < 0) {
		git_odb_free(odb);
		return scan_fail(s, what, oid);
	}
	found = valscan_find(s->values, git_odb_object_data(obj), git_odb_object_size(obj), &hit);
	git_odb_object_free(obj);
	git_odb_free(odb);
	if (!found)
		return 0;
	git_oid_tostr(sha, sizeof(sha), oid);
	snprintf(s->msg, s->msgsz, "push refused: %s found in %s %.12s (its header or message, "
		 "line %zu); rewrite it and push again", hit.rule, what, sha, hit.line);
	s->found = 1;
	return -1;
}

/* A message (commit or tag) is pushed text too: scanned with the same rules. */
static int scan_message(struct scan *s, const char *text, const char *what, const git_oid *oid)
{
	struct scan_hit hit;
	char sha[GIT_OID_HEXSZ + 1];

	if (scan_object_values(s, oid, what))
		return -1;
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
 * when the push must be refused (a secret, more than PUSHSCAN_COMMITS_MAX new commits, or anything
 * that could not be read: the scan fails closed). */
int pushscan_run(const char *path, const struct pushscan_ref *u, size_t n,
		 const struct pushscan_scanned *scanned, const struct valscan *values, char *msg,
		 size_t msgsz)
{
	struct scan s = { .path = path, .scanned = scanned, .msg = msg, .msgsz = msgsz };

	/* An empty set finds nothing: no reason to read what the scanner found clean. */
	s.values = values && values->nforms ? values : NULL;
	git_revwalk *walk = NULL;
	git_oid oid;
	size_t commits = 0;
	int rc = GIT_ITEROVER;

	if (open_repo(&s.repo, path) < 0 ||
	    git_repository_set_namespace(s.repo, NULL) < 0 || git_revwalk_new(&walk, s.repo) < 0 ||
	    git_revwalk_hide_glob(walk, "refs/heads/*") < 0 ||
	    git_revwalk_hide_glob(walk, "refs/tags/*") < 0) {
		const git_error *ge = git_error_last();

		snprintf(msg, msgsz, "push refused: cannot open the repository to scan the push (%s)",
			 ge && ge->message ? ge->message : "no detail");
		s.found = 1;
		goto out;
	}
	for (size_t i = 0; i < n && !s.found; i++) {
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
		if (++commits > PUSHSCAN_COMMITS_MAX) {
			snprintf(msg, msgsz, "push refused: more than %d new commits in one push (the "
				 "most that push protection scans); push the history in parts",
				 PUSHSCAN_COMMITS_MAX);
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

