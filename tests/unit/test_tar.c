/* test_tar.c: the one-file tar writer and the bounded ustar/pax reader. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/tar.h"
#include "../common/tar_whole.h"
#include "sandboxd/common/banned.h"

/* A header block as Go's archive/tar (Docker) writes it: POSIX magic unless gnu. */
static void mkheader(unsigned char *h, const char *name, char type, unsigned mode,
		     const char *size_field, int gnu)
{
	unsigned sum = 0;

	memset(h, 0, 512);
	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	snprintf((char *)h + 100, 8, "%07o", mode);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	memcpy(h + 124, size_field, strlen(size_field) < 12 ? strlen(size_field) : 12);
	snprintf((char *)h + 136, 12, "%011o", 1700000000);
	h[156] = (unsigned char)type;
	if (gnu)
		memcpy(h + 257, "ustar  ", 8);
	else
		memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static char *octal(uint64_t v)
{
	static char s[24];
	snprintf(s, sizeof(s), "%011llo", (unsigned long long)v);
	return s;
}

/* name + data as one archive, with two end blocks. */
static size_t mkarchive(unsigned char *out, const char *name, char type, const void *data,
			size_t len)
{
	size_t n = 512;

	mkheader(out, name, type, 0644, octal(len), 0);
	memcpy(out + n, data, len);
	n += (len + 511) / 512 * 512;
	memset(out + 512 + len, 0, n - 512 - len + 1024);
	return n + 1024;
}

static void test_read_simple(void **state)
{
	unsigned char a[4096];
	size_t n = mkarchive(a, "hello.txt", '0', "hello\n", 6);
	struct tar_file f;
	struct err e;

	assert_int_equal(n, 2048);
	assert_int_equal(read_whole(a, n, 100, &f, NULL, &e), 0);
	assert_string_equal(f.name, "hello.txt");
	assert_int_equal(f.size, 6);
	assert_int_equal(f.mode, 0644);
	assert_int_equal(f.mtime, 1700000000);
	assert_memory_equal(f.data, "hello\n", 6);
	tar_file_release(&f);
	/* an empty file */
	n = mkarchive(a, "empty", '0', "", 0);
	assert_int_equal(read_whole(a, n, 100, &f, NULL, &e), 0);
	assert_int_equal(f.size, 0);
	assert_non_null(f.data);
	tar_file_release(&f);
	/* exactly one block of data, and the limit exactly */
	memset(a + 3000, 'z', 512);
	n = mkarchive(a, "block", '0', a + 3000, 512);
	assert_int_equal(read_whole(a, n, 512, &f, NULL, &e), 0);
	assert_int_equal(f.size, 512);
	assert_int_equal(f.data[511], 'z');
	tar_file_release(&f);
}

/* The same archive fed in two pieces cut at every byte, and one byte at a time. */
static void test_read_every_split(void **state)
{
	unsigned char a[4096], bin[700];
	size_t n, cut;
	struct err e;

	for (size_t i = 0; i < sizeof(bin); i++)
		bin[i] = (unsigned char)(i * 7 + 3);
	n = mkarchive(a, "bin.dat", '0', bin, sizeof(bin));
	for (cut = 0; cut <= n; cut++) {
		struct tar_reader r;
		struct tar_file f;

		tar_reader_init(&r, 1000);
		assert_int_equal(tar_reader_feed(&r, a, cut, &e), 0);
		assert_int_equal(tar_reader_feed(&r, a + cut, n - cut, &e), 0);
		assert_int_equal(tar_reader_finish(&r, &f, &e), 0);
		assert_int_equal(f.size, sizeof(bin));
		assert_memory_equal(f.data, bin, sizeof(bin));
		tar_file_release(&f);
		tar_reader_release(&r);
	}
	{
		struct tar_reader r;
		struct tar_file f;

		tar_reader_init(&r, 1000);
		for (cut = 0; cut < n; cut++)
			assert_int_equal(tar_reader_feed(&r, a + cut, 1, &e), 0);
		assert_int_equal(tar_reader_finish(&r, &f, &e), 0);
		assert_memory_equal(f.data, bin, sizeof(bin));
		tar_file_release(&f);
		tar_reader_release(&r);
	}
}

/* pax: a long path and a size that overrides the header's, GNU magic, base-256 size. */
static void test_read_pax(void **state)
{
	unsigned char a[8192];
	char longname[300], rec[400];
	size_t n = 0;
	int rl;
	struct tar_file f;
	struct err e;

	memset(longname, 'n', 250);
	longname[250] = 0;
	/* "NNN path=<250 n>\n": 3 + 1 + 5 + 250 + 1 = 260 */
	rl = snprintf(rec, sizeof(rec), "260 path=%s\n10 size=3\n22 mtime=1700000000.5\n", longname);
	mkheader(a, "PaxHeaders.0/x", 'x', 0644, octal((uint64_t)rl), 0);
	memcpy(a + 512, rec, (size_t)rl);
	memset(a + 512 + rl, 0, 512 - (size_t)rl);
	n = 1024;
	mkheader(a + n, "truncated-name", '0', 0600, octal(0), 0);  /* size 0 here, 3 in pax */
	n += 512;
	memcpy(a + n, "abc", 3);
	memset(a + n + 3, 0, 509 + 1024);
	n += 512 + 1024;
	assert_int_equal(read_whole(a, n, 100, &f, NULL, &e), 0);
	assert_string_equal(f.name, longname);
	assert_int_equal(f.size, 3);
	assert_int_equal(f.mode, 0600);
	assert_memory_equal(f.data, "abc", 3);
	tar_file_release(&f);

	/* GNU magic and a base-256 size */
	unsigned char size256[12] = {0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};
	memset(a, 0, 512 * 4);
	mkheader(a, "gnu", '0', 0644, "", 1);
	memcpy(a + 124, size256, 12);
	{
		unsigned sum = 0;
		memset(a + 148, ' ', 8);
		for (int i = 0; i < 512; i++)
			sum += a[i];
		snprintf((char *)a + 148, 8, "%06o", sum);
	}
	memcpy(a + 512, "12345", 5);
	assert_int_equal(read_whole(a, 2048, 100, &f, NULL, &e), 0);
	assert_int_equal(f.size, 5);
	assert_memory_equal(f.data, "12345", 5);
	tar_file_release(&f);
	/* a global pax header is skipped */
	rl = snprintf(rec, sizeof(rec), "19 comment=global\n");
	mkheader(a, "global", 'g', 0644, octal((uint64_t)rl), 0);
	memset(a + 512, 0, 512);
	memcpy(a + 512, rec, (size_t)rl);
	n = 1024 + mkarchive(a + 1024, "after", '0', "xy", 2);
	assert_int_equal(read_whole(a, n, 100, &f, NULL, &e), 0);
	assert_string_equal(f.name, "after");
	tar_file_release(&f);
}

static void test_read_refusals(void **state)
{
	unsigned char a[4096];
	size_t n;
	struct tar_file f;
	struct err e;
	char type = 0;

	n = mkarchive(a, "dir/", '5', "", 0);
	assert_int_equal(read_whole(a, n, 100, &f, &type, &e), ERR_INVALID);
	assert_int_equal(type, TAR_DIR);
	assert_string_equal(e.msg, "'dir/' is a directory");
	assert_null(f.data);
	n = mkarchive(a, "link", '2', "", 0);
	assert_int_equal(read_whole(a, n, 100, &f, &type, &e), ERR_INVALID);
	assert_int_equal(type, TAR_SYMLINK);
	n = mkarchive(a, "fifo", '6', "", 0);
	assert_int_equal(read_whole(a, n, 100, &f, &type, &e), ERR_INVALID);
	assert_int_equal(type, TAR_FIFO);
	n = mkarchive(a, "longlink", 'L', "x", 1);
	assert_int_equal(read_whole(a, n, 100, &f, &type, &e), ERR_FAIL);
	/* too big: known from the header, before any data */
	n = mkarchive(a, "big", '0', a + 2000, 101);
	{
		struct tar_reader r;

		tar_reader_init(&r, 100);
		assert_int_equal(tar_reader_feed(&r, a, 512, &e), ERR_TOOBIG);
		assert_int_equal(r.file.size, 101);
		assert_string_equal(e.msg, "'big' is 101 bytes, more than the limit of 100");
		assert_int_equal(tar_reader_feed(&r, a + 512, 10, &e), ERR_TOOBIG);
		assert_int_equal(tar_reader_finish(&r, &f, &e), ERR_TOOBIG);
		tar_reader_release(&r);
	}
	assert_int_equal(read_whole(a, n, 100, &f, NULL, &e), ERR_TOOBIG);
	assert_int_equal(f.size, 101);
	/* two files */
	n = mkarchive(a, "one", '0', "1", 1);
	n = 1024 + mkarchive(a + 1024, "two", '0', "2", 1);
	assert_int_equal(read_whole(a, n, 100, &f, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "more than one"));
	/* nothing at all, only zeros */
	memset(a, 0, 1024);
	assert_int_equal(read_whole(a, 0, 100, &f, NULL, &e), ERR_FAIL);
	assert_int_equal(read_whole(a, 1024, 100, &f, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "no file"));
}

static void test_read_malformed(void **state)
{
	unsigned char a[4096], b[4096];
	size_t n = mkarchive(a, "f", '0', "data", 4), cut;
	struct tar_file f;
	struct err e;

	/* every truncation fails, none succeeds */
	for (cut = 0; cut < 1024 + 512; cut++) {
		int rc = read_whole(a, cut, 100, &f, NULL, &e);
		assert_int_equal(rc, ERR_FAIL);
		assert_null(f.data);
	}
	assert_int_equal(read_whole(a, n, 100, &f, NULL, &e), 0);
	tar_file_release(&f);
	/* checksum */
	memcpy(b, a, n);
	b[0] = 'g';
	assert_int_equal(read_whole(b, n, 100, &f, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "checksum"));
	/* no magic (a v7 header) */
	memcpy(b, a, n);
	memset(b + 257, 0, 8);
	assert_int_equal(read_whole(b, n, 100, &f, NULL, &e), ERR_FAIL);
	/* bad octal digits and an overlong number (checksum made right each time) */
	static const char *bad_sizes[] = {"0000000008", "abc", "7777777777x",
					  "12 34", "-1"};
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(*bad_sizes); i++) {
		mkheader(b, "f", '0', 0644, bad_sizes[i], 0);
		memset(b + 512, 0, 2048);
		assert_int_equal(read_whole(b, 2048, 100, &f, NULL, &e), ERR_FAIL);
	}
	/* a negative base-256 size, and one wider than 64 bits */
	mkheader(b, "f", '0', 0644, "", 0);
	memset(b + 124, 0xff, 12);
	{
		unsigned sum = 0;
		memset(b + 148, ' ', 8);
		for (int i = 0; i < 512; i++)
			sum += b[i];
		snprintf((char *)b + 148, 8, "%06o", sum);
	}
	assert_int_equal(read_whole(b, 2048, 100, &f, NULL, &e), ERR_FAIL);
	/* a pax header too large, and malformed pax records */
	mkheader(b, "p", 'x', 0644, octal(TAR_PAX_MAX + 1), 0);
	assert_int_equal(read_whole(b, 512, 100, &f, NULL, &e), ERR_FAIL);
	static const char *bad_pax[] = {"99 path=x\n", "5 path=x\n", "10 pathx\n", "x path=y\n",
					"10 path=x", "0 =\n", "12 size=1a\n", "9 size=\n"};
	for (size_t i = 0; i < sizeof(bad_pax) / sizeof(*bad_pax); i++) {
		size_t l = strlen(bad_pax[i]);
		memset(b, 0, 4096);
		mkheader(b, "p", 'x', 0644, octal(l), 0);
		memcpy(b + 512, bad_pax[i], l);
		mkarchive(b + 1024, "f", '0', "d", 1);
		assert_int_equal(read_whole(b, 1024 + 2048, 100, &f, NULL, &e), ERR_FAIL);
	}
	/* a pax header followed by the end of the archive */
	mkheader(b, "p", 'x', 0644, octal(0), 0);
	memset(b + 512, 0, 1024);
	assert_int_equal(read_whole(b, 1536, 100, &f, NULL, &e), ERR_FAIL);
}

/* Random corruption of a valid archive never crashes nor reads outside (ASan, valgrind). */
static void test_read_mutations(void **state)
{
	unsigned char a[4096], b[4096];
	size_t n = mkarchive(a, "f.txt", '0', "some content", 12);
	struct err e;

	srand(1);
	for (int i = 0; i < 20000; i++) {
		struct tar_file f;
		size_t len = (size_t)rand() % (n + 1);

		memcpy(b, a, n);
		for (int k = 0; k < 1 + rand() % 4; k++)
			b[(size_t)rand() % n] = (unsigned char)rand();
		if (read_whole(b, len, 64, &f, NULL, &e) == 0) {
			assert_true(f.size <= 64);
			tar_file_release(&f);
		}
	}
}

static void test_write_layout(void **state)
{
	struct buf b;
	struct err e;
	const unsigned char *h;
	unsigned sum = 0;

	buf_init(&b, 1 << 20);
	assert_int_equal(tar_write_file(&b, "a/bc/file.sh", 0100755, 61000, 1700000000, "#!/bin/sh\n", 10, &e), 0);
	assert_int_equal(b.len, tar_write_size("a/bc/file.sh", 10));
	assert_int_equal(b.len, 512 * 4 + 1024);
	h = (const unsigned char *)b.data;
	assert_string_equal((const char *)h, "a/");
	assert_int_equal(h[156], '5');
	assert_string_equal((const char *)h + 100, "0000755");
	assert_string_equal((const char *)h + 108, "0167110");  /* 61000 */
	assert_string_equal((const char *)h + 116, "0167110");
	assert_memory_equal(h + 257, "ustar\0" "00", 8);
	assert_string_equal((const char *)h + 512, "a/bc/");
	h += 1024;
	assert_string_equal((const char *)h, "a/bc/file.sh");
	assert_int_equal(h[156], '0');
	assert_string_equal((const char *)h + 100, "0000755");  /* type bits dropped */
	assert_string_equal((const char *)h + 124, "00000000012");
	assert_string_equal((const char *)h + 136, "14524770400");
	for (int i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	{
		char want[8];
		snprintf(want, sizeof(want), "%06o", sum);
		assert_string_equal((const char *)h + 148, want);
		assert_int_equal(h[155], ' ');
	}
	assert_memory_equal(h + 512, "#!/bin/sh\n", 10);
	for (size_t i = 512 * 4 + 10; i < b.len; i++)
		assert_int_equal((unsigned char)b.data[i], 0);
	buf_release(&b);
}

/* What the writer makes, the reader reads back: binary content, long names through pax. */
static void test_roundtrip(void **state)
{
	char name[256];
	unsigned char data[3000];
	struct buf b;
	struct tar_file f;
	struct err e;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i ^ (i >> 3));
	memset(name, 'q', 200);
	name[200] = 0;
	for (size_t nl = 1; nl <= 200; nl += 33) {
		name[nl] = 0;
		buf_init(&b, 1 << 20);
		assert_int_equal(tar_write_file(&b, name, 0640, 61000, 42, data, nl * 13, &e), 0);
		assert_int_equal(b.len, tar_write_size(name, nl * 13));
		assert_int_equal(read_whole(b.data, b.len, 1 << 20, &f, NULL, &e), 0);
		assert_string_equal(f.name, name);
		assert_int_equal(f.size, nl * 13);
		assert_int_equal(f.mode, 0640);
		assert_int_equal(f.mtime, 42);
		assert_memory_equal(f.data, data, nl * 13);
		tar_file_release(&f);
		buf_release(&b);
		name[nl] = 'q';
	}
	/* a long directory name in front: the reader sees it as a directory */
	name[150] = '/';
	name[200] = 0;
	buf_init(&b, 1 << 20);
	assert_int_equal(tar_write_file(&b, name, 0644, 61000, 0, "x", 1, &e), 0);
	assert_int_equal(b.len, tar_write_size(name, 1));
	{
		char type = 0;
		assert_int_equal(read_whole(b.data, b.len, 100, &f, &type, &e), ERR_INVALID);
		assert_int_equal(type, TAR_DIR);
	}
	buf_release(&b);
}

static void test_write_refusals(void **state)
{
	static const char *bad[] = {"", "/abs", "a//b", "a/../b", "..", ".", "a/", "a/./b", "./a"};
	struct buf b;
	struct err e;
	char huge[TAR_NAME_MAX + 2];

	buf_init(&b, 1 << 20);
	assert_int_equal(buf_puts(&b, "keep"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(tar_write_file(&b, bad[i], 0644, 61000, 0, "x", 1, &e), ERR_INVALID);
	memset(huge, 'a', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = 0;
	assert_int_equal(tar_write_file(&b, huge, 0644, 61000, 0, "x", 1, &e), ERR_INVALID);
	assert_int_equal(tar_write_file(&b, "f", 0644, 61000, -1, "x", 1, &e), ERR_INVALID);
	assert_string_equal(b.data, "keep");
	buf_release(&b);
	/* the buffer's maximum: refused whole, the buffer left as it was */
	buf_init(&b, 2048 + 4 - 1);
	assert_int_equal(buf_puts(&b, "keep"), 0);
	assert_int_equal(tar_write_file(&b, "f", 0644, 61000, 0, "x", 1, &e), ERR_TOOBIG);
	assert_int_equal(b.len, 4);
	assert_string_equal(b.data, "keep");
	buf_release(&b);
	buf_init(&b, 2048);
	assert_int_equal(tar_write_file(&b, "f", 0644, 61000, 0, "x", 1, &e), 0);
	assert_int_equal(b.len, 2048);
	buf_release(&b);
	assert_int_equal(tar_write_size("f", (size_t)TAR_SIZE_MAX + 1), 0);
}

/* Head, bytes, tail: the same archive as tar_write_file, and a sink reads it back. */
struct sunk {
	char data[4096];
	size_t len;
	uint64_t size_seen;
};

static int sink(void *arg, const struct tar_reader *r, const char *data, size_t n, struct err *e)
{
	struct sunk *k = arg;

	k->size_seen = r->file.size;
	if (k->len + n > sizeof(k->data))
		return err_set(e, ERR_TOOBIG, "too much");
	memcpy(k->data + k->len, data, n);
	k->len += n;
	return 0;
}

static void test_write_in_pieces(void **state)
{
	char longname[300];
	const char *names[] = { "f", "a/b/c.txt", longname };
	size_t lens[] = { 0, 1, 511, 512, 513, 3000 };
	char data[3000];
	struct err e = { .msg = "" };

	memset(longname, 'n', sizeof(longname));
	memcpy(longname + 100, "/x/", 3);
	longname[sizeof(longname) - 1] = 0;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 31);
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			struct buf whole, parts;
			struct tar_reader r;
			struct tar_file f;
			struct sunk k = { .len = 0 };

			buf_init(&whole, 1 << 20);
			buf_init(&parts, 1 << 20);
			assert_int_equal(tar_write_file(&whole, names[i], 0640, 61000, 1700000000, data, lens[j], &e), 0);
			assert_int_equal(tar_write_head(&parts, names[i], 0640, 61000, 1700000000, lens[j], &e), 0);
			assert_int_equal(buf_append(&parts, data, lens[j]), 0);
			assert_int_equal(tar_write_tail(&parts, lens[j], &e), 0);
			assert_int_equal(parts.len, whole.len);
			assert_int_equal(parts.len, tar_write_size(names[i], lens[j]));
			assert_memory_equal(parts.data, whole.data, whole.len);

			buf_release(&parts);
			if (i > 0) {  /* with directory entries: not what the reader reads */
				buf_release(&whole);
				continue;
			}
			tar_reader_init(&r, 1 << 20);
			r.sink = sink;
			r.sink_arg = &k;
			assert_int_equal(tar_reader_feed(&r, whole.data, whole.len, &e), 0);
			assert_int_equal(tar_reader_finish(&r, &f, &e), 0);
			assert_null(f.data);
			assert_int_equal(f.size, lens[j]);
			assert_string_equal(f.name, names[i]);
			assert_int_equal(k.len, lens[j]);
			assert_memory_equal(k.data, data, lens[j]);
			if (lens[j])
				assert_int_equal(k.size_seen, lens[j]);
			tar_reader_release(&r);
			buf_release(&whole);
		}
	assert_int_equal(tar_write_head(&(struct buf){ NULL, 0, 0, 100 }, "../x", 0644, 61000, 0, 1, &e),
			 ERR_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_simple),
		cmocka_unit_test(test_read_every_split),
		cmocka_unit_test(test_read_pax),
		cmocka_unit_test(test_read_refusals),
		cmocka_unit_test(test_read_malformed),
		cmocka_unit_test(test_read_mutations),
		cmocka_unit_test(test_write_layout),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_write_refusals),
		cmocka_unit_test(test_write_in_pieces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
