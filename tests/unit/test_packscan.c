/* test_packscan.c: the blobs of a pushed pack scanned as the body streams in, against packs
 * libgit2 writes and indexes: every whole blob that scans clean is reported with the
 * offset, size and CRC-32 that the pack's index gives it (packread_where, what the hook
 * compares), whatever the pieces the body comes in; a blob with a secret, a delta and
 * anything after a malformed byte are not. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "testpack.h"
#include "sandboxd/git/packread.h"
#include "sandboxd/proto/packscan.h"
#include "sandboxd/common/banned.h"

/* The test's pack and repositories: a file-level one, so that a failed test's teardown
 * still removes them. */
static struct testpack t;

static int teardown(void **state)
{
	tp_free(&t);
	return 0;
}

#define SECRET "aws = \"AKIAIOSFODNN7ABCDEFG\"\n"

struct got {
	struct packscan_blob b[TP_FILES_MAX + 8];
	size_t n;
};

static void collect(void *arg, const struct packscan_blob *b)
{
	struct got *g = arg;

	assert_true(g->n < sizeof(g->b) / sizeof(g->b[0]));
	g->b[g->n++] = *b;
}

/* The body in pieces of piece bytes; the state at the end. */
static enum packscan_state scan_in(const char *body, size_t len, size_t piece, struct got *g)
{
	struct packscan s;
	enum packscan_state st;

	g->n = 0;
	assert_int_equal(packscan_init(&s, 1 << 20, collect, g), 0);
	for (size_t at = 0; at < len; at += piece)
		packscan_feed(&s, body + at, len - at < piece ? len - at : piece);
	packscan_end(&s);
	st = s.state;
	packscan_release(&s);
	return st;
}

/* The report for blob i, or NULL. */
static const struct packscan_blob *reported(const struct got *g, const struct packread *p,
					    const git_oid *blob)
{
	uint64_t offset, size;
	uint32_t crc;

	if (packread_where(p, blob->id, &offset, &size, &crc))
		return NULL;
	for (size_t k = 0; k < g->n; k++)
		if (g->b[k].offset == offset)
			return g->b[k].size == size && g->b[k].crc == crc ? &g->b[k] : NULL;
	return NULL;
}

/* Every file but the secret one (index secret, or none) is reported, as the index says. */
static void check_all_but(const struct testpack *pk, const struct got *g, size_t secret)
{
	struct packread *p;
	struct err e;

	assert_int_equal(packread_open(&p, tp_objects(pk), &e), 0);
	for (size_t i = 0; i < pk->nfiles; i++)
		if (i == secret)
			assert_null(reported(g, p, &pk->blob[i]));
		else if (!reported(g, p, &pk->blob[i]))
			fail_msg("blob of f%04zu.txt not reported as the index gives it", i);
	assert_int_equal(g->n, pk->nfiles - (secret < pk->nfiles));
	packread_free(p);
}

static void test_clean_blobs_in_any_pieces(void **state)
{
	static const size_t pieces[] = { 1, 7, 4096, 65536, 1 << 30 };
	const char *texts[300] = { [299] = SECRET };
	static struct got g;

	tp_make(&t, 300, 3000, texts);
	tp_body(&t, "report-status side-band-64k agent=git/2.39.5", NULL);
	tp_index(&t);
	for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		assert_int_equal(scan_in(t.body, t.body_len, pieces[k], &g), PACKSCAN_DONE);
		check_all_but(&t, &g, 299);
		for (size_t i = 1; i < g.n; i++)
			assert_true(g.b[i].offset > g.b[i - 1].offset);
	}
	tp_free(&t);
}

/* Push options come after the commands' flush, with a flush of their own. */
static void test_push_options(void **state)
{
	static const char *const opts[] = { "ci.skip", "merge_request.create", NULL };
	static struct got g;

	tp_make(&t, 20, 500, NULL);
	tp_body(&t, "report-status push-options atomic", opts);
	tp_index(&t);
	assert_int_equal(scan_in(t.body, t.body_len, 100, &g), PACKSCAN_DONE);
	check_all_but(&t, &g, SIZE_MAX);
	tp_free(&t);
}

/* A blob stored as a delta of another is not reported (the hook resolves it); the rest is. */
static void test_delta_skipped(void **state)
{
	static struct got g;
	static char a[20001], b[20001];
	const char *texts[10] = { [3] = a, [4] = b };
	struct packread *p;
	struct err e;
	uint64_t off, size;
	uint32_t crc;
	size_t deltas = 0;

	tp_text(a, 20000, 77);
	memcpy(b, a, sizeof(a));
	b[10000] = b[10000] == 'A' ? 'B' : 'A';
	tp_make(&t, 10, 800, texts);
	tp_body(&t, "report-status", NULL);
	tp_index(&t);
	assert_int_equal(scan_in(t.body, t.body_len, 333, &g), PACKSCAN_DONE);
	assert_int_equal(packread_open(&p, tp_objects(&t), &e), 0);
	for (size_t i = 0; i < t.nfiles; i++) {
		if (packread_where(p, t.blob[i].id, &off, &size, &crc)) {
			deltas++;
			continue;
		}
		assert_non_null(reported(&g, p, &t.blob[i]));
	}
	assert_int_equal(deltas, 1);
	assert_int_equal(g.n, t.nfiles - 1);
	packread_free(p);
	tp_free(&t);
}

/* A body cut short reports what was whole before the cut; bad bytes stop the scan. */
static void test_cut_and_bad(void **state)
{
	static struct got g, whole;
	char *bad;

	tp_make(&t, 50, 2000, NULL);
	tp_body(&t, "report-status", NULL);
	assert_int_equal(scan_in(t.body, t.body_len, 4096, &whole), PACKSCAN_DONE);
	assert_int_equal(scan_in(t.body, t.body_len / 2, 4096, &g), PACKSCAN_STOPPED);
	assert_true(g.n > 0 && g.n < whole.n);
	assert_memory_equal(g.b, whole.b, g.n * sizeof(g.b[0]));
	/* A byte of the pack's data changed: what follows it is not reported. */
	bad = malloc(t.body_len);
	memcpy(bad, t.body, t.body_len);
	bad[t.body_len / 2] ^= 0x55;
	scan_in(bad, t.body_len, 4096, &g);
	assert_true(g.n < whole.n);
	for (size_t i = 0; i < g.n; i++)
		assert_memory_equal(&g.b[i], &whole.b[i], sizeof(g.b[i]));
	/* Not hex, a SHA-256 repository, no pack after the flush: nothing. */
	assert_int_equal(scan_in("00zz", 4, 1, &g), PACKSCAN_STOPPED);
	memcpy(bad, t.body, t.body_len);
	free(t.body);
	tp_body(&t, "report-status object-format=sha256", NULL);
	assert_int_equal(scan_in(t.body, t.body_len, 4096, &g), PACKSCAN_STOPPED);
	assert_int_equal(g.n, 0);
	assert_int_equal(scan_in("0000JUNK", 8, 3, &g), PACKSCAN_STOPPED);
	assert_int_equal(g.n, 0);
	free(bad);
	tp_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_clean_blobs_in_any_pieces, teardown),
		cmocka_unit_test_teardown(test_push_options, teardown),
		cmocka_unit_test_teardown(test_delta_skipped, teardown),
		cmocka_unit_test_teardown(test_cut_and_bad, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests_name("packscan", tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
