/* scanstream.c: the secret scanner over a stream, one window at a time (scanstream.h). */
#include <string.h>
#include "sandboxd/proto/scanstream.h"
#include "sandboxd/common/banned.h"

static void win_init(struct scanstream_win *w)
{
	w->len = w->from = w->lines = 0;
	w->hit.rule = NULL;
	w->hit.line = 0;
}

/* Scans the positions [from, to) of the window: 1 when a secret starts there. */
static int win_scan(struct scanstream_win *w, size_t to)
{
	size_t at;
	const char *rule;

	if (to <= w->from)
		return 0;
	rule = scan_window(w->buf, w->len, w->from, to, &at);
	w->from = to;
	if (!rule)
		return 0;
	w->hit.rule = rule;
	w->hit.line = w->lines + 1 + scan_lines(w->buf, at);
	return 1;
}

/* Appends data[0..n) to the window, scanning and sliding it each time it holds step new
 * bytes and what a secret starting in them may need after them: 1 once a secret is found
 * (nothing more is scanned then). */
static int win_feed(struct scanstream_win *w, size_t step, const unsigned char *data, size_t n)
{
	size_t cap = step + SCAN_LOOKAHEAD + 1;

	while (n && !w->hit.rule) {
		size_t take = cap - w->len < n ? cap - w->len : n, drop;

		memcpy(w->buf + w->len, data, take);
		w->len += take;
		data += take;
		n -= take;
		if (w->len < cap)
			break;
		if (win_scan(w, w->len - SCAN_LOOKAHEAD))
			return 1;
		/* Keep the lookahead and the one byte before it. */
		drop = w->from - 1;
		w->lines += scan_lines(w->buf, drop);
		memmove(w->buf, w->buf + drop, w->len - drop);
		w->len -= drop;
		w->from = 1;
	}
	return w->hit.rule != NULL;
}

/* The UTF-16 bytes data[0..n) as code units, decoded to ASCII (a unit past 127 is one
 * byte 0x80, as scan_buffer takes it), into the text window. */
static void text_feed(struct scanstream *s, const unsigned char *data, size_t n)
{
	unsigned char out[4096];
	size_t k = 0;

	for (size_t i = 0; i < n && !s->text.hit.rule; i++) {
		unsigned cu;

		if (s->skip) {
			s->skip--;
			continue;
		}
		if (!s->odd) {
			s->odd = 1;
			s->odd_byte = data[i];
			continue;
		}
		s->odd = 0;
		cu = s->kind == 1 ? s->odd_byte | (unsigned)data[i] << 8
				  : data[i] | (unsigned)s->odd_byte << 8;
		out[k++] = cu < 0x80 ? (unsigned char)cu : 0x80;
		if (k == sizeof(out)) {
			(void)win_feed(&s->text, s->step, out, k);
			k = 0;
		}
	}
	if (k)
		(void)win_feed(&s->text, s->step, out, k);
}

/* Decides whether the stream is UTF-16 from its head, as scan_buffer would. */
static void decide(struct scanstream *s)
{
	s->kind = scan_utf16_kind(s->head, s->head_len, &s->skip);
	if (s->kind)
		text_feed(s, s->head, s->head_len);
}

void scanstream_init(struct scanstream *s, size_t step)
{
	s->step = step == 0 || step > SCANSTREAM_STEP ? SCANSTREAM_STEP : step;
	win_init(&s->raw);
	win_init(&s->text);
	s->head_len = 0;
	s->kind = -1;
	s->skip = 0;
	s->odd = 0;
	s->odd_byte = 0;
	s->ended = 0;
}

int scanstream_feed(struct scanstream *s, const void *data, size_t n)
{
	const unsigned char *d = data;

	if (s->raw.hit.rule || s->ended || n == 0)
		return s->raw.hit.rule != NULL;
	if (s->kind < 0) {
		size_t take = sizeof(s->head) - s->head_len < n ? sizeof(s->head) - s->head_len : n;

		memcpy(s->head + s->head_len, d, take);
		s->head_len += take;
		if (s->head_len == sizeof(s->head))
			decide(s);
		if (s->kind > 0 && n > take)
			text_feed(s, d + take, n - take);
	} else if (s->kind > 0) {
		text_feed(s, d, n);
	}
	return win_feed(&s->raw, s->step, d, n);
}

int scanstream_end(struct scanstream *s, struct scan_hit *hit)
{
	const struct scan_hit *h = NULL;

	if (!s->ended) {
		s->ended = 1;
		if (s->kind < 0)
			decide(s);
		if (!s->raw.hit.rule)
			(void)win_scan(&s->raw, s->raw.len);
		if (s->kind > 0 && !s->text.hit.rule)
			(void)win_scan(&s->text, s->text.len);
	}
	if (s->raw.hit.rule)
		h = &s->raw.hit;
	else if (s->text.hit.rule)
		h = &s->text.hit;
	if (hit) {
		hit->rule = h ? h->rule : NULL;
		hit->line = h ? h->line : 0;
	}
	return h != NULL;
}
