/* test_packread.c: whole blobs from a pack and its version 2 index, built here byte by byte
 * (gitformat-pack(5)); everything the reader does not do fast answers ERR_NOTFOUND or
 * ERR_TOOBIG, so that the hook reads it through libgit2. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>
#include "sandboxd/git/packread.h"
#include "sandboxd/common/banned.h"

#define OIDLEN PACKREAD_OID_LEN

struct entry {
	unsigned char oid[OIDLEN];
	int type;             /* 3 blob, 6 a delta */
	const char *data;     /* what the zlib stream holds */
	size_t size;          /* what the header says (usually strlen(data)) */
	int large;            /* the index gives its offset through the 8-byte table */
};

static char dir[64];

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static void write_file(const char *name, const unsigned char *d, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pack/%s", dir, name);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(d, 1, n, f), n);
	fclose(f);
}

/* Writes pack-<name>.pack and .idx holding e[0..n) (sorted by oid by the caller). */
static void write_pack(const char *name, const struct entry *e, int n, const char *magic)
{
	unsigned char pack[8192] = { 0 }, idx[8192] = { 0 }, *p = pack + 12;
	uint32_t off[16], fan[256] = { 0 };
	size_t at = 0, nlarge = 0;
	char file[64];

	memcpy(pack, "PACK", 4);
	put32(pack + 4, 2);
	put32(pack + 8, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		size_t s = e[i].size;
		uLongf zlen = 1024;

		off[i] = (uint32_t)(p - pack);
		*p = (unsigned char)(e[i].type << 4 | (s & 15));
		for (s >>= 4; s; s >>= 7) {
			*p++ |= 0x80;
			*p = (unsigned char)(s & 0x7f);
		}
		p++;
		assert_int_equal(compress2(p, &zlen, (const Bytef *)e[i].data, strlen(e[i].data), 6),
				 Z_OK);
		p += zlen;
	}
	memset(p, 0, OIDLEN);  /* the checksum: never read */
	p += OIDLEN;
	memcpy(idx, magic, 4);
	put32(idx + 4, 2);
	for (int i = 0; i < n; i++)
		for (int b = e[i].oid[0]; b < 256; b++)
			fan[b]++;
	for (int b = 0; b < 256; b++)
		put32(idx + 8 + 4 * b, fan[b]);
	at = 8 + 1024;
	for (int i = 0; i < n; i++, at += OIDLEN)
		memcpy(idx + at, e[i].oid, OIDLEN);
	at += 4u * n;  /* CRCs (zero): never read */
	for (int i = 0; i < n; i++, at += 4)
		put32(idx + at, e[i].large ? 0x80000000u | (uint32_t)nlarge++ : off[i]);
	for (int i = 0; i < n; i++)
		if (e[i].large) {
			put32(idx + at, 0);
			put32(idx + at + 4, off[i]);
			at += 8;
		}
	memset(idx + at, 0, 2 * OIDLEN);
	at += 2 * OIDLEN;
	snprintf(file, sizeof(file), "pack-%s.pack", name);
	write_file(file, pack, (size_t)(p - pack));
	snprintf(file, sizeof(file), "pack-%s.idx", name);
	write_file(file, idx, at);
}

static int setup(void **state)
{
	char packdir[80];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_packread.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(packdir, sizeof(packdir), "%s/pack", dir);
	assert_int_equal(mkdir(packdir, 0700), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	return system(cmd);
}

static struct entry entries[] = {
	{ .oid = { 0x01, 1 }, .type = 3, .data = "hello\n", .size = 6 },
	{ .oid = { 0x42, 1 }, .type = 3, .data = "a blob of more than fifteen bytes, so a longer size",
	  .size = 51, .large = 1 },
	{ .oid = { 0x42, 2 }, .type = 6, .data = "delta", .size = 5 },
	{ .oid = { 0x80, 1 }, .type = 3, .data = "short", .size = 9 },   /* the header lies */
	{ .oid = { 0xff, 9 }, .type = 3, .data = "", .size = 0 },
};

static int read_blob(const struct packread *p, const unsigned char *oid, size_t max,
		     const char *want)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	unsigned char *data = (unsigned char *)"x";
	size_t len = 1;
	int rc;

	assert_non_null(d);
	rc = packread_blob(p, d, oid, max, &data, &len);
	if (rc == 0) {
		assert_int_equal(len, strlen(want));
		assert_memory_equal(data, want, len);
	} else {
		assert_null(data);
		assert_int_equal(len, 0);
	}
	free(data);
	libdeflate_free_decompressor(d);
	return rc;
}

static void test_blobs(void **state)
{
	struct packread *p = NULL;
	struct err e;
	unsigned char absent[OIDLEN] = { 0x42, 3 }, first[OIDLEN] = { 0x00 };

	(void)state;
	write_pack("a", entries, 5, "\377tOc");
	assert_int_equal(packread_open(&p, dir, &e), 0);
	assert_int_equal(read_blob(p, entries[0].oid, 1 << 20, "hello\n"), 0);
	assert_int_equal(read_blob(p, entries[1].oid, 1 << 20, entries[1].data), 0);
	assert_int_equal(read_blob(p, entries[4].oid, 1 << 20, ""), 0);
	/* a delta, and a header whose size is not what the stream inflates to: libgit2's */
	assert_int_equal(read_blob(p, entries[2].oid, 1 << 20, NULL), ERR_NOTFOUND);
	assert_int_equal(read_blob(p, entries[3].oid, 1 << 20, NULL), ERR_NOTFOUND);
	/* not in the pack, before its first name, past a bound */
	assert_int_equal(read_blob(p, absent, 1 << 20, NULL), ERR_NOTFOUND);
	assert_int_equal(read_blob(p, first, 1 << 20, NULL), ERR_NOTFOUND);
	assert_int_equal(read_blob(p, entries[1].oid, 50, NULL), ERR_TOOBIG);
	assert_int_equal(read_blob(p, entries[1].oid, 51, entries[1].data), 0);
	packread_free(p);
}

static void test_bad_index_skipped(void **state)
{
	struct packread *p = NULL;
	struct err e;

	(void)state;
	write_pack("b", entries, 1, "\377tOd");
	assert_int_equal(packread_open(&p, dir, &e), 0);
	assert_int_equal(read_blob(p, entries[0].oid, 1 << 20, NULL), ERR_NOTFOUND);
	packread_free(p);
}

static void test_no_packs(void **state)
{
	struct packread *p = NULL;
	struct err e;

	(void)state;
	assert_int_equal(packread_open(&p, "/nonexistent", &e), 0);
	assert_non_null(p);
	assert_int_equal(read_blob(p, entries[0].oid, 1 << 20, NULL), ERR_NOTFOUND);
	packread_free(p);
	packread_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_blobs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_index_skipped, setup, teardown),
		cmocka_unit_test(test_no_packs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
