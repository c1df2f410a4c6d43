/* test_capture.c: exec output capture: caps and the marker, masking (split, cut, every form of
 * a token), UTF-8 replacement, chunking that changes nothing, streams kept apart. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/proto/capture.h"
#include "sandboxd/proto/dstream.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

/* Shaped like a sandbox token, but its checksum is wrong: no scanner takes it for one. */
#define TOKEN "dst_Q9xVb7LmW2pK4sT8nR3yH6jD1fG5cZ0aE7uI000000"
#define FFFD "\xEF\xBF\xBD"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* Feeds in[0..n) to stream in chunks: 0 one shot, 1 byte at a time, else random sizes up to
 * chunk. */
static void feed(struct capture *c, int stream, const char *in, size_t n, size_t chunk)
{
	size_t i = 0;

	while (i < n) {
		size_t k = chunk == 0 ? n - i : chunk == 1 ? 1 : 1 + rnd() % chunk;

		if (k > n - i)
			k = n - i;
		assert_int_equal(capture_feed(c, stream, in + i, k), 0);
		i += k;
	}
}

/* The text of a stream fed with in[0..n) under o and the given secrets. The caller frees. */
static char *run(const struct capture_opts *o, const char *const *secrets, const char *in,
		 size_t n, size_t chunk, uint64_t *bytes, int *truncated)
{
	struct capture c;
	struct buf out;
	struct err e;

	capture_init(&c, o);
	for (size_t i = 0; secrets && secrets[i]; i++)
		assert_int_equal(capture_add_secret(&c, secrets[i], strlen(secrets[i]), &e), 0);
	feed(&c, CAPTURE_STDOUT, in, n, chunk);
	buf_init(&out, capture_text_max(o));
	assert_int_equal(capture_finish(&c, CAPTURE_STDOUT, &out, bytes, truncated, &e), 0);
	capture_release(&c);
	if (!out.data)
		return calloc(1, 1);
	return buf_detach(&out, NULL);
}

static void expect(const struct capture_opts *o, const char *const *secrets, const char *in,
		   size_t n, const char *want, int want_trunc)
{
	uint64_t bytes;
	int trunc;

	for (size_t chunk = 0; chunk < 4; chunk++) {
		char *got = run(o, secrets, in, n, chunk, &bytes, &trunc);

		assert_string_equal(got, want);
		assert_int_equal(bytes, n);
		assert_int_equal(trunc, want_trunc);
		free(got);
	}
}

static void test_whole_and_cut(void **state)
{
	struct capture_opts o = {4, 4, 8};

	expect(&o, NULL, "", 0, "", 0);
	expect(&o, NULL, "hello", 5, "hello", 0);
	expect(&o, NULL, "abcdefgh", 8, "abcdefgh", 0);           /* exactly head + tail */
	expect(&o, NULL, "abcdefghi", 9, "abcd\n[\xE2\x80\xA6 1 bytes omitted \xE2\x80\xA6]\nfghi", 1);
	expect(&o, NULL, "abc\ndefghijklmnop", 17,
	       "abc\n[\xE2\x80\xA6 9 bytes omitted \xE2\x80\xA6]\nmnop", 1);
	/* the defaults; NUL bytes are kept */
	{
		char *got = run(NULL, NULL, "a\0b", 3, 0, NULL, NULL);

		assert_memory_equal(got, "a\0b", 4);
		free(got);
	}
}

/* Caps of 0: only the marker (or nothing) is left. */
static void test_zero_caps(void **state)
{
	struct capture_opts o = {0, 0, 8}, h = {3, 0, 8}, t = {0, 3, 8};

	expect(&o, NULL, "", 0, "", 0);
	expect(&o, NULL, "xy", 2, "[\xE2\x80\xA6 2 bytes omitted \xE2\x80\xA6]\n", 1);
	expect(&h, NULL, "abcdef", 6, "abc\n[\xE2\x80\xA6 3 bytes omitted \xE2\x80\xA6]\n", 1);
	expect(&t, NULL, "abcdef", 6, "[\xE2\x80\xA6 3 bytes omitted \xE2\x80\xA6]\ndef", 1);
}

/* Random streams, random caps: one shot, a byte at a time and random chunks agree, and the
 * ring keeps exactly the last bytes. */
static void test_chunking_is_invisible(void **state)
{
	static const char *const secrets[] = {"s3cr3t-Token", "zzzzzzzz", NULL};
	char in[3000];

	for (int round = 0; round < 300; round++) {
		struct capture_opts o = {rnd() % 64, rnd() % 64, 1 + rnd() % 10};
		size_t n = rnd() % (round % 10 == 0 ? sizeof(in) : 200);
		char *want;
		uint64_t bytes;
		int trunc;

		for (size_t i = 0; i < n; i++) {
			uint32_t r = rnd() % 16;

			in[i] = r < 8 ? (char)('a' + r) : r < 10 ? 'z' : r < 12 ? '\n'
				: (char)(0x80 + rnd() % 0x80);
			if (r == 15 && i + 12 <= n) {
				memcpy(in + i, secrets[0], 12);
				i += 11;
			}
		}
		want = run(&o, secrets, in, n, 0, &bytes, &trunc);
		assert_int_equal(bytes, n);
		assert_int_equal(trunc, n > o.head + o.tail);
		for (size_t chunk = 1; chunk < 40; chunk += 7) {
			char *got = run(&o, secrets, in, n, chunk, NULL, NULL);

			assert_string_equal(got, want);
			free(got);
		}
		free(want);
	}
}

/* A secret split between two chunks (and three) at every position. */
static void test_secret_split(void **state)
{
	static const char *const secrets[] = {TOKEN, NULL};
	const char *pre = "token=", *post = " done\n";
	char in[128];
	size_t n = (size_t)snprintf(in, sizeof(in), "%s%s%s", pre, TOKEN, post);
	struct buf out;
	struct capture c;

	for (size_t cut = 0; cut <= n; cut++) {
		for (size_t cut2 = cut; cut2 <= n; cut2 += 5) {
			capture_init(&c, NULL);
			assert_int_equal(capture_add_secret(&c, TOKEN, strlen(TOKEN), NULL), 0);
			assert_int_equal(capture_feed(&c, 1, in, cut), 0);
			assert_int_equal(capture_feed(&c, 1, in + cut, cut2 - cut), 0);
			assert_int_equal(capture_feed(&c, 1, in + cut2, n - cut2), 0);
			buf_init(&out, 1 << 20);
			assert_int_equal(capture_finish(&c, 1, &out, NULL, NULL, NULL), 0);
			assert_string_equal(out.data, "token=*** done\n");
			buf_release(&out);
			capture_release(&c);
		}
	}
	/* and registered after the bytes arrived */
	capture_init(&c, NULL);
	assert_int_equal(capture_feed(&c, 1, in, n), 0);
	assert_int_equal(capture_add_secret(&c, TOKEN, strlen(TOKEN), NULL), 0);
	buf_init(&out, 1 << 20);
	assert_int_equal(capture_finish(&c, 1, &out, NULL, NULL, NULL), 0);
	assert_string_equal(out.data, "token=*** done\n");
	buf_release(&out);
	capture_release(&c);
	expect(NULL, secrets, in, n, "token=*** done\n", 0);
}

/* No fragment of fragment_min or more bytes of any secret appears in text. */
static void assert_no_fragment(const char *text, const char *secret, size_t min)
{
	size_t n = strlen(secret);

	for (size_t i = 0; i + min <= n; i++) {
		char frag[256];

		memcpy(frag, secret + i, min);
		frag[min] = 0;
		if (strstr(text, frag)) {
			print_error("fragment '%s' of '%s' in '%s'\n", frag, secret, text);
			fail();
		}
	}
}

/* A secret across the omitted middle, at every offset: the head's end and the tail's start
 * are masked; what is left beside the marker is shorter than fragment_min. */
static void test_secret_across_cut(void **state)
{
	static const char *const secrets[] = {TOKEN, NULL};
	struct capture_opts o = {32, 32, 8};
	size_t tl = strlen(TOKEN);
	char in[256];

	for (size_t off = 0; off + tl <= 200; off++) {
		size_t n = 200;
		char *got;
		int trunc;

		memset(in, '.', n);
		memcpy(in + off, TOKEN, tl);
		got = run(&o, secrets, in, n, 1 + off % 5, NULL, &trunc);
		assert_true(trunc);
		assert_no_fragment(got, TOKEN, 8);
		free(got);
	}
	/* Exactly: 20 bytes of the token end the head, 10 start the tail. */
	{
		struct capture_opts p = {24, 14, 8};
		char want[256];

		memset(in, 0, sizeof(in));
		memcpy(in, "abcd", 4);
		memcpy(in + 4, TOKEN, tl);               /* bytes 4..54 */
		memcpy(in + 4 + tl, "wxyz", 4);          /* the tail: the last 10 of it and wxyz */
		snprintf(want, sizeof(want), "abcd***\n[\xE2\x80\xA6 %zu bytes omitted \xE2\x80\xA6]\n***wxyz",
			 tl - 20 - 10);
		expect(&p, secrets, in, 8 + tl, want, 1);
		/* 7 bytes on each side stay (under fragment_min) */
		p.head = 4 + 7;
		p.tail = 7 + 4;
		snprintf(want, sizeof(want), "abcddst_Q9x\n[\xE2\x80\xA6 %zu bytes omitted \xE2\x80\xA6]\nI000000wxyz",
			 tl - 14);
		expect(&p, secrets, in, 8 + tl, want, 1);
		/* with fragment_min 4, they go too */
		p.fragment_min = 4;
		snprintf(want, sizeof(want), "abcd***\n[\xE2\x80\xA6 %zu bytes omitted \xE2\x80\xA6]\n***wxyz",
			 tl - 14);
		expect(&p, secrets, in, 8 + tl, want, 1);
	}
}

static size_t b64(const char *user, const char *tok, char *out)
{
	char in[256];
	int n = snprintf(in, sizeof(in), "%s%s", user, tok);

	base64_encode((const unsigned char *)in, (size_t)n, out);
	return strlen(out);
}

/* Every form of a token that a git config holds, and base64 under any user name. */
static void test_token_forms(void **state)
{
	/* a token with characters that percent-encoding changes */
	static const char *const toks[] = {TOKEN, "ab+c/d=e:f@g h~i_j.k-l%m"};

	for (size_t t = 0; t < 2; t++) {
		const char *tok = toks[t];
		struct capture c;
		struct buf out;
		char text[4096], enc[512], pct[256];
		size_t n = 0, pn;

		capture_init(&c, NULL);
		assert_int_equal(capture_add_token(&c, tok, strlen(tok), NULL), 0);
		assert_int_equal(c.nsecrets, t == 0 ? 7 : 9);
		for (int lower = 0; lower < 2; lower++) {
			pn = 0;
			for (const char *p = tok; *p; p++) {
				unsigned char ch = (unsigned char)*p;

				if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				    (ch >= '0' && ch <= '9') || strchr("-._~", ch))
					pct[pn++] = (char)ch;
				else
					pn += (size_t)snprintf(pct + pn, sizeof(pct) - pn,
							       lower ? "%%%02x" : "%%%02X", ch);
			}
			pct[pn] = 0;
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "url%d https://x-access-token:%s@example.com/o/r.git\n",
					      lower, pct);
		}
		n += (size_t)snprintf(text + n, sizeof(text) - n, "raw %s\n", tok);
		b64("x-access-token:", tok, enc);
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "extraheader = Authorization: Basic %s\n", enc);
		b64("t:", tok, enc);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "t %s\n", enc);
		b64("git:", tok, enc);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "git %s\n", enc);
		b64("oauth2:", tok, enc);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "oauth2 %s\n", enc);
		b64("user:", tok, enc);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "user %s\n", enc);
		feed(&c, 2, text, n, 3);
		buf_init(&out, 1 << 20);
		assert_int_equal(capture_finish(&c, 2, &out, NULL, NULL, NULL), 0);
		/* the standard forms whole, the others all but their user's and padding's part */
		assert_non_null(strstr(out.data, "raw ***\n"));
		assert_non_null(strstr(out.data, "url0 https://x-access-token:***@example.com/o/r.git"));
		assert_non_null(strstr(out.data, "url1 https://x-access-token:***@example.com/o/r.git"));
		assert_non_null(strstr(out.data, "Authorization: Basic ***\n"));
		assert_non_null(strstr(out.data, "t ***\n"));
		assert_non_null(strstr(out.data, "git ***\n"));
		assert_non_null(strstr(out.data, "oauth2 "));
		/* nothing of 8 characters from the token's part of any base64 stays */
		for (size_t a = 0; a < 3; a++) {
			char pad[300], e2[512];
			size_t tl = strlen(tok), j0 = (8 * a + 5) / 6, j1 = 8 * (a + tl) / 6;

			memset(pad, 'A', a);
			memcpy(pad + a, tok, tl);
			base64_encode((const unsigned char *)pad, a + tl, e2);
			e2[j1] = 0;
			assert_no_fragment(out.data, e2 + j0, 8);
		}
		assert_no_fragment(out.data, tok, 8);
		buf_release(&out);
		capture_release(&c);
	}
}

/* 3 MB of lines: the first and last 512 KiB, the marker with the right N, the counts. */
static void test_three_megabytes(void **state)
{
	size_t n = 3 * 1000 * 1000, len = 0;
	char *in = malloc(n), line[32];
	struct capture c;
	struct buf out;
	uint64_t bytes;
	int trunc, k;
	char marker[64];
	size_t H = CAPTURE_HEAD_DEFAULT, T = CAPTURE_TAIL_DEFAULT, ml;

	assert_non_null(in);
	for (int i = 0; len < n; i++) {
		k = snprintf(line, sizeof(line), "line %d\n", i);
		memcpy(in + len, line, (size_t)k < n - len ? (size_t)k : n - len);
		len += (size_t)k < n - len ? (size_t)k : n - len;
	}
	capture_init(&c, NULL);
	assert_int_equal(capture_add_token(&c, TOKEN, strlen(TOKEN), NULL), 0);
	for (size_t i = 0; i < n; i += 32768)
		assert_int_equal(capture_feed(&c, 1, in + i, n - i < 32768 ? n - i : 32768), 0);
	/* what it holds is bounded by the caps */
	assert_true(c.streams[0].cap <= H + T);
	buf_init(&out, capture_text_max(NULL));
	assert_int_equal(capture_finish(&c, 1, &out, &bytes, &trunc, NULL), 0);
	assert_int_equal(bytes, n);
	assert_true(trunc);
	assert_memory_equal(out.data, in, H);
	ml = (size_t)snprintf(marker, sizeof(marker), "%s[\xE2\x80\xA6 %zu bytes omitted \xE2\x80\xA6]\n",
			      in[H - 1] == '\n' ? "" : "\n", n - H - T);
	assert_memory_equal(out.data + H, marker, ml);
	assert_int_equal(out.len, H + ml + T);
	assert_memory_equal(out.data + H + ml, in + n - T, T);
	buf_release(&out);
	/* stderr untouched */
	buf_init(&out, capture_text_max(NULL));
	assert_int_equal(capture_finish(&c, 2, &out, &bytes, &trunc, NULL), 0);
	assert_int_equal(bytes, 0);
	assert_false(trunc);
	assert_int_equal(out.len, 0);
	buf_release(&out);
	capture_release(&c);
	free(in);
}

/* Unicode 15 §3.9, table 3-8 and its neighbours, and the WHATWG decoder's cases. */
static void test_utf8_vectors(void **state)
{
	static const struct {
		const char *in, *want;
	} v[] = {
		{"plain", "plain"},
		{"\xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\xA9", "\xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\xA9"},
		{"\xC0\xAF", FFFD FFFD},                        /* overlong '/' */
		{"\xE0\x80\xAF", FFFD FFFD FFFD},               /* overlong, 3 bytes */
		{"\xF0\x80\x80\xAF", FFFD FFFD FFFD FFFD},      /* overlong, 4 bytes */
		{"\xED\xA0\x80", FFFD FFFD FFFD},               /* surrogate D800 */
		{"\xED\xBF\xBF", FFFD FFFD FFFD},               /* surrogate DFFF */
		{"\xED\x9F\xBF", "\xED\x9F\xBF"},               /* D7FF is fine */
		{"\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD},      /* past U+10FFFF */
		{"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},       /* U+10FFFF is fine */
		{"\xF5\x80", FFFD FFFD},
		{"\xFF\xFE", FFFD FFFD},
		{"\x80\xBF", FFFD FFFD},                        /* stray continuations */
		{"a\xE2\x82", "a" FFFD},                        /* cut at the end: one */
		{"a\xF0\x9F\x98", "a" FFFD},
		{"\xE2\x82" "A", FFFD "A"},
		{"\xF0\x9F" "\xE2\x82\xAC", FFFD "\xE2\x82\xAC"},
		/* the Unicode standard's own example (table 3-8) */
		{"\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64",
		 "a" FFFD FFFD FFFD "b" FFFD "c" FFFD FFFD "d"},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		expect(NULL, NULL, v[i].in, strlen(v[i].in), v[i].want, 0);
	/* long runs of garbage, between valid runs of every length */
	for (size_t valid = 0; valid < 1500; valid += 499) {
		size_t n = 5000, wl = 0;
		char *in = malloc(n + 1), *want = malloc(3 * n + 1);

		assert_non_null(in);
		assert_non_null(want);
		for (size_t i = 0; i < n; i++) {
			in[i] = (i / (valid + 1)) % 2 ? '\xFF' : 'v';
			if (in[i] == 'v') {
				want[wl++] = 'v';
			} else {
				memcpy(want + wl, FFFD, 3);
				wl += 3;
			}
		}
		in[n] = want[wl] = 0;
		expect(NULL, NULL, in, n, want, 0);
		free(in);
		free(want);
	}
}

/* Characters cut by the head/tail split move into the omitted bytes; never a broken one. */
static void test_utf8_at_the_cut(void **state)
{
	struct capture_opts o = {4, 4, 8};
	/* "ab€" in the head: the € cut after 2 of its bytes is omitted */
	expect(&o, NULL, "ab\xE2\x82\xAC" "cdefg", 10,
	       "ab\n[\xE2\x80\xA6 4 bytes omitted \xE2\x80\xA6]\ndefg", 1);
	/* a 4-byte character whose last 2 bytes start the tail */
	expect(&o, NULL, "abcdXY\xF0\x9F\x98\x80xy", 12,
	       "abcd\n[\xE2\x80\xA6 6 bytes omitted \xE2\x80\xA6]\nxy", 1);
	/* ... or its last 3 */
	expect(&o, NULL, "abcdX\xF0\x9F\x98\x80x", 10,
	       "abcd\n[\xE2\x80\xA6 5 bytes omitted \xE2\x80\xA6]\nx", 1);
	/* an invalid byte at the end of the head stays a U+FFFD */
	expect(&o, NULL, "abc\xC0XYZwxyz", 11, "abc" FFFD "\n[\xE2\x80\xA6 3 bytes omitted \xE2\x80\xA6]\nwxyz", 1);
	/* 4 continuation bytes: 3 omitted, the 4th replaced */
	expect(&o, NULL, "abcdXYZ\x80\x80\x80\x80", 11, "abcd\n[\xE2\x80\xA6 6 bytes omitted \xE2\x80\xA6]\n" FFFD, 1);
}

/* stdout and stderr: separate bytes, caps, counts; the secrets apply to both. */
static void test_streams_apart(void **state)
{
	struct capture_opts o = {6, 6, 2};
	struct capture c;
	struct buf out;
	uint64_t bytes;
	int trunc;

	capture_init(&c, &o);
	assert_int_equal(capture_add_secret(&c, "password", 8, NULL), 0);
	assert_int_equal(capture_feed(&c, 1, "o ", 2), 0);
	assert_int_equal(capture_feed(&c, 2, "err pass", 8), 0);
	assert_int_equal(capture_feed(&c, 1, "pass", 4), 0);
	assert_int_equal(capture_feed(&c, 2, "word!", 5), 0);
	assert_int_equal(capture_feed(&c, 1, "word", 4), 0);
	assert_int_equal(capture_feed(&c, 3, "x", 1), ERR_INVALID);
	assert_int_equal(capture_feed(&c, 0, "x", 1), ERR_INVALID);
	buf_init(&out, capture_text_max(&o));
	assert_int_equal(capture_finish(&c, 2, &out, &bytes, &trunc, NULL), 0);
	assert_int_equal(bytes, 13);
	assert_true(trunc);
	assert_string_equal(out.data, "err ***\n[\xE2\x80\xA6 1 bytes omitted \xE2\x80\xA6]\n***!");
	buf_clear(&out);
	assert_int_equal(capture_feed(&c, 2, "x", 1), ERR_INVALID);
	assert_int_equal(capture_finish(&c, 2, &out, NULL, NULL, NULL), ERR_INVALID);
	assert_int_equal(capture_feed(&c, 1, "!", 1), 0);
	assert_int_equal(capture_finish(&c, 1, &out, &bytes, &trunc, NULL), 0);
	assert_int_equal(bytes, 11);
	assert_false(trunc);
	assert_string_equal(out.data, "o ***!");
	buf_release(&out);
	capture_release(&c);
}

static void test_secret_rules(void **state)
{
	struct capture c;
	struct err e;
	char big[CAPTURE_SECRET_MAX + 2];

	capture_init(&c, NULL);
	assert_int_equal(capture_add_secret(&c, "short", 5, &e), ERR_INVALID);
	assert_non_null(strstr(e.msg, "5 bytes"));
	memset(big, 'k', sizeof(big));
	assert_int_equal(capture_add_secret(&c, big, CAPTURE_SECRET_MAX + 1, &e), ERR_INVALID);
	assert_int_equal(capture_add_secret(&c, big, CAPTURE_SECRET_MAX, &e), 0);
	assert_int_equal(capture_add_secret(&c, big, CAPTURE_SECRET_MAX, &e), 0);  /* once */
	assert_int_equal(c.nsecrets, 1);
	for (int i = 1; i < CAPTURE_SECRETS_MAX; i++) {
		char s[16];

		snprintf(s, sizeof(s), "secret-%04d", i);
		assert_int_equal(capture_add_secret(&c, s, strlen(s), &e), 0);
	}
	assert_int_equal(capture_add_secret(&c, "one-too-many", 12, &e), ERR_INVALID);
	capture_release(&c);
	assert_int_equal(capture_add_token(&c, "abc", 3, &e), ERR_INVALID);
	{
		char tok[CAPTURE_TOKEN_MAX + 1];

		memset(tok, '%', sizeof(tok));
		assert_int_equal(capture_add_token(&c, tok, sizeof(tok), &e), ERR_INVALID);
		assert_int_equal(capture_add_token(&c, tok, sizeof(tok) - 1, &e), 0);
		assert_int_equal(c.nsecrets, 8);  /* '%' encodes as "%25" in both cases */
	}
	capture_release(&c);
	assert_int_equal(c.nsecrets, 0);
	capture_release(&c);  /* twice is fine */
}

/* Overlapping occurrences make one mask, adjacent ones one each. */
static void test_overlaps(void **state)
{
	static const char *const two[] = {"abcdefgh", "efghijkl", NULL};
	static const char *const self[] = {"aaaaaaaa", NULL};
	static const char *const nested[] = {"xxSECRETxx", "SECRET--", NULL};

	expect(NULL, two, "<abcdefghijkl>", 14, "<***>", 0);
	expect(NULL, two, "<abcdefghabcdefgh>", 18, "<******>", 0);
	expect(NULL, two, "abcdefgefghijkl", 15, "abcdefg***", 0);
	expect(NULL, self, "aaaaaaaaaaaa b aaaaaaa", 22, "*** b aaaaaaa", 0);
	expect(NULL, nested, "1xxSECRET--2 xxSECRETxx--", 25, "1xx***2 ***--", 0);
	expect(NULL, nested, "SECRET-SECRET--", 15, "SECRET-***", 0);
}

/* A mask cuts a multi-byte character in two: each half is a U+FFFD, the text stays valid. */
static void test_mask_inside_character(void **state)
{
	static const char *const s[] = {"\xA9secretXY", NULL};

	expect(NULL, s, "\xC3\xA9secretXY!", 11, FFFD "***!", 0);
}

static void test_mask_text_and_bounds(void **state)
{
	struct capture_opts o = {4, 4, 8};
	struct capture c;
	struct buf out;
	struct err e;
	const char *cmd = "git push https://x-access-token:" TOKEN "@h/o/r \xFF";

	capture_init(&c, &o);
	assert_int_equal(capture_add_token(&c, TOKEN, strlen(TOKEN), NULL), 0);
	buf_init(&out, 1024);
	assert_int_equal(capture_mask_text(&c, cmd, strlen(cmd), &out, &e), 0);
	assert_string_equal(out.data, "git push https://x-access-token:***@h/o/r " FFFD);
	buf_release(&out);
	/* a buffer under the bound */
	buf_init(&out, 3);
	assert_int_equal(capture_feed(&c, 1, "abcdefghij", 10), 0);
	assert_int_equal(capture_finish(&c, 1, &out, NULL, NULL, &e), ERR_TOOBIG);
	buf_release(&out);
	capture_release(&c);
	/* the bound holds for the worst text: every byte replaced */
	{
		char bad[8] = {'\xFF', '\xFF', '\xFF', '\xFF', '\xFF', '\xFF', '\xFF', '\xFF'};
		uint64_t bytes;

		capture_init(&c, &o);
		assert_int_equal(capture_feed(&c, 1, bad, 8), 0);
		buf_init(&out, capture_text_max(&o));
		assert_int_equal(capture_finish(&c, 1, &out, &bytes, NULL, &e), 0);
		assert_int_equal(out.len, 24);
		buf_release(&out);
		capture_release(&c);
	}
}

/* Straight from the Docker stream demultiplexer. */
static void test_from_dstream(void **state)
{
	static const unsigned char frames[] = {
		1, 0, 0, 0, 0, 0, 0, 4, 'o', 'u', 't', '\n',
		2, 0, 0, 0, 0, 0, 0, 4, 'e', 'r', 'r', '\n',
		1, 0, 0, 0, 0, 0, 0, 1, 'x',
	};
	struct dstream d;
	struct capture c;
	struct buf out;
	uint64_t bytes;

	capture_init(&c, NULL);
	dstream_init(&d, 0, capture_feed_cb, &c);
	assert_int_equal(dstream_feed(&d, frames, sizeof(frames), NULL), 0);
	assert_int_equal(dstream_finish(&d, NULL), 0);
	buf_init(&out, capture_text_max(NULL));
	assert_int_equal(capture_finish(&c, 1, &out, &bytes, NULL, NULL), 0);
	assert_string_equal(out.data, "out\nx");
	assert_int_equal(bytes, 5);
	buf_clear(&out);
	assert_int_equal(capture_finish(&c, 2, &out, &bytes, NULL, NULL), 0);
	assert_string_equal(out.data, "err\n");
	buf_release(&out);
	capture_release(&c);
}

/* Streaming: what capture_take gives along the way, then capture_finish, is exactly the text
 * of capture_finish alone, for random streams (secret pieces, multibyte characters, bad
 * bytes), random caps and random chunks; and nothing taken ever holds a whole secret or its
 * start cut short. */
static void test_take_is_invisible(void **state)
{
	static const char *const secrets[] = {"s3cr3t-Token", "zzzzzzzz", NULL};
	static const char *const pieces[] = {"s3cr3t-Token", "s3cr3t-", "Token", "zzzz", "z",
					     "\xC3\xA9", "\xE2\x9C\x93", "\xF0\x9F\x98\x80",
					     "\xE2\x9C", "\xFF", "\n", "ab", "x"};
	char in[4000];

	(void)state;
	for (int round = 0; round < 400; round++) {
		struct capture_opts o = {rnd() % 300, rnd() % 300, 8};
		size_t n = 0, want_n;
		while (n < sizeof(in) - 16 && rnd() % 200) {
			const char *p = pieces[rnd() % (sizeof(pieces) / sizeof(pieces[0]))];
			memcpy(in + n, p, strlen(p));
			n += strlen(p);
		}
		uint64_t bytes;
		int trunc;
		char *want = run(&o, secrets, in, n, 0, &bytes, &trunc);
		want_n = strlen(want);

		struct capture c;
		struct buf got, piece;
		struct err e;
		capture_init(&c, &o);
		for (size_t i = 0; secrets[i]; i++)
			assert_int_equal(capture_add_secret(&c, secrets[i], strlen(secrets[i]), &e), 0);
		buf_init(&got, capture_text_max(&o) * 2);
		buf_init(&piece, capture_text_max(&o));
		for (size_t i = 0; i < n;) {
			size_t k = 1 + rnd() % 40;
			if (k > n - i)
				k = n - i;
			assert_int_equal(capture_feed(&c, CAPTURE_STDOUT, in + i, k), 0);
			i += k;
			buf_clear(&piece);
			assert_int_equal(capture_take(&c, CAPTURE_STDOUT, &piece, &e), 0);
			if (piece.len) {
				assert_null(strstr(piece.data, "s3cr3t-Token"));
				assert_null(strstr(piece.data, "zzzzzzzz"));
				assert_int_equal(buf_append(&got, piece.data, piece.len), 0);
			}
		}
		assert_int_equal(capture_finish(&c, CAPTURE_STDOUT, &got, NULL, NULL, &e), 0);
		assert_int_equal(got.len, want_n);
		assert_memory_equal(got.data ? got.data : "", want, want_n);
		buf_release(&got);
		buf_release(&piece);
		capture_release(&c);
		free(want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_and_cut),
		cmocka_unit_test(test_zero_caps),
		cmocka_unit_test(test_chunking_is_invisible),
		cmocka_unit_test(test_secret_split),
		cmocka_unit_test(test_secret_across_cut),
		cmocka_unit_test(test_token_forms),
		cmocka_unit_test(test_three_megabytes),
		cmocka_unit_test(test_utf8_vectors),
		cmocka_unit_test(test_utf8_at_the_cut),
		cmocka_unit_test(test_streams_apart),
		cmocka_unit_test(test_secret_rules),
		cmocka_unit_test(test_overlaps),
		cmocka_unit_test(test_mask_inside_character),
		cmocka_unit_test(test_mask_text_and_bounds),
		cmocka_unit_test(test_from_dstream),
		cmocka_unit_test(test_take_is_invisible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
