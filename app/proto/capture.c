/* capture.c: an exec's output within caps, credentials masked, decoded as UTF-8. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/lib/query.h"
#include "sandboxd/proto/capture.h"
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

/* A secret, with the KMP failure tables of it and of its reverse. */
struct capture_secret {
	size_t len;
	const unsigned char *s;    /* the secret */
	const unsigned char *rs;   /* reversed */
	uint32_t *fail;            /* fail[q]: longest proper border of s[0..q), q <= len */
	uint32_t *rfail;           /* the same for rs */
	uint32_t tab[];            /* fail, rfail, then the bytes of s and rs */
};

/* "[… " and " bytes omitted …]" around the count. */
#define MARKER_OPEN "[\xE2\x80\xA6 "
#define MARKER_CLOSE " bytes omitted \xE2\x80\xA6]\n"
/* A newline, the marker with a 20-digit count, and its newline. */
#define MARKER_MAX (1 + sizeof(MARKER_OPEN) - 1 + 20 + sizeof(MARKER_CLOSE) - 1)

void capture_init(struct capture *c, const struct capture_opts *o)
{
	static const struct capture_opts def = CAPTURE_OPTS_INIT;

	memset(c, 0, sizeof(*c));
	c->opts = o ? *o : def;
	if (c->opts.head > CAPTURE_CAP_MAX)
		c->opts.head = CAPTURE_CAP_MAX;
	if (c->opts.tail > CAPTURE_CAP_MAX)
		c->opts.tail = CAPTURE_CAP_MAX;
	if (c->opts.fragment_min == 0)
		c->opts.fragment_min = 1;
}

static void stream_release(struct capture_stream *st)
{
	free(st->data);
	memset(st, 0, sizeof(*st));
}

void capture_release(struct capture *c)
{
	struct capture_opts o = c->opts;

	for (size_t i = 0; i < c->nsecrets; i++)
		free(c->secrets[i]);
	stream_release(&c->streams[0]);
	stream_release(&c->streams[1]);
	capture_init(c, &o);
}

/* ---- secrets ---- */

static void kmp_table(const unsigned char *s, size_t n, uint32_t *fail)
{
	size_t k = 0;

	fail[0] = 0;
	if (n > 0)
		fail[1] = 0;
	for (size_t q = 1; q < n; q++) {
		while (k > 0 && s[q] != s[k])
			k = fail[k];
		if (s[q] == s[k])
			k++;
		fail[q + 1] = (uint32_t)k;
	}
}

/* The state after c, from state q (the length of the longest prefix of s that is a suffix of
 * what was read); q == len means an occurrence ends at c. */
static size_t kmp_step(const unsigned char *s, size_t len, const uint32_t *fail, size_t q,
		       unsigned char ch)
{
	if (q == len)
		q = fail[q];
	while (q > 0 && s[q] != ch)
		q = fail[q];
	return s[q] == ch ? q + 1 : 0;
}

int capture_add_secret(struct capture *c, const void *s, size_t n, struct err *e)
{
	struct capture_secret *sec;
	unsigned char *b;

	if (n < CAPTURE_SECRET_MIN || n > CAPTURE_SECRET_MAX)
		return err_set(e, ERR_INVALID, "capture: a secret of %zu bytes (%d to %d allowed)",
			       n, CAPTURE_SECRET_MIN, CAPTURE_SECRET_MAX);
	for (size_t i = 0; i < c->nsecrets; i++)
		if (c->secrets[i]->len == n && memcmp(c->secrets[i]->s, s, n) == 0)
			return 0;
	if (c->nsecrets == CAPTURE_SECRETS_MAX)
		return err_set(e, ERR_INVALID, "capture: more than %d secrets",
			       CAPTURE_SECRETS_MAX);
	sec = malloc(sizeof(*sec) + 2 * (n + 1) * sizeof(uint32_t) + 2 * n);
	if (!sec)
		return err_set(e, ERR_NOMEM, "capture: out of memory");
	sec->len = n;
	sec->fail = sec->tab;
	sec->rfail = sec->tab + n + 1;
	b = (unsigned char *)(sec->tab + 2 * (n + 1));
	memcpy(b, s, n);
	for (size_t i = 0; i < n; i++)
		b[n + i] = b[n - 1 - i];
	sec->s = b;
	sec->rs = b + n;
	kmp_table(sec->s, n, sec->fail);
	kmp_table(sec->rs, n, sec->rfail);
	c->secrets[c->nsecrets++] = sec;
	return 0;
}



int capture_add_token(struct capture *c, const char *token, size_t n, struct err *e)
{
	static const char *const users[] = {"x-access-token:", "t:", "git:"};
	char *tmp = NULL, *enc = NULL;
	size_t m;
	int rc;

	if (n < CAPTURE_SECRET_MIN || n > CAPTURE_TOKEN_MAX)
		return err_set(e, ERR_INVALID, "capture: a token of %zu bytes (%d to %d allowed)",
			       n, CAPTURE_SECRET_MIN, CAPTURE_TOKEN_MAX);
	if ((rc = capture_add_secret(c, token, n, e)))
		return rc;
	/* 3 * n covers the percent-encoding; 16 + n the user and the token for base64. */
	tmp = malloc(3 * n + 16);
	enc = malloc(base64_encoded_size(16 + n));
	if (!tmp || !enc) {
		rc = err_set(e, ERR_NOMEM, "capture: out of memory");
		goto out;
	}
	m = query_percent_encode(token, n, "0123456789ABCDEF", tmp);
	if ((rc = capture_add_secret(c, tmp, m, e)))
		goto out;
	m = query_percent_encode(token, n, "0123456789abcdef", tmp);
	if ((rc = capture_add_secret(c, tmp, m, e)))
		goto out;
	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		size_t ul = strlen(users[i]);

		memcpy(tmp, users[i], ul);
		memcpy(tmp + ul, token, n);
		base64_encode((const unsigned char *)tmp, ul + n, enc);
		if ((rc = capture_add_secret(c, enc, strlen(enc), e)))
			goto out;
	}
	/* Inside any base64 text, whatever comes before the token (a = 0, 1, 2 modulo 3). */
	for (size_t a = 0; a < 3; a++) {
		size_t j, len;

		base64_run(token, n, a, tmp, enc, &j, &len);
		if ((rc = capture_add_secret(c, enc + j, len, e)))
			goto out;
	}
out:
	free(tmp);
	free(enc);
	return rc;
}

/* ---- feeding ---- */

static struct capture_stream *stream_of(struct capture *c, int stream)
{
	if (stream != CAPTURE_STDOUT && stream != CAPTURE_STDERR)
		return NULL;
	return &c->streams[stream - 1];
}

/* Room for want bytes (at most head + tail), growing geometrically. */
static int stream_reserve(const struct capture *c, struct capture_stream *st, size_t want)
{
	size_t max = c->opts.head + c->opts.tail, cap;
	char *p;

	if (want <= st->cap)
		return 0;
	cap = st->cap ? st->cap : 4096;
	while (cap < want)
		cap *= 2;
	if (cap > max)
		cap = max;
	p = realloc(st->data, cap);
	if (!p)
		return ERR_NOMEM;
	st->data = p;
	st->cap = cap;
	return 0;
}

int capture_feed(struct capture *c, int stream, const char *data, size_t n)
{
	struct capture_stream *st = stream_of(c, stream);
	size_t head = c->opts.head, tail = c->opts.tail, room;
	char *ring;

	if (!st || st->finished)
		return ERR_INVALID;
	if (st->failed)
		return st->failed;
	st->bytes += n;
	room = head + tail - st->len;
	if (room > 0 && n > 0) {
		size_t take = n < room ? n : room;
		int rc = stream_reserve(c, st, st->len + take);

		if (rc)
			return st->failed = rc;
		memcpy(st->data + st->len, data, take);
		st->len += take;
		data += take;
		n -= take;
	}
	if (n == 0 || tail == 0)
		return 0;
	/* Full: the tail is a ring whose oldest byte, at ring, is the next overwritten. */
	ring = st->data + head;
	if (n >= tail) {
		memcpy(ring, data + n - tail, tail);
		st->ring = 0;
	} else {
		size_t first = tail - st->ring < n ? tail - st->ring : n;

		memcpy(ring + st->ring, data, first);
		memcpy(ring, data + first, n - first);
		st->ring = (st->ring + n) % tail;
	}
	return 0;
}

int capture_feed_cb(void *c, int stream, const char *data, size_t n)
{
	return capture_feed(c, stream, data, n);
}

/* ---- UTF-8 ---- */

/* The decoder and the repairing append are utf8.h's (one decoder for every module). */

/* The head p[0..n) without an incomplete but valid sequence at its end. */
static size_t utf8_cut_end(const unsigned char *p, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		enum utf8_state state;

		if ((p[n - back] & 0xC0) == 0x80)
			continue;
		utf8_scan(p + n - back, back, &state);
		return state == UTF8_SHORT ? n - back : n;
	}
	return n;
}

/* How many continuation bytes (at most 3) start the tail p[0..n). */
static size_t utf8_cut_start(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < 3 && i < n && (p[i] & 0xC0) == 0x80)
		i++;
	return i;
}

/* ---- masking ---- */

/* Finds the occurrences of one secret in a text, in order, overlapping ones too. */
struct finder {
	const struct capture_secret *sec;
	size_t q;            /* KMP state */
	size_t pos;          /* the next byte to read */
	size_t start, end;   /* the occurrence found, when have */
	int have;
};

static void finder_next(struct finder *f, const unsigned char *t, size_t n)
{
	const struct capture_secret *sec = f->sec;
	size_t q = f->q, pos = f->pos, len = sec->len;

	f->have = 0;
	while (pos < n) {
		if (q == 0) {
			/* Nothing matched: skip to the secret's first byte. */
			const unsigned char *hit = memchr(t + pos, sec->s[0], n - pos);

			if (!hit) {
				pos = n;
				break;
			}
			pos = (size_t)(hit - t);
		}
		q = kmp_step(sec->s, len, sec->fail, q, t[pos++]);
		if (q == len) {
			f->start = pos - len;
			f->end = pos;
			f->have = 1;
			break;
		}
	}
	f->q = q;
	f->pos = pos;
}

/* The longest suffix of t[0..n) that is a proper prefix of sec. */
static size_t prefix_at_end(const struct capture_secret *sec, const unsigned char *t, size_t n)
{
	size_t w = n < sec->len - 1 ? n : sec->len - 1, q = 0;

	for (size_t i = n - w; i < n; i++)
		q = kmp_step(sec->s, sec->len, sec->fail, q, t[i]);
	return q;
}

/* The longest prefix of t[0..n) that is a proper suffix of sec: the reversed secret run over
 * the reversed start of t. */
static size_t suffix_at_start(const struct capture_secret *sec, const unsigned char *t,
			      size_t n)
{
	size_t w = n < sec->len - 1 ? n : sec->len - 1, q = 0;

	for (size_t i = w; i > 0; i--)
		q = kmp_step(sec->rs, sec->len, sec->rfail, q, t[i - 1]);
	return q;
}

/* Appends t[0..n) to out with every occurrence of every secret, t[0..pre) and t[n-post..n)
 * masked (the union of them all: overlapping spans become one "***"), the rest decoded. */
static int mask_append(const struct capture *c, struct buf *out, const unsigned char *t,
		       size_t n, size_t pre, size_t post)
{
	struct finder f[CAPTURE_SECRETS_MAX];
	size_t k = c->nsecrets, done = 0, ms = 0, me = 0;
	int open = 0, rc, fixed_pre = pre > 0, fixed_post = post > 0;

	for (size_t i = 0; i < k; i++) {
		f[i] = (struct finder){.sec = c->secrets[i]};
		finder_next(&f[i], t, n);
	}
	for (;;) {
		size_t st = SIZE_MAX, en = 0, which = SIZE_MAX;

		/* The next span by start: pre starts at 0, post ends at n. */
		if (fixed_pre) {
			st = 0;
			en = pre;
			which = k;
		}
		for (size_t i = 0; i < k; i++)
			if (f[i].have && f[i].start < st) {
				st = f[i].start;
				en = f[i].end;
				which = i;
			}
		if (fixed_post && n - post < st) {
			st = n - post;
			en = n;
			which = k + 1;
		}
		if (which == SIZE_MAX)
			break;
		if (which == k)
			fixed_pre = 0;
		else if (which == k + 1)
			fixed_post = 0;
		else
			finder_next(&f[which], t, n);
		if (open && st < me) {
			if (en > me)
				me = en;
			continue;
		}
		if (open) {
			if ((rc = utf8_append_repaired(out, t + done, ms - done)) ||
			    (rc = buf_append(out, CAPTURE_MASK, 3)))
				return rc;
			done = me;
		}
		open = 1;
		ms = st;
		me = en;
	}
	if (open) {
		if ((rc = utf8_append_repaired(out, t + done, ms - done)) ||
		    (rc = buf_append(out, CAPTURE_MASK, 3)))
			return rc;
		done = me;
	}
	return utf8_append_repaired(out, t + done, n - done);
}

/* ---- the end ---- */

size_t capture_text_max(const struct capture_opts *o)
{
	struct capture c;

	capture_init(&c, o);  /* the same defaults and clamping */
	return 3 * (c.opts.head + c.opts.tail) + MARKER_MAX;
}

static void reverse(char *p, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		char t = p[i];

		p[i] = p[n - 1 - i];
		p[n - 1 - i] = t;
	}
}

static int finish_text(const struct capture *c, struct capture_stream *st, struct buf *out,
		       int *truncated)
{
	static const unsigned char none[1];
	size_t head = c->opts.head, tail = c->opts.tail, hlen, tstart, pre = 0, post = 0;
	const unsigned char *t = st->data ? (const unsigned char *)st->data : none;
	uint64_t omitted;
	char num[24];
	int rc;

	size_t sent = st->sent;  /* streaming: the text of [0, sent) was taken already */
	size_t start = out->len;

	*truncated = st->bytes > (uint64_t)(head + tail);
	if (!*truncated)
		return mask_append(c, out, t + sent, st->len - sent, 0, 0);
	/* The ring in order (rotated left by ring), in place. */
	if (st->ring > 0) {
		reverse(st->data + head, st->ring);
		reverse(st->data + head + st->ring, tail - st->ring);
		reverse(st->data + head, tail);
		st->ring = 0;
	}
	hlen = utf8_cut_end(t, head);
	tstart = head + utf8_cut_start(t + head, tail);
	for (size_t i = 0; i < c->nsecrets; i++) {
		size_t a = prefix_at_end(c->secrets[i], t, hlen);
		size_t b = suffix_at_start(c->secrets[i], t + tstart, head + tail - tstart);

		post = a > post ? a : post;
		pre = b > pre ? b : pre;
	}
	if (post < c->opts.fragment_min)
		post = 0;
	if (pre < c->opts.fragment_min)
		pre = 0;
	/* capture_take stays far enough from the end of the head: sent <= hlen - post. */
	if ((rc = mask_append(c, out, t + sent, hlen - sent, 0, post)))
		return rc;
	/* The text so far, taken or not, ends the line before the marker. */
	int any = out->len > start || sent > 0;
	char lastc = out->len > start ? out->data[out->len - 1] : st->last;
	if (any && hlen > 0 && lastc != '\n' && (rc = buf_append(out, "\n", 1)))
		return rc;
	omitted = st->bytes - hlen - (head + tail - tstart);
	snprintf(num, sizeof(num), "%" PRIu64, omitted);
	if ((rc = buf_puts(out, MARKER_OPEN)) || (rc = buf_puts(out, num)) ||
	    (rc = buf_puts(out, MARKER_CLOSE)))
		return rc;
	return mask_append(c, out, t + tstart, head + tail - tstart, pre, 0);
}

int capture_finish(struct capture *c, int stream, struct buf *out, uint64_t *bytes,
		   int *truncated, struct err *e)
{
	struct capture_stream *st = stream_of(c, stream);
	int rc, cut = 0;

	if (!st)
		return err_set(e, ERR_INVALID, "capture: no stream %d", stream);
	if (st->finished)
		return err_set(e, ERR_INVALID, "capture: stream %d finished already", stream);
	st->finished = 1;
	if (bytes)
		*bytes = st->bytes;
	if (truncated)
		*truncated = 0;
	if ((rc = st->failed)) {
		err_set(e, rc, "capture: stream %d: out of memory", stream);
		goto out;
	}
	rc = finish_text(c, st, out, &cut);
	if (truncated)
		*truncated = cut;
	if (rc)
		err_set(e, rc, rc == ERR_TOOBIG ? "capture: stream %d: text over the buffer's bound"
						: "capture: stream %d: out of memory", stream);
out:
	free(st->data);
	st->data = NULL;
	st->len = st->cap = st->ring = 0;
	return rc;
}

/* The start of the first occurrence of a secret in t[from..to) that begins before k and
 * ends after it, or k when there is none. */
static size_t straddle(const struct capture *c, const unsigned char *t, size_t from,
		       size_t to, size_t k)
{
	size_t best = k;

	for (size_t i = 0; i < c->nsecrets; i++) {
		struct finder f = {.sec = c->secrets[i]};

		for (finder_next(&f, t + from, to - from); f.have && from + f.start < k;
		     finder_next(&f, t + from, to - from))
			if (from + f.end > k && from + f.start < best)
				best = from + f.start;
	}
	return best;
}

int capture_take(struct capture *c, int stream, struct buf *out, struct err *e)
{
	struct capture_stream *st = stream_of(c, stream);
	size_t head = c->opts.head, hold = 3, end, k, size0;
	const unsigned char *t;
	int rc;

	if (!st || st->finished)
		return err_set(e, ERR_INVALID, "capture: no open stream %d", stream);
	if ((rc = st->failed))
		return err_set(e, rc, "capture: stream %d: out of memory", stream);
	end = st->len < head ? st->len : head;
	if (end <= st->sent)
		return 0;
	t = (const unsigned char *)st->data;
	/* Hold back what may be the start of a secret still arriving. */
	k = end;
	for (size_t i = 0; i < c->nsecrets; i++) {
		size_t p = prefix_at_end(c->secrets[i], t + st->sent, end - st->sent);
		if (end - p < k)
			k = end - p;
		if (c->secrets[i]->len + 3 > hold)
			hold = c->secrets[i]->len + 3;
	}
	/* Near the end of the head, stay clear of the fragment the cut may mask. */
	size_t limit = head > hold ? head - hold : 0;
	if (end + hold > head && k > limit)
		k = limit;
	/* Back to a character's start and out of any secret, until both hold. */
	for (;;) {
		size_t k2 = straddle(c, t, st->sent, end, utf8_cut_end(t, k));
		if (k2 == k)
			break;
		k = k2;
	}
	if (k <= st->sent)
		return 0;
	size0 = out->len;
	if ((rc = mask_append(c, out, t + st->sent, k - st->sent, 0, 0)))
		return err_set(e, rc, rc == ERR_TOOBIG ? "capture: text over the buffer's bound"
						       : "capture: out of memory");
	st->sent = k;
	if (out->len > size0)
		st->last = out->data[out->len - 1];
	return 0;
}

/* The longest of f's answers over every secret. */
static size_t longest(const struct capture *c,
		      size_t (*f)(const struct capture_secret *, const unsigned char *, size_t),
		      const char *t, size_t n)
{
	size_t most = 0;

	for (size_t i = 0; i < c->nsecrets; i++) {
		size_t k = f(c->secrets[i], (const unsigned char *)t, n);
		most = k > most ? k : most;
	}
	return most;
}

size_t capture_cut_fragment(const struct capture *c, const char *t, size_t n)
{
	return longest(c, suffix_at_start, t, n);
}

size_t capture_masked_through(const struct capture *c, const char *t, size_t n, size_t at)
{
	const unsigned char *u = (const unsigned char *)t;
	size_t end = at;
	int grew = 1;

	/* A span that starts before end and ends past it joins the masked run (overlapping
	 * spans are masked as one): grow until none does. */
	while (grew) {
		grew = 0;
		for (size_t i = 0; i < c->nsecrets; i++) {
			struct finder f = {.sec = c->secrets[i]};
			for (finder_next(&f, u, n); f.have && f.start < end; finder_next(&f, u, n))
				if (f.end > end) {
					end = f.end;
					grew = 1;
				}
		}
	}
	return end;
}

size_t capture_pending(const struct capture *c, const char *t, size_t n)
{
	return longest(c, prefix_at_end, t, n);
}

size_t capture_secret_max(const struct capture *c)
{
	size_t most = 0;

	for (size_t i = 0; i < c->nsecrets; i++)
		most = c->secrets[i]->len > most ? c->secrets[i]->len : most;
	return most;
}

int capture_marker(struct buf *out, uint64_t omitted)
{
	char num[24];

	snprintf(num, sizeof(num), "%" PRIu64, omitted);
	if (buf_puts(out, MARKER_OPEN) || buf_puts(out, num) || buf_puts(out, MARKER_CLOSE))
		return ERR_TOOBIG;
	return 0;
}

int capture_mask_text(const struct capture *c, const char *s, size_t n, struct buf *out,
		      struct err *e)
{
	int rc = mask_append(c, out, (const unsigned char *)s, n, 0, 0);

	if (rc)
		return err_set(e, rc, rc == ERR_TOOBIG ? "capture: text over the buffer's bound"
						       : "capture: out of memory");
	return 0;
}
