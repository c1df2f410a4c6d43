/* test_scanstream.c: the secret scanner over a stream (scanstream.h): a secret split
 * across every chunk boundary, in windows that slide at every offset, is found on its
 * line, as scan_buffer finds it in the whole; clean streams stay clean; UTF-16 text too.
 * The secrets are split across string literals so that this file, pushed to a sandboxd,
 * does not trip the scanner it tests. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/proto/scanstream.h"
#include "sandboxd/common/banned.h"

#define AWS_ID "AKIA" "QZ7X2MLP4RT6VW3Y"
#define PEM "-----BEGIN RSA PRIVATE" " KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lg\n"

static struct scanstream s;

/* d[0..n) fed in chunks of `chunk` bytes (the first one `first` bytes), windows of step. */
static int stream(const unsigned char *d, size_t n, size_t first, size_t chunk, size_t step,
		  struct scan_hit *hit)
{
	size_t i = 0;

	scanstream_init(&s, step);
	if (first > n)
		first = n;
	if (scanstream_feed(&s, d, first))
		return scanstream_end(&s, hit);
	for (i = first; i < n; i += chunk)
		if (scanstream_feed(&s, d + i, n - i < chunk ? n - i : chunk))
			break;
	return scanstream_end(&s, hit);
}

/* The stream's answer, for every way of cutting it in two and in small chunks, is
 * scan_buffer's on the whole. */
static void same_as_buffer(const unsigned char *d, size_t n, size_t step)
{
	struct scan_hit want, got;
	int found = scan_buffer(d, n, &want);

	for (size_t cut = 0; cut <= n; cut++) {
		assert_int_equal(stream(d, n, cut, n ? n : 1, step, &got), found);
		assert_ptr_equal(got.rule, want.rule);
		assert_int_equal(got.line, want.line);
	}
	for (size_t chunk = 1; chunk <= 7; chunk++) {
		assert_int_equal(stream(d, n, 0, chunk, step, &got), found);
		assert_ptr_equal(got.rule, want.rule);
		assert_int_equal(got.line, want.line);
	}
}

static void test_split_at_every_boundary(void **state)
{
	const char *const secrets[] = { "key=" AWS_ID "\n", PEM,
					"token: ghp" "_R8cTqW2nZk5yHb0mXv7LpD4sJf9aGe3uNi6o\n" };
	unsigned char buf[6000];

	(void)state;
	for (size_t k = 0; k < sizeof(secrets) / sizeof(secrets[0]); k++) {
		size_t len = strlen(secrets[k]);

		/* After 2990 bytes of text with a line feed every 50: past the first window's
		 * slide for the small steps below, and on line 60. */
		for (size_t i = 0; i < 2990; i++)
			buf[i] = i % 50 == 49 ? '\n' : ' ';
		memcpy(buf + 2990, secrets[k], len);
		same_as_buffer(buf, 2990 + len, 0);
		same_as_buffer(buf, 2990 + len, 1);
		same_as_buffer(buf, 2990 + len, 97);
		same_as_buffer(buf, 2990 + len, 500);
	}
}

/* A secret at every offset of a stream scanned by small windows: found, on its line. */
static void test_every_offset(void **state)
{
	unsigned char buf[3200];
	struct scan_hit hit;
	size_t len = strlen(AWS_ID);

	(void)state;
	for (size_t at = 0; at + len <= sizeof(buf); at += 13) {
		size_t lines = 1;

		memset(buf, '.', sizeof(buf));
		for (size_t i = 100; i < at; i += 100)
			buf[i] = '\n', lines++;
		memcpy(buf + at, AWS_ID, len);
		for (size_t step = 1; step <= 300; step += 37) {
			assert_int_equal(stream(buf, sizeof(buf), 0, 64, step, &hit), 1);
			assert_string_equal(hit.rule, "AWS access key id");
			assert_int_equal(hit.line, lines);
		}
	}
}

/* Letters touching a split key make it no key, as in the whole. */
static void test_bounds_across_windows(void **state)
{
	unsigned char buf[4000];
	struct scan_hit hit;

	(void)state;
	memset(buf, ' ', sizeof(buf));
	memcpy(buf + 2500, "Z" AWS_ID, 21);
	for (size_t step = 1; step <= 4000; step = step * 3 + 1)
		assert_int_equal(stream(buf, sizeof(buf), 0, 100, step, &hit), 0);
	buf[2500] = ' ';
	for (size_t step = 1; step <= 4000; step = step * 3 + 1)
		assert_int_equal(stream(buf, sizeof(buf), 0, 100, step, &hit), 1);
}

static void test_clean_and_empty(void **state)
{
	unsigned char *big = malloc(300000);
	struct scan_hit hit = { (const char *)1, 7 };

	(void)state;
	assert_non_null(big);
	for (size_t i = 0; i < 300000; i++)
		big[i] = (unsigned char)("abc \n"[i % 5]);
	assert_int_equal(stream(big, 300000, 1000, 4096, 0, &hit), 0);
	assert_null(hit.rule);
	assert_int_equal(hit.line, 0);
	assert_int_equal(stream(NULL, 0, 0, 1, 0, &hit), 0);
	/* A key past several full windows: found on its line. */
	memcpy(big + 250000, " " AWS_ID " ", 22);
	assert_int_equal(stream(big, 300000, 0, 4096, 0, &hit), 1);
	assert_string_equal(hit.rule, "AWS access key id");
	assert_int_equal(hit.line, 1 + 250000 / 5);
	free(big);
}

/* UTF-16 text, with and without a byte-order mark, split anywhere (also inside a code
 * unit): scanned as text, as scan_buffer does. */
static void test_utf16(void **state)
{
	const char *text = "first line\nsecond: " AWS_ID " end\n";
	unsigned char buf[200];

	(void)state;
	for (int le = 0; le < 2; le++)
		for (int bom = 0; bom < 2; bom++) {
			size_t n = 0;

			if (bom) {
				buf[n++] = le ? 0xff : 0xfe;
				buf[n++] = le ? 0xfe : 0xff;
			}
			for (const char *p = text; *p; p++) {
				buf[n++] = le ? (unsigned char)*p : 0;
				buf[n++] = le ? 0 : (unsigned char)*p;
			}
			same_as_buffer(buf, n, 0);
			same_as_buffer(buf, n, 5);
			{
				struct scan_hit hit;
				assert_int_equal(stream(buf, n, 3, 3, 5, &hit), 1);
				assert_int_equal(hit.line, 2);
			}
		}
}

/* Feeding after the end or after a hit changes nothing. */
static void test_after_hit(void **state)
{
	const char *a = "x " AWS_ID "\n";
	struct scan_hit hit;

	(void)state;
	scanstream_init(&s, 0);
	assert_int_equal(scanstream_feed(&s, a, 10), 0);
	assert_int_equal(scanstream_feed(&s, a + 10, strlen(a) - 10), 0);
	assert_int_equal(scanstream_end(&s, &hit), 1);
	assert_string_equal(hit.rule, "AWS access key id");
	assert_int_equal(scanstream_feed(&s, "more", 4), 1);
	assert_int_equal(scanstream_end(&s, &hit), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_at_every_boundary),
		cmocka_unit_test(test_every_offset),
		cmocka_unit_test(test_bounds_across_windows),
		cmocka_unit_test(test_clean_and_empty),
		cmocka_unit_test(test_utf16),
		cmocka_unit_test(test_after_hit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
