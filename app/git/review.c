/* review.c: branches, commits and comparisons read with libgit2 for the review routes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/git/review.h"
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

#define NS_PARAM "namespace"

int review_namespace(const char *query, int *ephemeral, struct err *e)
{
	size_t n = strlen(NS_PARAM);
	int seen = 0;

	*ephemeral = 0;
	for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		const char *v = p + n + 1, *end;
		size_t len;

		if (strncmp(p, NS_PARAM, n) || (p[n] != '=' && p[n] != '&' && p[n]))
			continue;
		if (seen++)
			return err_http(e, 422, "query 'namespace' must be given once");
		if (p[n] != '=')
			continue;  /* "namespace" alone: no value, the normal refs */
		end = strchr(v, '&');
		len = end ? (size_t)(end - v) : strlen(v);
		if (len == 0)
			continue;
		if (len != strlen("ephemeral") || strncmp(v, "ephemeral", len))
			return err_http(e, 422, "query 'namespace' must be absent or 'ephemeral'");
		*ephemeral = 1;
	}
	return 0;
}

int review_split_range(const char *range, char *base, size_t basesz, char *head,
		       size_t headsz, struct err *e)
{
	const char *dots = strstr(range, "...");
	size_t blen = dots ? (size_t)(dots - range) : 0;

	if (!dots || blen == 0 || !dots[3] || blen >= basesz ||
	    str_copy(head, headsz, dots + 3))
		return err_http(e, 422, "compare takes '{base}...{head}'");
	memcpy(base, range, blen);
	base[blen] = 0;
	return 0;
}

int review_full_ref(const char *ref, int ephemeral, char *out, size_t outsz, struct err *e)
{
	int valid = 0, w;

	if (strncmp(ref, "heads/", 6) && strncmp(ref, "tags/", 5))
		return err_http(e, 422, "ref must start with 'heads/' or 'tags/'");
	w = snprintf(out, outsz, "%srefs/%s", ephemeral ? REVIEW_NS : "", ref);
	if (w < 0 || (size_t)w >= outsz || git_reference_name_is_valid(&valid, out) < 0 || !valid)
		return err_http(e, 422, "'%.200s' is not a valid ref name", ref);
	return 0;
}

const char *review_status(size_t ahead, size_t behind)
{
	if (ahead && behind)
		return "diverged";
	if (ahead)
		return "ahead";
	return behind ? "behind" : "identical";
}

int review_is_hex(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");
	return s[n] == 0 && n >= 7 && n <= GIT_OID_HEXSZ;
}

static int git_fail(struct err *e, const char *what)
{
	const git_error *ge = git_error_last();
	return err_set(e, ERR_FAIL, "cannot %s: %s", what, ge && ge->message ? ge->message : "unknown");
}

/* s as a JSON string. JSON holds only UTF-8 and git stores bytes (a message in Latin-1, a
 * file name in anything): what is not UTF-8 is repaired as exec output is (each maximal
 * ill-formed subpart becomes U+FFFD), so that the answer stays JSON. */
static json_object *text_json(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	json_object *o;
	struct buf b;

	if (utf8_text_ok(u, n))
		return json_object_new_string_len(s, (int)n);
	buf_init(&b, n * 3 + 1);  /* at most three bytes for each one */
	if (utf8_append_repaired(&b, u, n)) {
		buf_release(&b);
		return json_object_new_string("");
	}
	o = json_object_new_string_len(b.data ? b.data : "", (int)b.len);
	buf_release(&b);
	return o;
}

static void add_text(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, text_json(s ? s : "", s ? strlen(s) : 0));
}

int review_open(git_repository **out, const char *repos_dir, const struct repo *repo,
		struct err *e)
{
	char *path = repo_path(repos_dir, repo->owner, repo->name);
	int rc = 0;

	*out = NULL;
	if (!path)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (git_repository_open_bare(out, path) < 0)
		rc = err_set(e, ERR_FAIL, "cannot open %s: %s", path,
			     git_error_last() ? git_error_last()->message : "unknown");
	free(path);
	return rc;
}

static json_object *sha_json(const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];
	json_object *o = json_object_new_object();

	json_add_str(o, "sha", git_oid_tostr(hex, sizeof(hex), id));
	return o;
}

static int by_name(const void *a, const void *b)
{
	json_object *x, *y;

	json_object_object_get_ex(*(json_object *const *)a, "name", &x);
	json_object_object_get_ex(*(json_object *const *)b, "name", &y);
	return strcmp(json_object_get_string(x), json_object_get_string(y));
}

int review_branches(json_object **out, git_repository *g, int ephemeral,
		    const char *default_branch, struct err *e)
{
	const char *prefix = ephemeral ? REVIEW_NS "refs/heads/" : "refs/heads/";
	char glob[64];
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL, *resolved = NULL;
	json_object *arr = json_object_new_array();
	int rc = 0, grc;

	*out = NULL;
	snprintf(glob, sizeof(glob), "%s*", prefix);
	if (!arr)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (git_reference_iterator_glob_new(&it, g, glob) < 0) {
		rc = git_fail(e, "list the branches");
		goto out;
	}
	while ((grc = git_reference_next(&ref, it)) == 0) {
		const char *name = git_reference_name(ref) + strlen(prefix);
		json_object *b;

		/* A symbolic branch names another: its commit is the one that one points at. */
		if (git_reference_resolve(&resolved, ref) < 0 || !git_reference_target(resolved)) {
			git_reference_free(ref);
			ref = NULL;
			continue;  /* dangling: nothing to show */
		}
		if (!(b = json_object_new_object())) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			goto out;
		}
		add_text(b, "name", name);
		json_object_object_add(b, "commit", sha_json(git_reference_target(resolved)));
		json_add_bool(b, "protected", !ephemeral && strcmp(name, default_branch) == 0);
		json_object_array_add(arr, b);
		git_reference_free(resolved);
		git_reference_free(ref);
		resolved = ref = NULL;
	}
	if (grc != GIT_ITEROVER) {
		rc = git_fail(e, "list the branches");
		goto out;
	}
	json_object_array_sort(arr, by_name);
	*out = arr;
	arr = NULL;
out:
	git_reference_free(resolved);
	git_reference_free(ref);
	git_reference_iterator_free(it);
	json_object_put(arr);
	return rc;
}

int review_resolve(git_commit **out, git_repository *g, int ephemeral, const char *spec,
		   struct err *e)
{
	static const char *const kinds[] = { "refs/heads/", "refs/tags/" };
	char name[REVIEW_REF_MAX];
	git_reference *ref = NULL;
	git_object *obj = NULL;
	git_oid id;
	int valid, grc;

	*out = NULL;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int w = snprintf(name, sizeof(name), "%s%s%s", ephemeral ? REVIEW_NS : "", kinds[k],
				 spec);

		if (w < 0 || (size_t)w >= sizeof(name) ||
		    git_reference_name_is_valid(&valid, name) < 0 || !valid)
			break;  /* no ref can have that name */
		grc = git_reference_lookup(&ref, g, name);
		if (grc == GIT_ENOTFOUND)
			continue;
		if (grc < 0)
			return git_fail(e, "read a ref");
		grc = git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT);
		git_reference_free(ref);
		if (grc < 0)
			return err_set(e, ERR_NOTFOUND, "unknown ref"); /* a tag of a tree or blob */
		*out = (git_commit *)obj;
		return 0;
	}
	if (!review_is_hex(spec) || git_oid_fromstrn(&id, spec, strlen(spec)) < 0)
		return err_set(e, ERR_NOTFOUND, "unknown ref");
	grc = git_commit_lookup_prefix(out, g, &id, strlen(spec));
	if (grc == GIT_ENOTFOUND || grc == GIT_EAMBIGUOUS || grc == GIT_EINVALIDSPEC)
		return err_set(e, ERR_NOTFOUND, "unknown ref");
	return grc < 0 ? git_fail(e, "read a commit") : 0;
}

json_object *review_signature_json(const git_signature *s)
{
	json_object *o = json_object_new_object();
	time_t t = (time_t)s->when.time;
	struct tm tm;
	char date[32] = "";

	if (gmtime_r(&t, &tm))
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	add_text(o, "name", s->name);
	add_text(o, "email", s->email);
	json_add_str(o, "date", date);
	return o;
}

json_object *review_message_json(const git_commit *c)
{
	const char *msg = git_commit_message(c) ? git_commit_message(c) : "";
	size_t len = strlen(msg);

	while (len && msg[len - 1] == '\n')
		len--;
	return text_json(msg, len);
}

/* {sha, commit: {message, author, committer}, parents: [{sha}]}. */
static json_object *commit_json(const git_commit *c)
{
	json_object *o = json_object_new_object(), *inner = json_object_new_object(),
		    *parents = json_object_new_array();
	char hex[GIT_OID_HEXSZ + 1];

	json_add_str(o, "sha", git_oid_tostr(hex, sizeof(hex), git_commit_id(c)));
	json_object_object_add(inner, "message", review_message_json(c));
	json_object_object_add(inner, "author", review_signature_json(git_commit_author(c)));
	json_object_object_add(inner, "committer", review_signature_json(git_commit_committer(c)));
	json_object_object_add(o, "commit", inner);
	for (unsigned i = 0; i < git_commit_parentcount(c); i++)
		json_object_array_add(parents, sha_json(git_commit_parent_id(c, i)));
	json_object_object_add(o, "parents", parents);
	return o;
}

static const char *delta_status(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED: return "added";
	case GIT_DELTA_DELETED: return "removed";
	case GIT_DELTA_MODIFIED: return "modified";
	case GIT_DELTA_RENAMED: return "renamed";
	case GIT_DELTA_COPIED: return "copied";
	case GIT_DELTA_TYPECHANGE: return "changed";
	default: return "unchanged";
	}
}

/* GitHub's patch: the hunks only (no file header), lines with their +, - or space. */
static int patch_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		      void *payload)
{
	struct buf *b = payload;
	char origin = l->origin;

	switch (origin) {
	case GIT_DIFF_LINE_CONTEXT:
	case GIT_DIFF_LINE_ADDITION:
	case GIT_DIFF_LINE_DELETION:
		if (buf_append(b, &origin, 1))
			return -1;
		break;
	case GIT_DIFF_LINE_HUNK_HDR:
	case GIT_DIFF_LINE_CONTEXT_EOFNL:  /* "\n\ No newline at end of file\n" */
	case GIT_DIFF_LINE_ADD_EOFNL:
	case GIT_DIFF_LINE_DEL_EOFNL:
		break;
	default:
		return 0;  /* file headers, binary markers */
	}
	return buf_append(b, l->content, l->content_len) ? -1 : 0;
}

/* The size of a blob, without reading it (0 for the zero id: a side that does not exist). */
static size_t blob_size(git_odb *odb, const git_oid *id)
{
	size_t len = 0;
	git_object_t type;

	if (git_oid_is_zero(id) || git_odb_read_header(&len, &type, odb, id) < 0)
		return 0;
	return len;
}

/* What the patch of one file is: its text in b, or why there is none. */
static const char *patch_text(git_patch *p, git_odb *odb, size_t *budget, struct buf *b)
{
	const git_diff_delta *d = git_patch_get_delta(p);

	if (blob_size(odb, &d->old_file.id) > REVIEW_BLOB_MAX ||
	    blob_size(odb, &d->new_file.id) > REVIEW_BLOB_MAX)
		return "too large";
	if (d->flags & GIT_DIFF_FLAG_BINARY)
		return "binary";
	if (git_patch_size(p, 1, 1, 0) > REVIEW_PATCH_MAX || *budget < REVIEW_PATCH_MAX)
		return "too large";
	if (git_patch_print(p, patch_line, b) < 0)
		return "too large";  /* past the buffer's bound: the size above was short */
	/* A patch goes into JSON as a string: only UTF-8 text can. */
	if (!utf8_text_ok((const unsigned char *)(b->data ? b->data : ""), b->len))
		return "binary";
	if (b->len && b->data[b->len - 1] == '\n')
		b->data[--b->len] = 0;  /* GitHub's patch has no newline at its end */
	*budget -= b->len;
	return NULL;
}

/* One file of a diff. */
static int file_json(json_object *files, git_diff *diff, size_t i, git_odb *odb,
		     size_t *budget, struct err *e)
{
	git_patch *p = NULL;
	const git_diff_delta *d;
	size_t ctx = 0, adds = 0, dels = 0;
	struct buf b;
	const char *omitted;
	json_object *f;

	if (git_patch_from_diff(&p, diff, i) < 0)
		return git_fail(e, "diff a file");
	/* No patch object (libgit2 makes none for some deltas): the file without its text. */
	d = p ? git_patch_get_delta(p) : git_diff_get_delta(diff, i);
	if (p && !(d->flags & GIT_DIFF_FLAG_BINARY) &&
	    git_patch_line_stats(&ctx, &adds, &dels, p) < 0) {
		git_patch_free(p);
		return git_fail(e, "count a file's lines");
	}
	if (!(f = json_object_new_object())) {
		git_patch_free(p);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	add_text(f, "filename",
		 d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path);
	json_add_str(f, "status", delta_status(d->status));
	json_add_int(f, "additions", (int64_t)adds);
	json_add_int(f, "deletions", (int64_t)dels);
	json_add_int(f, "changes", (int64_t)(adds + dels));
	if (d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED)
		add_text(f, "previous_filename", d->old_file.path);
	buf_init(&b, REVIEW_PATCH_MAX);
	if ((omitted = p ? patch_text(p, odb, budget, &b) : "binary"))
		json_add_str(f, "patch_omitted", omitted);
	else
		json_object_object_add(f, "patch",
				       json_object_new_string_len(b.data ? b.data : "", (int)b.len));
	buf_release(&b);
	git_patch_free(p);
	json_object_array_add(files, f);
	return 0;
}

/* files and files_truncated of o: the changes from old (NULL: nothing) to new. */
static int add_files(json_object *o, git_repository *g, git_tree *old, git_tree *new_,
		     struct err *e)
{
	git_diff_options opts;
	git_diff_find_options find;
	git_diff *diff = NULL;
	git_odb *odb = NULL;
	json_object *files = json_object_new_array();
	size_t n, budget = REVIEW_PATCHES_MAX;
	int rc = 0;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION);
	/* Past this size a blob counts as binary without being read whole. */
	opts.max_size = REVIEW_BLOB_MAX;
	find.flags = GIT_DIFF_FIND_RENAMES;
	if (!files)
		return err_set(e, ERR_NOMEM, "out of memory");
	json_object_object_add(o, "files", files);
	if (git_repository_odb(&odb, g) < 0 ||
	    git_diff_tree_to_tree(&diff, g, old, new_, &opts) < 0 ||
	    git_diff_find_similar(diff, &find) < 0) {
		rc = git_fail(e, "diff the trees");
		goto out;
	}
	n = git_diff_num_deltas(diff);
	for (size_t i = 0; !rc && i < n && i < REVIEW_FILES_MAX; i++)
		rc = file_json(files, diff, i, odb, &budget, e);
	json_add_bool(o, "files_truncated", n > REVIEW_FILES_MAX);
out:
	git_diff_free(diff);
	git_odb_free(odb);
	return rc;
}

int review_commit(json_object **out, git_repository *g, int ephemeral, const char *spec,
		  struct err *e)
{
	git_commit *c = NULL, *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	json_object *o = NULL;
	int rc;

	*out = NULL;
	if ((rc = review_resolve(&c, g, ephemeral, spec, e)))
		return rc;
	if (git_commit_tree(&tree, c) < 0 ||
	    (git_commit_parentcount(c) > 0 &&
	     (git_commit_parent(&parent, c, 0) < 0 || git_commit_tree(&ptree, parent) < 0))) {
		rc = git_fail(e, "read a commit's tree");
		goto out;
	}
	if (!(o = commit_json(c))) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = add_files(o, g, ptree, tree, e)))
		goto out;
	*out = o;
	o = NULL;
out:
	json_object_put(o);
	git_tree_free(ptree);
	git_tree_free(tree);
	git_commit_free(parent);
	git_commit_free(c);
	return rc;
}

/* commits and commits_truncated of o: what head has that base lacks, oldest first. */
static int add_commits(json_object *o, git_repository *g, const git_oid *base,
		       const git_oid *head, struct err *e)
{
	git_revwalk *walk = NULL;
	git_commit *c = NULL;
	json_object *commits = json_object_new_array();
	git_oid id;
	size_t n = 0;
	int rc = 0, grc;

	if (!commits)
		return err_set(e, ERR_NOMEM, "out of memory");
	json_object_object_add(o, "commits", commits);
	if (git_revwalk_new(&walk, g) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) < 0 ||
	    git_revwalk_push(walk, head) < 0 || git_revwalk_hide(walk, base) < 0) {
		rc = git_fail(e, "walk the history");
		goto out;
	}
	while ((grc = git_revwalk_next(&id, walk)) == 0 && n < REVIEW_COMMITS_MAX) {
		if (git_commit_lookup(&c, g, &id) < 0) {
			rc = git_fail(e, "read a commit");
			goto out;
		}
		json_object_array_add(commits, commit_json(c));
		git_commit_free(c);
		c = NULL;
		n++;
	}
	if (grc < 0 && grc != GIT_ITEROVER)
		rc = git_fail(e, "walk the history");
	json_add_bool(o, "commits_truncated", grc == 0);
out:
	git_revwalk_free(walk);
	return rc;
}

int review_compare(json_object **out, git_repository *g, int ephemeral, const char *base,
		   const char *head, struct err *e)
{
	git_commit *b = NULL, *h = NULL, *mb = NULL;
	git_tree *mtree = NULL, *htree = NULL;
	json_object *o = NULL;
	git_oid base_id;
	size_t ahead = 0, behind = 0;
	int rc, grc;

	*out = NULL;
	if ((rc = review_resolve(&b, g, 0, base, e)) ||
	    (rc = review_resolve(&h, g, ephemeral, head, e)))
		goto out;
	grc = git_merge_base(&base_id, g, git_commit_id(b), git_commit_id(h));
	if (grc == GIT_ENOTFOUND) {
		rc = err_http(e, 422, "'%.200s' and '%.200s' have no common ancestor", base, head);
		goto out;
	}
	if (grc < 0 || git_graph_ahead_behind(&ahead, &behind, g, git_commit_id(h),
					      git_commit_id(b)) < 0 ||
	    git_commit_lookup(&mb, g, &base_id) < 0 || git_commit_tree(&mtree, mb) < 0 ||
	    git_commit_tree(&htree, h) < 0) {
		rc = git_fail(e, "compare the commits");
		goto out;
	}
	if (!(o = json_object_new_object())) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	json_add_str(o, "status", review_status(ahead, behind));
	json_add_int(o, "ahead_by", (int64_t)ahead);
	json_add_int(o, "behind_by", (int64_t)behind);
	json_add_int(o, "total_commits", (int64_t)ahead);
	json_object_object_add(o, "merge_base_commit", commit_json(mb));
	if ((rc = add_commits(o, g, git_commit_id(b), git_commit_id(h), e)) ||
	    (rc = add_files(o, g, mtree, htree, e)))
		goto out;
	*out = o;
	o = NULL;
out:
	json_object_put(o);
	git_tree_free(htree);
	git_tree_free(mtree);
	git_commit_free(mb);
	git_commit_free(h);
	git_commit_free(b);
	return rc;
}

int review_ref_target(git_repository *g, const char *full, char sha[GIT_OID_HEXSZ + 1],
		      struct err *e)
{
	git_oid id;
	int grc = git_reference_name_to_id(&id, g, full);

	sha[0] = 0;
	if (grc == GIT_ENOTFOUND || grc == GIT_EINVALIDSPEC)
		return err_set(e, ERR_NOTFOUND, "unknown ref");
	if (grc < 0)
		return git_fail(e, "read a ref");
	git_oid_tostr(sha, GIT_OID_HEXSZ + 1, &id);
	return 0;
}

int review_ref_delete(git_repository *g, const char *full, const char *sha, struct err *e)
{
	git_reference *ref = NULL;
	char now[GIT_OID_HEXSZ + 1] = "";
	int grc = git_reference_lookup(&ref, g, full), rc = 0;

	if (grc == GIT_ENOTFOUND) {
		rc = err_set(e, ERR_NOTFOUND, "unknown ref");
		goto out;
	}
	if (grc < 0) {
		rc = git_fail(e, "read a ref");
		goto out;
	}
	if (git_reference_target(ref))
		git_oid_tostr(now, sizeof(now), git_reference_target(ref));
	/* git_reference_delete deletes only the value it read: a push in between wins. */
	if (strcmp(now, sha) || (grc = git_reference_delete(ref)) == GIT_EMODIFIED ||
	    grc == GIT_ELOCKED) {
		rc = err_http(e, 409, "ref moved; try again");
		goto out;
	}
	if (grc < 0)
		rc = git_fail(e, "delete a ref");
out:
	git_reference_free(ref);
	return rc;
}
