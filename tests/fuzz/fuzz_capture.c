/* fuzz_capture.c: the exec output capture against a naive reference of the rules in
 * capture.h (caps and marker, masking with the cut's fragments, U+FFFD per maximal subpart,
 * the cut moved to character boundaries), with stdout fed in input-chosen chunks (and, for
 * an odd chunk seed, streamed: capture_take after each chunk, capture_finish for the rest)
 * and stderr the same bytes in one shot: both must give the reference's text, valid UTF-8.
 *
 * Input: head cap, tail cap (0 to 47, times 64 when fragment_min's byte has its high bit),
 * fragment_min, chunk seed (one byte each, reduced), the number of secrets (0 to 3), each as a
 * length byte (8 to 19 bytes follow), then the stream. */
#include "fuzz.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/proto/capture.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

#define MAXSEC 3

struct secrets {
	const unsigned char *s[MAXSEC];
	size_t len[MAXSEC];
	size_t n;
};

/* ---- the reference: straight from the definitions, no state machines ---- */

/* Could p[0..k) (k >= 1, p[0] >= 0x80) start a well-formed sequence of its lead's length?
 * The code points it can lead to form a range; it must meet that length's valid ones. */
static int ref_prefix_ok(const unsigned char *p, size_t k, size_t *full)
{
	uint32_t v, lo_cp, hi_cp;
	size_t len;
	unsigned r;

	if (p[0] >= 0xC0 && p[0] < 0xE0) {
		len = 2;
		v = p[0] & 0x1F;
	} else if (p[0] >= 0xE0 && p[0] < 0xF0) {
		len = 3;
		v = p[0] & 0x0F;
	} else if (p[0] >= 0xF0 && p[0] < 0xF8) {
		len = 4;
		v = p[0] & 0x07;
	} else {
		return 0;
	}
	*full = len;
	if (k > len)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3F);
	}
	r = 6 * (unsigned)(len - k);
	lo_cp = v << r;
	hi_cp = lo_cp | ((1u << r) - 1);
	if (len == 2)
		return hi_cp >= 0x80 && lo_cp <= 0x7FF;
	if (len == 3)
		return hi_cp >= 0x800 && lo_cp <= 0xFFFF && !(lo_cp >= 0xD800 && hi_cp <= 0xDFFF);
	return hi_cp >= 0x10000 && lo_cp <= 0x10FFFF;
}

enum { R_OK, R_BAD, R_SHORT };

/* The unit at p[0..n): its length and kind. */
static size_t ref_unit(const unsigned char *p, size_t n, int *kind)
{
	size_t k = 1, full = 1;

	if (p[0] < 0x80) {
		*kind = R_OK;
		return 1;
	}
	if (!ref_prefix_ok(p, 1, &full)) {
		*kind = R_BAD;
		return 1;
	}
	while (k < full && k < n && ref_prefix_ok(p, k + 1, &full))
		k++;
	*kind = k == full ? R_OK : k == n ? R_SHORT : R_BAD;
	return k;
}

static void ref_decode(struct buf *out, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		int kind;
		size_t k = ref_unit(p + i, n - i, &kind);

		FUZZ_CHECK(buf_append(out, kind == R_OK ? (const void *)(p + i) : "\xEF\xBF\xBD",
				      kind == R_OK ? k : 3) == 0);
		i += k;
	}
}

static int valid_utf8(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		int kind;

		i += ref_unit(p + i, n - i, &kind);
		if (kind != R_OK)
			return 0;
	}
	return 1;
}

struct span {
	size_t st, en;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->st < y->st ? -1 : x->st > y->st;
}

static void ref_mask(struct buf *out, const struct secrets *sec, const unsigned char *t,
		     size_t n, size_t pre, size_t post)
{
	struct span *sp = malloc((n * MAXSEC + 2) * sizeof(*sp));
	size_t m = 0, done = 0;

	FUZZ_CHECK(sp);
	for (size_t s = 0; s < sec->n; s++)
		for (size_t i = 0; i + sec->len[s] <= n; i++)
			if (memcmp(t + i, sec->s[s], sec->len[s]) == 0)
				sp[m++] = (struct span){i, i + sec->len[s]};
	if (pre)
		sp[m++] = (struct span){0, pre};
	if (post)
		sp[m++] = (struct span){n - post, n};
	qsort(sp, m, sizeof(*sp), span_cmp);
	for (size_t i = 0; i < m;) {
		size_t st = sp[i].st, en = sp[i].en;

		for (i++; i < m && sp[i].st < en; i++)
			if (sp[i].en > en)
				en = sp[i].en;
		ref_decode(out, t + done, st - done);
		FUZZ_CHECK(buf_append(out, "***", 3) == 0);
		done = en;
	}
	ref_decode(out, t + done, n - done);
	free(sp);
}

static void ref_capture(struct buf *out, const struct capture_opts *o, const struct secrets *sec,
			const unsigned char *d, size_t n)
{
	const unsigned char *tail;
	size_t hlen = 0, tl, pre = 0, post = 0, before;
	char num[64];

	if (n <= o->head + o->tail) {
		ref_mask(out, sec, d, n, 0, 0);
		return;
	}
	/* the head without an incomplete sequence at its end */
	for (size_t i = 0; i < o->head;) {
		int kind;
		size_t k = ref_unit(d + i, o->head - i, &kind);

		if (kind == R_SHORT)
			break;
		i += k;
		hlen = i;
	}
	tail = d + n - o->tail;
	tl = o->tail;
	for (int i = 0; i < 3 && tl > 0 && (tail[0] & 0xC0) == 0x80; i++) {
		tail++;
		tl--;
	}
	for (size_t s = 0; s < sec->n; s++)
		for (size_t l = 1; l < sec->len[s]; l++) {
			if (l <= hlen && memcmp(d + hlen - l, sec->s[s], l) == 0 && l > post)
				post = l;
			if (l <= tl && memcmp(tail, sec->s[s] + sec->len[s] - l, l) == 0 && l > pre)
				pre = l;
		}
	if (post < o->fragment_min)
		post = 0;
	if (pre < o->fragment_min)
		pre = 0;
	ref_mask(out, sec, d, hlen, 0, post);
	if (hlen > 0 && out->data[out->len - 1] != '\n')
		FUZZ_CHECK(buf_append(out, "\n", 1) == 0);
	before = n - hlen - tl;
	snprintf(num, sizeof(num), "[\xE2\x80\xA6 %zu bytes omitted \xE2\x80\xA6]\n", before);
	FUZZ_CHECK(buf_puts(out, num) == 0);
	ref_mask(out, sec, tail, tl, pre, 0);
}

/* ---- the target ---- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct capture_opts o;
	struct secrets sec = {0};
	struct capture c;
	struct buf got1, got2, want, masked;
	unsigned seed;
	uint64_t bytes;
	int trunc;
	size_t p = 5, nsec, n;
	char *in;

	if (size < 5)
		return 0;
	o.head = data[0] % 48;
	o.tail = data[1] % 48;
	o.fragment_min = 1 + (data[2] & 0x7F) % 12;
	if (data[2] & 0x80) {
		o.head *= 64;
		o.tail *= 64;
	}
	seed = data[3];
	nsec = data[4] % (MAXSEC + 1);
	in = fuzz_dup(data, size);
	for (size_t i = 0; i < nsec && p < size; i++) {
		size_t len = 8 + (unsigned char)in[p] % 12;

		if (size - p - 1 < len)
			break;
		sec.s[sec.n] = (const unsigned char *)in + p + 1;
		sec.len[sec.n++] = len;
		p += 1 + len;
	}
	n = size - p;

	/* Streamed (seed odd): what capture_take gives along the way, then the rest. */
	int streaming = seed & 1;
	buf_init(&got1, capture_text_max(&o));
	capture_init(&c, &o);
	for (size_t i = 0; i < sec.n; i++)
		FUZZ_CHECK(capture_add_secret(&c, sec.s[i], sec.len[i], NULL) == 0);
	/* stdout in chunks of 1 to 17 bytes; stderr in two pieces, around them */
	FUZZ_CHECK(capture_feed(&c, CAPTURE_STDERR, in + p, n / 2) == 0);
	for (size_t i = 0, k; i < n; i += k) {
		seed = seed * 1103515245u + 12345u;
		k = 1 + (seed >> 16) % (o.head > 64 ? 300 : 17);
		if (k > n - i)
			k = n - i;
		FUZZ_CHECK(capture_feed(&c, CAPTURE_STDOUT, in + p + i, k) == 0);
		if (streaming)
			FUZZ_CHECK(capture_take(&c, CAPTURE_STDOUT, &got1, NULL) == 0);
	}
	FUZZ_CHECK(capture_feed(&c, CAPTURE_STDERR, in + p + n / 2, n - n / 2) == 0);
	buf_init(&got2, capture_text_max(&o));
	buf_init(&want, (size_t)1 << 24);
	buf_init(&masked, (size_t)1 << 24);
	FUZZ_CHECK(capture_finish(&c, CAPTURE_STDOUT, &got1, &bytes, &trunc, NULL) == 0);
	FUZZ_CHECK(bytes == n);
	FUZZ_CHECK(trunc == (n > o.head + o.tail));
	ref_capture(&want, &o, &sec, (const unsigned char *)in + p, n);
	FUZZ_CHECK(got1.len == want.len);
	FUZZ_CHECK(got1.len == 0 || memcmp(got1.data, want.data, got1.len) == 0);
	FUZZ_CHECK(got1.len == 0 || valid_utf8((const unsigned char *)got1.data, got1.len));
	FUZZ_CHECK(capture_finish(&c, CAPTURE_STDERR, &got2, &bytes, &trunc, NULL) == 0);
	FUZZ_CHECK(got2.len == got1.len && (got2.len == 0 ||
					     memcmp(got2.data, got1.data, got1.len) == 0));
	/* the whole text, no cut */
	FUZZ_CHECK(capture_mask_text(&c, in + p, n, &masked, NULL) == 0);
	buf_clear(&want);
	ref_mask(&want, &sec, (const unsigned char *)in + p, n, 0, 0);
	FUZZ_CHECK(masked.len == want.len &&
		   (want.len == 0 || memcmp(masked.data, want.data, want.len) == 0));
	capture_release(&c);
	buf_release(&got1);
	buf_release(&got2);
	buf_release(&want);
	buf_release(&masked);
	free(in);
	return 0;
}
