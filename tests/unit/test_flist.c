/* test_flist.c: file-list.sh's records read by flist: known records, refusals, bounds, the
 * 10,000-entry cut, and the same entries whatever the pieces the bytes come in. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/flist.h"
#include "sandboxd/common/banned.h"

/* What the callback saw: "<type> <mode> <size> <mtime> <path> <name>\n" per entry. */
struct seen {
	char text[8192];
	size_t len;
	unsigned n;
	int stop_at;        /* return ERR_NOMEM at this entry (1-based); 0: never */
};

static int record(void *arg, const struct flist_entry *ent)
{
	struct seen *s = arg;
	int w;

	s->n++;
	if (s->stop_at && (int)s->n == s->stop_at)
		return ERR_NOMEM;
	if (s->len < sizeof(s->text)) {
		w = snprintf(s->text + s->len, sizeof(s->text) - s->len, "%d %o %llu %lld %s %s\n",
			     ent->type, ent->mode, (unsigned long long)ent->size,
			     (long long)ent->mtime, ent->path, ent->name);
		if (w > 0)
			s->len += (size_t)w;
		if (s->len > sizeof(s->text))
			s->len = sizeof(s->text);
	}
	return 0;
}

/* Feeds in[0..n) in pieces of step bytes into a reader of root; *out gets what it saw. */
static void feed(const char *root, const char *in, size_t n, size_t step, struct seen *out,
		 struct flist *p)
{
	memset(out, 0, sizeof(*out));
	assert_int_equal(flist_init(p, root, record, out), 0);
	for (size_t i = 0; i < n; i += step)
		assert_int_equal(flist_feed(p, in + i, n - i < step ? n - i : step), 0);
}

static void test_records(void **state)
{
	static const char in[] =
		"f 644 12 1700000000.1234567890 a.txt\0"
		"d 755 4096 1700000001.5 src\0"
		"f 4755 0 1700000002 src/run\0"
		"l 777 7 1700000003.0 link\0"
		"p 600 0 -5.25 fifo\0"
		"s 1777 0 0 sock with spaces\0";
	static const char want[] =
		"1 644 12 1700000000 /w/r/a.txt a.txt\n"
		"2 755 4096 1700000001 /w/r/src src\n"
		"1 4755 0 1700000002 /w/r/src/run run\n"
		"3 777 7 1700000003 /w/r/link link\n"
		"4 600 0 -5 /w/r/fifo fifo\n"
		"4 1777 0 0 /w/r/sock with spaces sock with spaces\n";
	struct flist *p = malloc(sizeof(*p));
	struct seen *s = malloc(sizeof(*s)), *one = malloc(sizeof(*one));

	/* Whatever the pieces, the same entries. */
	feed("/w/r", in, sizeof(in) - 1, sizeof(in), one, p);
	assert_string_equal(one->text, want);
	assert_int_equal(p->count, 6);
	assert_int_equal(p->dropped, 0);
	assert_false(p->truncated);
	for (size_t step = 1; step < 40; step++) {
		feed("/w/r", in, sizeof(in) - 1, step, s, p);
		assert_string_equal(s->text, want);
	}
	/* The root itself: no doubled '/'. */
	feed("/", "d 755 0 1 etc\0", 14, 14, s, p);
	assert_string_equal(s->text, "2 755 0 1 /etc etc\n");
	free(p);
	free(s);
	free(one);
}

static void bad(const char *rec)
{
	struct flist_entry ent;
	size_t off, len;

	if (flist_parse_record(rec, strlen(rec), &ent, &off, &len) != ERR_INVALID)
		fail_msg("'%s' was accepted", rec);
}

static void test_refused(void **state)
{
	bad("");
	bad("f");
	bad("f ");
	bad("F 644 1 1 a");             /* not a lower-case letter */
	bad("f 648 1 1 a");             /* not octal */
	bad("f 17777 1 1 a");           /* past 07777 */
	bad("f 644 -1 1 a");
	bad("f 644 9223372036854775808 1 a");  /* past INT64_MAX */
	bad("f 644 1 1");               /* no path */
	bad("f 644 1 1 ");
	bad("f 644 1 1 /abs");
	bad("f 644 1 1 a//b");
	bad("f 644 1 1 a/");
	bad("f 644 1 1 ./a");
	bad("f 644 1 1 a/../../etc");
	bad("f 644 1 1 ..");
	bad("f 644 1 1. a");            /* a '.' without a fraction */
	bad("f 644 1 x a");
	bad("f  644 1 1 a");
	bad("f 644 1 99999999999999999999 a");
	/* A NUL inside is a record's end, never part of a name. */
	struct flist_entry ent;
	size_t off, len;
	assert_int_equal(flist_parse_record("f 644 1 1 a\0b", 13, &ent, &off, &len), ERR_INVALID);
	assert_int_equal(flist_parse_record("f 644 1 1 a b", 13, &ent, &off, &len), 0);
	assert_int_equal(off, 10);
	assert_int_equal(len, 3);

	/* Dropped records do not stop the rest, nor count. */
	struct flist *p = malloc(sizeof(*p));
	struct seen *s = malloc(sizeof(*s));
	static const char in[] = "junk\0f 644 1 1 ok\0f 644 1 1 ../up\0";
	feed("/r", in, sizeof(in) - 1, 5, s, p);
	assert_string_equal(s->text, "1 644 1 1 /r/ok ok\n");
	assert_int_equal(p->dropped, 2);
	/* A last record without its NUL is never handed on. */
	feed("/r", "f 644 1 1 cut", 13, 13, s, p);
	assert_int_equal(s->n, 0);
	/* Roots that are not absolute or are too long. */
	assert_int_equal(flist_init(p, "rel", record, s), ERR_INVALID);
	char *longroot = malloc(FLIST_PATH_MAX + 1);
	longroot[0] = '/';
	memset(longroot + 1, 'a', FLIST_PATH_MAX - 1);
	longroot[FLIST_PATH_MAX] = 0;
	assert_int_equal(flist_init(p, longroot, record, s), ERR_INVALID);
	longroot[FLIST_PATH_MAX - 1] = 0;
	assert_int_equal(flist_init(p, longroot, record, s), 0);
	free(longroot);
	free(p);
	free(s);
}

/* A record over FLIST_REC_MAX is dropped to its NUL; a path of FLIST_PATH_MAX bytes too;
 * one byte shorter goes through. */
static void test_bounds(void **state)
{
	size_t cap = FLIST_REC_MAX * 3;
	char *in = malloc(cap);
	struct flist *p = malloc(sizeof(*p));
	struct seen *s = malloc(sizeof(*s));
	size_t n = 0, rel;

	memset(in, 'x', FLIST_REC_MAX + 10);        /* too long: dropped */
	n = FLIST_REC_MAX + 10;
	in[n++] = 0;
	/* "/r/" + rel = FLIST_PATH_MAX bytes: dropped. */
	rel = FLIST_PATH_MAX - 3;
	memcpy(in + n, "f 1 1 1 ", 8);
	memset(in + n + 8, 'b', rel);
	n += 8 + rel;
	in[n++] = 0;
	/* One shorter: kept. */
	rel--;
	memcpy(in + n, "f 1 1 1 ", 8);
	memset(in + n + 8, 'c', rel);
	n += 8 + rel;
	in[n++] = 0;
	for (size_t step = 1000; step <= n; step += 3000) {
		feed("/r", in, n, step, s, p);
		assert_int_equal(s->n, 1);
		assert_int_equal(p->dropped, 2);
		assert_int_equal(strlen(p->path), FLIST_PATH_MAX - 1);
	}
	free(in);
	free(p);
	free(s);
}

/* 10,000 entries go on; the 10,001st sets truncated, and nothing more is handed on. */
static void test_truncated(void **state)
{
	struct flist *p = malloc(sizeof(*p));
	struct seen *s = malloc(sizeof(*s));
	char rec[64];

	for (int total = FLIST_MAX; total <= FLIST_MAX + 2; total++) {
		memset(s, 0, sizeof(*s));
		assert_int_equal(flist_init(p, "/d", record, s), 0);
		for (int i = 0; i < total; i++) {
			int len = snprintf(rec, sizeof(rec), "f 644 1 1 f%d", i);
			assert_int_equal(flist_feed(p, rec, (size_t)len + 1), 0);
		}
		assert_int_equal(s->n, FLIST_MAX);
		assert_int_equal(p->truncated, total > FLIST_MAX);
	}
	/* The callback's code stops the reading. */
	memset(s, 0, sizeof(*s));
	s->stop_at = 2;
	assert_int_equal(flist_init(p, "/d", record, s), 0);
	assert_int_equal(flist_feed(p, "f 1 1 1 a\0f 1 1 1 b\0f 1 1 1 c\0", 30), ERR_NOMEM);
	assert_int_equal(s->n, 2);
	free(p);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests_name("flist", tests, NULL, NULL);
}
