/* test_dstream.c: the exec stream demultiplexer against known frames, every split, bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/proto/dstream.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

struct sink {
	struct buf out[3];
	int calls;
	int stop_after;      /* > 0: return ERR_TOOBIG on that call */
	size_t max_chunk;    /* the largest piece handed over */
};

static int collect(void *arg, int stream, const char *data, size_t len)
{
	struct sink *s = arg;

	assert_true(stream == 1 || stream == 2);
	assert_true(len > 0);
	if (len > s->max_chunk)
		s->max_chunk = len;
	s->calls++;
	if (s->stop_after && s->calls == s->stop_after)
		return ERR_TOOBIG;
	return buf_append(&s->out[stream], data, len);
}

static void sink_init(struct sink *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 3; i++)
		buf_init(&s->out[i], 1 << 20);
}

static void sink_release(struct sink *s)
{
	for (int i = 0; i < 3; i++)
		buf_release(&s->out[i]);
}

static size_t frame(unsigned char *p, int stream, const char *data, uint32_t len)
{
	p[0] = (unsigned char)stream;
	p[1] = p[2] = p[3] = 0;
	p[4] = (unsigned char)(len >> 24);
	p[5] = (unsigned char)(len >> 16);
	p[6] = (unsigned char)(len >> 8);
	p[7] = (unsigned char)len;
	memcpy(p + 8, data, len);
	return 8 + len;
}

/* A known vector, as Docker sends it for: echo out; echo err >&2; printf x. */
static const unsigned char vector[] = {
	1, 0, 0, 0, 0, 0, 0, 4, 'o', 'u', 't', '\n',
	2, 0, 0, 0, 0, 0, 0, 4, 'e', 'r', 'r', '\n',
	1, 0, 0, 0, 0, 0, 0, 1, 'x',
};

static void test_known_vector(void **state)
{
	struct dstream d;
	struct sink s;
	struct err e;

	sink_init(&s);
	dstream_init(&d, 0, collect, &s);
	assert_int_equal(dstream_feed(&d, vector, sizeof(vector), &e), 0);
	assert_int_equal(dstream_finish(&d, &e), 0);
	assert_string_equal(s.out[1].data, "out\nx");
	assert_string_equal(s.out[2].data, "err\n");
	assert_int_equal(d.bytes[1], 5);
	assert_int_equal(d.bytes[2], 4);
	sink_release(&s);
}

/* Every way of cutting the stream in two, and one byte at a time. */
static void test_every_split(void **state)
{
	unsigned char in[256];
	size_t n = 0, cut;
	struct err e;

	n += frame(in + n, 2, "first error", 11);
	n += frame(in + n, 1, "", 0);
	n += frame(in + n, 1, "hello, world", 12);
	n += frame(in + n, 2, "\0\x01\xff", 3);
	for (cut = 0; cut <= n; cut++) {
		struct dstream d;
		struct sink s;

		sink_init(&s);
		dstream_init(&d, 0, collect, &s);
		assert_int_equal(dstream_feed(&d, in, cut, &e), 0);
		assert_int_equal(dstream_feed(&d, in + cut, n - cut, &e), 0);
		assert_int_equal(dstream_finish(&d, &e), 0);
		assert_int_equal(s.out[1].len, 12);
		assert_memory_equal(s.out[1].data, "hello, world", 12);
		assert_int_equal(s.out[2].len, 14);
		assert_memory_equal(s.out[2].data, "first error\0\x01\xff", 14);
		sink_release(&s);
	}
	{
		struct dstream d;
		struct sink s;

		sink_init(&s);
		dstream_init(&d, 0, collect, &s);
		for (cut = 0; cut < n; cut++)
			assert_int_equal(dstream_feed(&d, in + cut, 1, &e), 0);
		assert_int_equal(dstream_finish(&d, &e), 0);
		assert_int_equal(s.out[1].len, 12);
		assert_int_equal(s.out[2].len, 14);
		assert_int_equal(s.max_chunk, 1);
		sink_release(&s);
	}
}

/* Interleaved streams in many frames keep each stream's own order. */
static void test_interleaved(void **state)
{
	unsigned char *in = malloc(64 * 1024);
	char want[3][4096];
	size_t n = 0, wl[3] = {0, 0, 0};
	struct dstream d;
	struct sink s;
	struct err e;

	assert_non_null(in);
	srand(7);
	for (int i = 0; i < 400; i++) {
		int st = 1 + rand() % 2;
		char data[10];
		uint32_t len = (uint32_t)(rand() % 10);

		for (uint32_t j = 0; j < len; j++)
			data[j] = (char)rand();
		n += frame(in + n, st, data, len);
		memcpy(want[st] + wl[st], data, len);
		wl[st] += len;
	}
	sink_init(&s);
	dstream_init(&d, 0, collect, &s);
	for (size_t off = 0; off < n;) {
		size_t take = 1 + (size_t)rand() % 37;
		take = take < n - off ? take : n - off;
		assert_int_equal(dstream_feed(&d, in + off, take, &e), 0);
		off += take;
	}
	assert_int_equal(dstream_finish(&d, &e), 0);
	for (int st = 1; st <= 2; st++) {
		assert_int_equal(s.out[st].len, wl[st]);
		if (wl[st])
			assert_memory_equal(s.out[st].data, want[st], wl[st]);
	}
	sink_release(&s);
	free(in);
}

/* A frame that declares 4 GiB is refused at its header, before any payload is read. */
static void test_huge_frame(void **state)
{
	static const unsigned char huge[] = {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 'a'};
	static const unsigned char just[] = {1, 0, 0, 0, 0, 0, 0x10, 0x01};
	struct dstream d;
	struct sink s;
	struct err e;

	sink_init(&s);
	dstream_init(&d, 0, collect, &s);
	assert_int_equal(dstream_feed(&d, huge, sizeof(huge), &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "4294967295"));
	assert_int_equal(s.calls, 0);
	/* and stays failed */
	assert_int_equal(dstream_feed(&d, vector, sizeof(vector), &e), ERR_FAIL);
	assert_int_equal(dstream_finish(&d, &e), ERR_FAIL);
	/* the caller's own bound */
	dstream_init(&d, 4096, collect, &s);
	assert_int_equal(dstream_feed(&d, just, sizeof(just), &e), ERR_FAIL);
	assert_int_equal(s.calls, 0);
	sink_release(&s);
}

static void test_unknown_stream(void **state)
{
	static const unsigned char ids[] = {0, 3, 4, 0x80, 0xff};
	unsigned char in[16];
	struct dstream d;
	struct sink s;
	struct err e;

	sink_init(&s);
	for (size_t i = 0; i < sizeof(ids); i++) {
		frame(in, 1, "abc", 3);
		in[0] = ids[i];
		dstream_init(&d, 0, collect, &s);
		assert_int_equal(dstream_feed(&d, in, 11, &e), ERR_FAIL);
		assert_non_null(strstr(e.msg, "unknown stream"));
	}
	/* non-zero padding bytes */
	for (int b = 1; b <= 3; b++) {
		frame(in, 1, "abc", 3);
		in[b] = 1;
		dstream_init(&d, 0, collect, &s);
		assert_int_equal(dstream_feed(&d, in, 11, &e), ERR_FAIL);
	}
	assert_int_equal(s.calls, 0);
	sink_release(&s);
}

static void test_truncated(void **state)
{
	unsigned char in[32];
	size_t n = frame(in, 2, "truncate", 8), cut;
	struct err e;

	for (cut = 1; cut < n; cut++) {
		struct dstream d;
		struct sink s;

		sink_init(&s);
		dstream_init(&d, 0, collect, &s);
		assert_int_equal(dstream_feed(&d, in, cut, &e), 0);
		assert_int_equal(dstream_finish(&d, &e), ERR_FAIL);
		assert_non_null(strstr(e.msg, "cut inside a frame"));
		sink_release(&s);
	}
	{
		struct dstream d;
		struct sink s;

		sink_init(&s);
		dstream_init(&d, 0, collect, &s);
		assert_int_equal(dstream_finish(&d, &e), 0);  /* an empty stream is fine */
		sink_release(&s);
	}
}

/* The sink's error stops the feed and is returned as it is. */
static void test_sink_stops(void **state)
{
	struct dstream d;
	struct sink s;
	struct err e;

	sink_init(&s);
	s.stop_after = 2;
	dstream_init(&d, 0, collect, &s);
	assert_int_equal(dstream_feed(&d, vector, sizeof(vector), &e), ERR_TOOBIG);
	assert_int_equal(s.calls, 2);
	assert_string_equal(s.out[1].data, "out\n");
	assert_null(s.out[2].data);
	assert_int_equal(dstream_feed(&d, vector, sizeof(vector), &e), ERR_TOOBIG);
	sink_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_vector),
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_huge_frame),
		cmocka_unit_test(test_unknown_stream),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_sink_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
