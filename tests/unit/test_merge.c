/* test_merge.c: merge_make and merge_update, and the review reads beside them, on a real
 * bare repository that libgit2 builds in a temporary directory (no server, no git client):
 * nothing to merge, fast-forward, merge commit, conflicts, a base that moved, branches in
 * both namespaces, a patch's exact text, a ref deleted only at the value checked. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <unistd.h>
#include <cmocka.h>
#include <git2.h>
#include "sandboxd/git/merge.h"
#include "sandboxd/git/review.h"
#include "sandboxd/common/banned.h"

static char dir[64];
static git_repository *g;

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_merge.XXXXXX");
	if (!mkdtemp(dir) || git_repository_init(&g, dir, 1) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	git_repository_free(g);
	g = NULL;
	return nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* A commit of a flat tree {name: text} (NULL-terminated pairs) on parents, set at ref. */
static git_oid commit_at(const char *ref, const git_oid *parent1, const git_oid *parent2,
			 const char *const *files)
{
	git_treebuilder *tb = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_commit *p[2] = { NULL, NULL };
	git_oid blob, tree_id, out;
	int np = 0;

	assert_int_equal(git_treebuilder_new(&tb, g, NULL), 0);
	for (size_t i = 0; files[i]; i += 2) {
		assert_int_equal(git_blob_create_from_buffer(&blob, g, files[i + 1],
							     strlen(files[i + 1])), 0);
		assert_int_equal(git_treebuilder_insert(NULL, tb, files[i], &blob,
							GIT_FILEMODE_BLOB), 0);
	}
	assert_int_equal(git_treebuilder_write(&tree_id, tb), 0);
	assert_int_equal(git_tree_lookup(&tree, g, &tree_id), 0);
	assert_int_equal(git_signature_new(&sig, "T", "t@t", 1700000000, 0), 0);
	if (parent1)
		assert_int_equal(git_commit_lookup(&p[np++], g, parent1), 0);
	if (parent2)
		assert_int_equal(git_commit_lookup(&p[np++], g, parent2), 0);
	assert_int_equal(git_commit_create(&out, g, ref, sig, sig, NULL, "c\n", tree, (size_t)np,
					   (const git_commit **)p), 0);
	git_commit_free(p[0]);
	git_commit_free(p[1]);
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	return out;
}

static const struct merge_author who = { .name = "Rev", .email = "rev@example.com" };

static void test_merge_kinds(void **state)
{
	static const char *const f0[] = { "a", "1\n", NULL };
	static const char *const f1[] = { "a", "1\n", "b", "2\n", NULL };
	static const char *const f2[] = { "a", "1\n", "c", "3\n", NULL };
	git_oid base = commit_at("refs/heads/main", NULL, NULL, f0);
	git_oid head = commit_at("refs/namespaces/ephemeral/refs/heads/s1", &base, NULL, f1);
	struct merge m;
	json_object *conflicts = NULL;
	struct err e = { .msg = "" };

	/* base an ancestor of head: a fast-forward */
	assert_int_equal(merge_make(&m, &conflicts, g, "refs/heads/main", 1, "s1", &who, &e), 0);
	assert_int_equal(m.kind, MERGE_FAST_FORWARD);
	assert_true(git_oid_equal(&m.new_, &head));
	assert_true(git_oid_equal(&m.old, &base));
	assert_null(conflicts);
	/* without the namespace, s1 is unknown */
	assert_int_equal(merge_make(&m, &conflicts, g, "refs/heads/main", 0, "s1", &who, &e),
			 ERR_NOTFOUND);
	assert_string_equal(e.msg, "unknown ref");
	assert_int_equal(merge_update(g, "refs/heads/main", &m.old, &head, &e), 0);
	/* head in base: nothing */
	assert_int_equal(merge_make(&m, &conflicts, g, "refs/heads/main", 1, "s1", &who, &e), 0);
	assert_int_equal(m.kind, MERGE_NOTHING);
	/* diverged: a merge commit of base then head, by the caller */
	git_oid other = commit_at("refs/namespaces/ephemeral/refs/heads/s2", &base, NULL, f2);
	assert_int_equal(merge_make(&m, &conflicts, g, "refs/heads/main", 1, "s2", &who, &e), 0);
	assert_int_equal(m.kind, MERGE_COMMIT);
	git_commit *c = NULL;
	assert_int_equal(git_commit_lookup(&c, g, &m.new_), 0);
	assert_int_equal(git_commit_parentcount(c), 2);
	assert_true(git_oid_equal(git_commit_parent_id(c, 0), &head));
	assert_true(git_oid_equal(git_commit_parent_id(c, 1), &other));
	assert_string_equal(git_commit_author(c)->name, "Rev");
	assert_string_equal(git_commit_message(c), "Merge s2 into main");
	git_commit_free(c);
	/* nothing moved yet: main is where it was */
	git_oid now;
	assert_int_equal(git_reference_name_to_id(&now, g, "refs/heads/main"), 0);
	assert_true(git_oid_equal(&now, &head));
}

static void test_conflict_and_race(void **state)
{
	static const char *const f0[] = { "a", "1\n", "z", "0\n", NULL };
	static const char *const fa[] = { "a", "A\n", "z", "0\n", NULL };
	static const char *const fb[] = { "a", "B\n", "z", "0\n", NULL };
	git_oid base = commit_at("refs/heads/main", NULL, NULL, f0);
	git_oid ours = commit_at("refs/heads/main", &base, NULL, fa);
	commit_at("refs/heads/theirs", &base, NULL, fb);
	struct merge m;
	json_object *conflicts = NULL;
	struct err e = { .msg = "" };

	assert_int_equal(merge_make(&m, &conflicts, g, "refs/heads/main", 0, "theirs", &who, &e),
			 ERR_EXISTS);
	assert_int_equal(e.status, 409);
	assert_string_equal(e.msg, "merge conflict");
	assert_non_null(conflicts);
	assert_string_equal(json_object_to_json_string_ext(conflicts, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
			    "[\"a\"]");
	json_object_put(conflicts);
	/* a base that moved since: the update is refused, the ref keeps the winner */
	assert_int_equal(merge_update(g, "refs/heads/main", &base, &base, &e), ERR_EXISTS);
	assert_string_equal(e.msg, "base moved; try again");
	git_oid now;
	assert_int_equal(git_reference_name_to_id(&now, g, "refs/heads/main"), 0);
	assert_true(git_oid_equal(&now, &ours));
	/* an unknown base */
	assert_int_equal(merge_make(&m, &conflicts, g, "refs/heads/nope", 0, "theirs", &who, &e),
			 ERR_NOTFOUND);
}

static void test_branches_and_delete(void **state)
{
	static const char *const f0[] = { "a", "1\n", NULL };
	git_oid c = commit_at("refs/heads/main", NULL, NULL, f0);
	json_object *o = NULL;
	struct err e = { .msg = "" };
	char sha[GIT_OID_HEXSZ + 1], hex[GIT_OID_HEXSZ + 1];
	git_reference *ref = NULL;

	assert_int_equal(git_reference_create(&ref, g, "refs/heads/z/x", &c, 0, NULL), 0);
	git_reference_free(ref);
	assert_int_equal(git_reference_create(&ref, g, "refs/namespaces/ephemeral/refs/heads/s",
					      &c, 0, NULL), 0);
	git_reference_free(ref);
	git_oid_tostr(hex, sizeof(hex), &c);
	assert_int_equal(review_branches(&o, g, 0, "main", &e), 0);
	char want[400];
	snprintf(want, sizeof(want),
		 "[{\"name\":\"main\",\"commit\":{\"sha\":\"%s\"},\"protected\":true},"
		 "{\"name\":\"z/x\",\"commit\":{\"sha\":\"%s\"},\"protected\":false}]", hex, hex);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), want);
	json_object_put(o);
	assert_int_equal(review_branches(&o, g, 1, "main", &e), 0);
	snprintf(want, sizeof(want),
		 "[{\"name\":\"s\",\"commit\":{\"sha\":\"%s\"},\"protected\":false}]", hex);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), want);
	json_object_put(o);
	/* a deletion at a value that is no longer the ref's: refused, the ref stays */
	assert_int_equal(review_ref_target(g, "refs/heads/z/x", sha, &e), 0);
	assert_string_equal(sha, hex);
	assert_int_equal(review_ref_delete(g, "refs/heads/z/x",
					   "0123456789012345678901234567890123456789", &e),
			 ERR_EXISTS);
	assert_string_equal(e.msg, "ref moved; try again");
	assert_int_equal(review_ref_delete(g, "refs/heads/z/x", sha, &e), 0);
	assert_int_equal(review_ref_target(g, "refs/heads/z/x", sha, &e), ERR_NOTFOUND);
	assert_string_equal(e.msg, "unknown ref");
	assert_int_equal(review_ref_delete(g, "refs/heads/z/x", hex, &e), ERR_NOTFOUND);
}

static void test_commit_patch(void **state)
{
	static const char *const f0[] = { "a", "1\n2\n", "bin", "x\0y", NULL };
	static const char *const f1[] = { "a", "1\n3\n", "n", "new", NULL };
	git_oid base = commit_at("refs/heads/main", NULL, NULL, f0);
	json_object *o = NULL, *files, *f;
	struct err e = { .msg = "" };

	commit_at("refs/heads/main", &base, NULL, f1);
	assert_int_equal(review_commit(&o, g, 0, "main", &e), 0);
	assert_true(json_object_object_get_ex(o, "files", &files));
	assert_int_equal(json_object_array_length(files), 3);
	/* a: modified, GitHub's patch (hunks only, no final newline) */
	f = json_object_array_get_idx(files, 0);
	assert_string_equal(json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
			    "{\"filename\":\"a\",\"status\":\"modified\",\"additions\":1,"
			    "\"deletions\":1,\"changes\":2,\"patch\":\"@@ -1,2 +1,2 @@\\n 1\\n-2\\n+3\"}");
	/* bin ("x" only: the NUL ends the C string the helper writes) removed */
	f = json_object_array_get_idx(files, 1);
	json_object *v;
	assert_true(json_object_object_get_ex(f, "status", &v));
	assert_string_equal(json_object_get_string(v), "removed");
	/* n: a file without a final newline says so in its patch, as git does */
	f = json_object_array_get_idx(files, 2);
	assert_true(json_object_object_get_ex(f, "patch", &v));
	assert_string_equal(json_object_get_string(v),
			    "@@ -0,0 +1 @@\n+new\n\\ No newline at end of file");
	assert_true(json_object_object_get_ex(o, "files_truncated", &v));
	assert_false(json_object_get_boolean(v));
	json_object_put(o);
	assert_int_equal(review_commit(&o, g, 0, "HEAD~1", &e), ERR_NOTFOUND);
	assert_int_equal(review_commit(&o, g, 0, "main@{1}", &e), ERR_NOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_merge_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_and_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_branches_and_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_patch, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
