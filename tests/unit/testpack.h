/* testpack.h: packs made by libgit2 for test_packscan and test_pushscan: a commit of many
 * files in a bare repository, its pack as git sends it in a push, the receive-pack request
 * body around it, and the pack indexed into another repository's objects/pack (as
 * index-pack writes a push's quarantine). Header-only: each test file includes it once. */
#ifndef SANDBOXD_TESTPACK_H
#define SANDBOXD_TESTPACK_H
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#define TP_FILES_MAX 1024

struct testpack {
	char dir[64];                 /* temporary: src.git, dst.git */
	git_repository *src;
	git_oid commit;
	git_oid blob[TP_FILES_MAX];   /* the files' blobs, in name order */
	size_t nfiles;
	git_buf pack;                 /* the commit's pack, as packbuilder writes it */
	char *body;                   /* commands, flush, options, pack */
	size_t body_len;
	char dst[96];                 /* dst.git: the pack indexed into its objects/pack */
};

static int tp_rm(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

/* Text that scans clean: base64-looking lines from a seeded generator. */
static void tp_text(char *out, size_t n, unsigned seed)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		out[i] = (i + 1) % 77 == 0 ? '\n' : b64[(seed >> 16) & 63];
	}
}

/* A commit of nfiles files f0000.txt... of size bytes each; texts[i], when not NULL,
 * replaces file i's text. Then its pack. */
static void tp_make(struct testpack *t, size_t nfiles, size_t size, const char *const *texts)
{
	git_treebuilder *tb = NULL;
	git_packbuilder *pb = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid tree_id;
	char name[32], path[96], *text = malloc(size + 1);

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/test_pack.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(path, sizeof(path), "%s/src.git", t->dir);
	assert_int_equal(git_repository_init(&t->src, path, 1), 0);
	assert_int_equal(git_treebuilder_new(&tb, t->src, NULL), 0);
	assert_true(nfiles <= TP_FILES_MAX);
	for (size_t i = 0; i < nfiles; i++) {
		const char *d = texts && texts[i] ? texts[i] : text;

		tp_text(text, size, (unsigned)i + 1);
		text[size] = 0;
		assert_int_equal(git_blob_create_from_buffer(&t->blob[i], t->src, d, strlen(d)), 0);
		snprintf(name, sizeof(name), "f%04zu.txt", i);
		assert_int_equal(git_treebuilder_insert(NULL, tb, name, &t->blob[i],
							GIT_FILEMODE_BLOB), 0);
	}
	t->nfiles = nfiles;
	assert_int_equal(git_treebuilder_write(&tree_id, tb), 0);
	assert_int_equal(git_tree_lookup(&tree, t->src, &tree_id), 0);
	assert_int_equal(git_signature_new(&sig, "T", "t@t", 1700000000, 0), 0);
	assert_int_equal(git_commit_create(&t->commit, t->src, NULL, sig, sig, NULL, "c\n", tree,
					   0, NULL), 0);
	assert_int_equal(git_packbuilder_new(&pb, t->src), 0);
	assert_int_equal(git_packbuilder_insert_commit(pb, &t->commit), 0);
	assert_int_equal(git_packbuilder_write_buf(&t->pack, pb), 0);
	git_packbuilder_free(pb);
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	free(text);
}

/* The request body: one command creating refs/heads/main with caps, a flush, the options
 * (NULL-terminated, each its own pkt-line) and their flush when any, then the pack. */
static void tp_body(struct testpack *t, const char *caps, const char *const *options)
{
	char payload[512], hex[GIT_OID_HEXSZ + 1];
	size_t at = 0;
	int len;

	git_oid_tostr(hex, sizeof(hex), &t->commit);
	/* %c of 0 writes the NUL that separates the capabilities, and counts it. */
	len = snprintf(payload, sizeof(payload), "%040d %s refs/heads/main%c%s\n", 0, hex, 0,
		       caps);
	assert_true(len > 0 && (size_t)len < sizeof(payload));
	t->body = malloc((size_t)len + 4096 + t->pack.size);
	at += (size_t)sprintf(t->body, "%04x", len + 4);
	memcpy(t->body + at, payload, (size_t)len);
	at += (size_t)len;
	memcpy(t->body + at, "0000", 4);
	at += 4;
	for (size_t n = 0; options && options[n]; n++) {
		at += (size_t)sprintf(t->body + at, "%04zx%s", strlen(options[n]) + 4, options[n]);
		if (!options[n + 1]) {
			memcpy(t->body + at, "0000", 4);
			at += 4;
		}
	}
	memcpy(t->body + at, t->pack.ptr, t->pack.size);
	t->body_len = at + t->pack.size;
}

/* The pack indexed into dst.git/objects/pack, as index-pack writes a push's quarantine. */
static void tp_index(struct testpack *t)
{
	git_repository *dst = NULL;
	git_indexer *idx = NULL;
	git_indexer_progress stats;
	char pack[128];

	snprintf(t->dst, sizeof(t->dst), "%s/dst.git", t->dir);
	assert_int_equal(git_repository_init(&dst, t->dst, 1), 0);
	git_repository_free(dst);
	snprintf(pack, sizeof(pack), "%s/objects/pack", t->dst);
	assert_int_equal(git_indexer_new(&idx, pack, 0, NULL, NULL), 0);
	assert_int_equal(git_indexer_append(idx, t->pack.ptr, t->pack.size, &stats), 0);
	assert_int_equal(git_indexer_commit(idx, &stats), 0);
	git_indexer_free(idx);
}

/* dst.git's objects directory (packread_open's argument). */
static const char *tp_objects(const struct testpack *t)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/objects", t->dst);
	return path;
}

/* Frees and removes everything; again (a teardown after the test's own) does nothing. */
static void tp_free(struct testpack *t)
{
	git_repository_free(t->src);
	git_buf_dispose(&t->pack);
	free(t->body);
	if (t->dir[0])
		nftw(t->dir, tp_rm, 16, FTW_DEPTH | FTW_PHYS);
	memset(t, 0, sizeof(*t));
}

#endif
