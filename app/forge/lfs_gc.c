/* lfs_gc.c: the reaper's collection of LFS objects no ref points at (lfs_store.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <git2.h>
#include "sandboxd/forge/lfs_store.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/proto/lfs.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

#define CANDIDATES_MAX 10000    /* objects one pass looks at (the next pass takes the rest) */

/* The objects of one repository past their grace, sorted by oid. */
struct cand {
	char oid[LFS_OID_LEN + 1];
	int seen;
};

/* A set of object ids (trees and blobs already read), open addressing. */
struct oidset {
	git_oid *v;
	unsigned char *used;
	size_t cap, n;
};

static size_t slot(const git_oid *id, size_t cap)
{
	size_t h;

	memcpy(&h, id->id, sizeof(h));
	return h & (cap - 1);
}

/* 1 when id was added, 0 when it was there, -1 out of memory. */
static int oidset_add(struct oidset *s, const git_oid *id)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct oidset g = { .cap = s->cap ? 2 * s->cap : 1024 };

		if (!(g.v = malloc(g.cap * sizeof(*g.v))) || !(g.used = calloc(g.cap, 1))) {
			free(g.v);
			return -1;
		}
		for (i = 0; i < s->cap; i++)
			if (s->used[i])
				(void)oidset_add(&g, &s->v[i]);
		free(s->v);
		free(s->used);
		*s = g;
	}
	for (i = slot(id, s->cap); s->used[i]; i = (i + 1) & (s->cap - 1))
		if (git_oid_equal(&s->v[i], id))
			return 0;
	s->used[i] = 1;
	s->v[i] = *id;
	s->n++;
	return 1;
}

struct walk {
	git_repository *g;
	git_odb *odb;
	struct oidset seen;
	struct cand *c;
	size_t n, left;     /* candidates, and how many are not seen yet */
};

static int by_oid(const void *a, const void *b)
{
	return strcmp(((const struct cand *)a)->oid, ((const struct cand *)b)->oid);
}

/* A blob: when small, is it a pointer to a candidate? 0, or -1 when it cannot be read. */
static int blob(struct walk *w, const git_oid *id)
{
	size_t len;
	git_object_t type;
	git_blob *b;
	struct cand key, *hit;
	int added = oidset_add(&w->seen, id);

	if (added <= 0)
		return added;
	if (git_odb_read_header(&len, &type, w->odb, id) < 0)
		return -1;
	if (len >= LFS_POINTER_MAX)
		return 0;
	if (git_blob_lookup(&b, w->g, id) < 0)
		return -1;
	if (lfs_pointer_oid(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b), key.oid) &&
	    (hit = bsearch(&key, w->c, w->n, sizeof(*w->c), by_oid)) && !hit->seen) {
		hit->seen = 1;
		w->left--;
	}
	git_blob_free(b);
	return 0;
}

/* Every blob under a tree not read before. 0, or -1. */
static int tree(struct walk *w, const git_oid *id)
{
	git_tree *t;
	int rc = oidset_add(&w->seen, id);

	if (rc <= 0)
		return rc;
	if (git_tree_lookup(&t, w->g, id) < 0)
		return -1;
	rc = 0;
	for (size_t i = 0; rc == 0 && w->left && i < git_tree_entrycount(t); i++) {
		const git_tree_entry *en = git_tree_entry_byindex(t, i);

		if (git_tree_entry_type(en) == GIT_OBJECT_TREE)
			rc = tree(w, git_tree_entry_id(en));
		else if (git_tree_entry_type(en) == GIT_OBJECT_BLOB)
			rc = blob(w, git_tree_entry_id(en));
		/* GIT_OBJECT_COMMIT: a submodule, another repository's. */
	}
	git_tree_free(t);
	return rc;
}

/* What one ref reaches: its commits go to the walk; a ref (or tag) to a tree or a blob is
 * read at once. 0, or -1. */
static int ref_target(struct walk *w, git_revwalk *rw, git_reference *ref)
{
	git_reference *res = NULL;
	git_object *o = NULL, *p = NULL;
	int rc = -1;

	if (git_reference_resolve(&res, ref) < 0 ||
	    git_object_lookup(&o, w->g, git_reference_target(res), GIT_OBJECT_ANY) < 0)
		goto out;
	if (git_object_peel(&p, o, GIT_OBJECT_COMMIT) == 0)
		rc = git_revwalk_push(rw, git_object_id(p)) < 0 ? -1 : 0;
	else if (git_object_peel(&p, o, GIT_OBJECT_TREE) == 0)
		rc = tree(w, git_object_id(p));
	else if (git_object_peel(&p, o, GIT_OBJECT_BLOB) == 0)
		rc = blob(w, git_object_id(p));
out:
	git_object_free(p);
	git_object_free(o);
	git_reference_free(res);
	return rc;
}

/* Marks the candidates some ref reaches. 0, or -1 when anything could not be read. */
static int mark(struct walk *w, const char *dir)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	git_revwalk *rw = NULL;
	git_oid id;
	int rc = -1, next;

	if (git_repository_open_bare(&w->g, dir) < 0 || git_repository_odb(&w->odb, w->g) < 0 ||
	    git_revwalk_new(&rw, w->g) < 0 || git_reference_iterator_new(&it, w->g) < 0)
		goto out;
	rc = 0;
	while (rc == 0 && (next = git_reference_next(&ref, it)) == 0) {
		rc = ref_target(w, rw, ref);
		git_reference_free(ref);
	}
	if (rc == 0 && next != GIT_ITEROVER)
		rc = -1;
	while (rc == 0 && w->left && (next = git_revwalk_next(&id, rw)) == 0) {
		git_commit *c;

		if (git_commit_lookup(&c, w->g, &id) < 0) {
			rc = -1;
			break;
		}
		rc = tree(w, git_commit_tree_id(c));
		git_commit_free(c);
	}
	if (rc == 0 && w->left && next != GIT_ITEROVER)
		rc = -1;
out:
	git_reference_iterator_free(it);
	git_revwalk_free(rw);
	git_odb_free(w->odb);
	git_repository_free(w->g);
	free(w->seen.v);
	free(w->seen.used);
	return rc;
}

static void collect_audit(struct db *db, const char *full, const char *oid, const char *size)
{
	struct err e;
	json_object *d = json_object_new_object();

	json_add_str(d, "oid", oid);
	json_add_int(d, "size", strtoll(size, NULL, 10));
	if (db_run(db, &e,
		   "INSERT INTO audit_log (action, status, repository, via, details)"
		   " VALUES ('" LFS_COLLECT_ACTION "', 200, $1, 'reaper', $2)",
		   2, full, json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN)))
		log_warn("reaper: audit of the collected LFS object %s in %s: %s", oid, full, e.msg);
	json_object_put(d);
}

/* One candidate: kept (referenced now) or collected (row, then file). 1 when collected. */
static int settle(struct db *db, const char *repo_id, const char *full, const char *dir,
		  const struct cand *c, const char *grace)
{
	struct err e;
	char path[4096];
	PGresult *res;
	int code = 0, n;

	if (c->seen) {
		if (db_run(db, &e, "UPDATE lfs_objects SET referenced_at = now()"
			   " WHERE repository_id = $1 AND oid = $2", 2, repo_id, c->oid))
			log_warn("reaper: LFS object %s in %s: %s", c->oid, full, e.msg);
		return 0;
	}
	/* Still past its grace: an upload of it in between (uploaded_at = now) keeps it. */
	res = db_exec(db, &e, &code,
		      "DELETE FROM lfs_objects WHERE repository_id = $1 AND oid = $2"
		      "   AND uploaded_at < now() - make_interval(secs => $3::int)"
		      "   AND (referenced_at IS NULL"
		      "        OR referenced_at < now() - make_interval(secs => $3::int))"
		      " RETURNING size", 3, repo_id, c->oid, grace);
	if (!res) {
		log_warn("reaper: LFS object %s in %s: %s", c->oid, full, e.msg);
		return 0;
	}
	n = PQntuples(res);
	if (n && lfs_object_path(path, sizeof(path), dir, c->oid) == 0 && unlink(path) &&
	    errno != ENOENT)
		log_warn("reaper: cannot remove %s: %m", path);
	if (n) {
		log_info("reaper: LFS object %s of %s collected (no ref points at it)", c->oid, full);
		collect_audit(db, full, c->oid, db_val(res, 0, 0));
	}
	PQclear(res);
	return n > 0;
}

/* The candidates rows[from, to) of one repository. The number collected. */
static int repo_pass(const struct config *cfg, struct db *db, PGresult *rows, int from,
		     int to, const char *grace)
{
	struct walk w = { .n = (size_t)(to - from) };
	char full[160], *dir;
	int collected = 0;

	snprintf(full, sizeof(full), "%s/%s", db_val(rows, from, 1), db_val(rows, from, 2));
	if (!(w.c = calloc(w.n, sizeof(*w.c))) ||
	    !(dir = repo_path(cfg->repos_dir, db_val(rows, from, 1), db_val(rows, from, 2)))) {
		free(w.c);
		return 0;
	}
	for (int i = from; i < to; i++)
		snprintf(w.c[i - from].oid, sizeof(w.c[0].oid), "%s", db_val(rows, i, 3));
	qsort(w.c, w.n, sizeof(*w.c), by_oid);
	w.left = w.n;
	if (mark(&w, dir))
		log_warn("reaper: cannot read every ref's objects in %s: no LFS object collected "
			 "there (%s)", full, git_error_last() ? git_error_last()->message : "?");
	else
		for (size_t i = 0; i < w.n; i++)
			collected += settle(db, db_val(rows, from, 0), full, dir, &w.c[i], grace);
	free(dir);
	free(w.c);
	return collected;
}

int lfs_collect(const struct config *cfg, struct db *db, struct err *e)
{
	char grace[16], limit[16];
	int code = 0, n = 0, from = 0, rows;
	PGresult *res;

	snprintf(grace, sizeof(grace), "%d", cfg->lfs_grace);
	snprintf(limit, sizeof(limit), "%d", CANDIDATES_MAX);
	res = db_exec(db, e, &code,
		      "SELECT o.repository_id, a.login, r.name, o.oid FROM lfs_objects o"
		      "  JOIN repositories r ON r.id = o.repository_id"
		      "  JOIN accounts a ON a.id = r.owner_id"
		      " WHERE o.uploaded_at < now() - make_interval(secs => $1::int)"
		      "   AND (o.referenced_at IS NULL"
		      "        OR o.referenced_at < now() - make_interval(secs => $1::int))"
		      " ORDER BY o.repository_id, o.oid LIMIT $2::int", 2, grace, limit);
	if (!res)
		return code;
	rows = PQntuples(res);
	for (int i = 1; i <= rows; i++)
		if (i == rows || strcmp(db_val(res, i, 0), db_val(res, from, 0))) {
			n += repo_pass(cfg, db, res, from, i, grace);
			from = i;
		}
	PQclear(res);
	return n;
}
