/* test_pushscan.c: push protection's scan of what new refs make reachable, on a repository
 * whose objects are one pack (as a push's quarantine holds them): many blobs read and
 * scanned by several threads still name the first secret in walk order, the last blob of
 * many included; blobs that the streaming scan (packscan.h) reported clean are skipped only
 * when their offset, size and CRC-32 in the pack all match. With a sandbox's secret values
 * (valscan.h), every blob is searched for them, the ones the streaming scan reported too,
 * and the refusal names the secret. */
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
#include "sandboxd/git/pushscan.h"
#include "sandboxd/proto/valscan.h"
#include "sandboxd/common/banned.h"

/* The test's pack and repositories: a file-level one, so that a failed test's teardown
 * still removes them. */
static struct testpack t;

static int teardown(void **state)
{
	tp_free(&t);
	return 0;
}

#define SECRET "x\naws = \"AKIAIOSFODNN7ABCDEFG\"\n"
#define NFILES 500   /* past SCAN_THREADS_MIN_JOBS (64): read by a thread per CPU, up to 4 */

struct records {
	struct packscan_blob b[NFILES + 8];
	size_t n;
};

static void collect(void *arg, const struct packscan_blob *b)
{
	struct records *r = arg;

	assert_true(r->n < sizeof(r->b) / sizeof(r->b[0]));
	r->b[r->n++] = *b;
}

/* The push of t's commit to refs/heads/main, scanned in dst.git (no ref there: all new),
 * with the secret values in values (NULL: none). */
static int run_values(const struct testpack *pk, const struct records *known,
		      const struct valscan *values, char *msg, size_t n)
{
	char hex[GIT_OID_HEXSZ + 1];
	struct pushscan_ref ref = { .ref = "refs/heads/main", .new_ = hex };
	struct pushscan_scanned scanned = { .blob = known ? known->b : NULL,
					    .n = known ? known->n : 0 };

	git_oid_tostr(hex, sizeof(hex), &pk->commit);
	return pushscan_run(pk->dst, &ref, 1, known ? &scanned : NULL, values, msg, n);
}

static int run(const struct testpack *pk, const struct records *known, char *msg, size_t n)
{
	return run_values(pk, known, NULL, msg, n);
}

static void make(struct testpack *pk, const char *const *texts)
{
	tp_make(pk, NFILES, 2000, texts);
	tp_body(pk, "report-status", NULL);
	tp_index(pk);
}

static void test_secret_in_last_blob_of_many(void **state)
{
	static const char *texts[NFILES] = { [NFILES - 1] = SECRET };
	char msg[1024];

	make(&t, texts);
	assert_int_equal(run(&t, NULL, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "AWS access key id found in f0499.txt (line 2) in commit "));
	tp_free(&t);
}

static void test_first_secret_in_walk_order(void **state)
{
	static const char *texts[NFILES] = { [100] = SECRET, [400] = SECRET "y\n" };
	char msg[1024];

	make(&t, texts);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(run(&t, NULL, msg, sizeof(msg)), 1);
		assert_non_null(strstr(msg, "found in f0100.txt (line 2)"));
	}
	tp_free(&t);
}

static void test_clean_push(void **state)
{
	char msg[1024] = "";

	make(&t, NULL);
	assert_int_equal(run(&t, NULL, msg, sizeof(msg)), 0);
	tp_free(&t);
}

/* What the streaming scan reported is skipped; a record matches only by offset, size and
 * CRC-32 together. */
static void test_scanned_blobs_skipped(void **state)
{
	static const char *texts[NFILES] = { [NFILES - 1] = SECRET };
	static struct records r, forged;
	struct packscan s;
	struct packread *p;
	struct err e;
	char msg[1024];
	uint64_t off, size;
	uint32_t crc;

	make(&t, texts);
	assert_int_equal(packscan_init(&s, 1 << 20, collect, &r), 0);
	packscan_feed(&s, t.body, t.body_len);
	packscan_end(&s);
	packscan_release(&s);
	assert_int_equal(r.n, NFILES - 1);
	/* Every clean blob known: the secret, not among them, is still found. */
	assert_int_equal(run(&t, &r, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "AWS access key id found in f0499.txt (line 2)"));
	/* A record of the secret's own entry (a scanner that was wrong) would hide it: the hook
	 * trusts the records only for the exact bytes index-pack wrote. */
	assert_int_equal(packread_open(&p, tp_objects(&t), &e), 0);
	assert_int_equal(packread_where(p, t.blob[NFILES - 1].id, &off, &size, &crc), 0);
	packread_free(p);
	forged = r;
	forged.b[forged.n++] = (struct packscan_blob){ .offset = off, .size = size, .crc = crc + 1 };
	for (size_t i = forged.n - 1; i > 0 && forged.b[i].offset < forged.b[i - 1].offset; i--) {
		struct packscan_blob x = forged.b[i];

		forged.b[i] = forged.b[i - 1];
		forged.b[i - 1] = x;
	}
	assert_int_equal(run(&t, &forged, msg, sizeof(msg)), 1);
	for (size_t i = 0; i < forged.n; i++)
		if (forged.b[i].offset == off)
			forged.b[i].crc = crc;
	assert_int_equal(run(&t, &forged, msg, sizeof(msg)), 0);
	tp_free(&t);
}

#define VALUE "npm_s3cr3t-value-0123"

/* A sandbox's value, raw and base64'd into a Basic header, is found in the last blob of
 * many, also when the streaming scan reported every blob clean (it knew only the rules);
 * the refusal names the secret, never the value; without values the same push passes. */
static void test_values_found(void **state)
{
	static const char *texts[NFILES] = { [NFILES - 1] = "registry=x\n//r/:_authToken=" VALUE "\n" };
	/* base64("me:" VALUE) */
	static const char *b64[NFILES] = { [7] = "a\nb\nAuthorization: Basic bWU6bnBtX3MzY3IzdC12YWx1ZS0wMTIz\n" };
	static struct records r;
	struct valscan v;
	struct packscan s;
	struct err e;
	char msg[1024];

	valscan_init(&v);
	assert_int_equal(valscan_add(&v, "NPM_TOKEN", VALUE, strlen(VALUE), &e), 0);
	make(&t, texts);
	assert_int_equal(run_values(&t, NULL, &v, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "push refused: sandbox secret NPM_TOKEN found in f0499.txt "
				    "(line 2) in commit "));
	assert_null(strstr(msg, VALUE));
	r.n = 0;
	assert_int_equal(packscan_init(&s, 1 << 20, collect, &r), 0);
	packscan_feed(&s, t.body, t.body_len);
	packscan_end(&s);
	packscan_release(&s);
	assert_int_equal(r.n, NFILES);
	assert_int_equal(run_values(&t, &r, &v, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "sandbox secret NPM_TOKEN found in f0499.txt (line 2)"));
	assert_int_equal(run(&t, &r, msg, sizeof(msg)), 0);
	tp_free(&t);

	make(&t, b64);
	assert_int_equal(run_values(&t, NULL, &v, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "sandbox secret NPM_TOKEN (base64) found in f0007.txt (line 3)"));
	tp_free(&t);

	/* Values that are nowhere: the push passes; an empty set is no set. */
	make(&t, NULL);
	assert_int_equal(run_values(&t, NULL, &v, msg, sizeof(msg)), 0);
	valscan_free(&v);
	assert_int_equal(run_values(&t, NULL, &v, msg, sizeof(msg)), 0);
	tp_free(&t);
}

/* The commit object itself: its author (testpack's "T <t@t>") holds a value. */
static void test_value_in_commit_header(void **state)
{
	struct valscan v;
	struct err e;
	char msg[1024];

	valscan_init(&v);
	assert_int_equal(valscan_add(&v, "AUTHOR", "T <t@t> 1700000000", 18, &e), 0);
	make(&t, NULL);
	assert_int_equal(run_values(&t, NULL, &v, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "push refused: sandbox secret AUTHOR found in commit "));
	assert_non_null(strstr(msg, "(its header or message, line 2); rewrite it and push again"));
	valscan_free(&v);
	tp_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_secret_in_last_blob_of_many, teardown),
		cmocka_unit_test_teardown(test_first_secret_in_walk_order, teardown),
		cmocka_unit_test_teardown(test_clean_push, teardown),
		cmocka_unit_test_teardown(test_scanned_blobs_skipped, teardown),
		cmocka_unit_test_teardown(test_values_found, teardown),
		cmocka_unit_test_teardown(test_value_in_commit_header, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests_name("pushscan", tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
