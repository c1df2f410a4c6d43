/* packscan.c: the blobs of a pushed pack scanned as the request body streams in
 * (packscan.h). Bytes are appended to a window; one step per part of the body takes what it
 * can from the window's start and says how much it took. A blob's zlib stream is inflated
 * whole by libdeflate (two to three times zlib's speed) once the window holds all of it;
 * anything else goes through zlib as it comes, only to find where it ends. */
#include <stdlib.h>
#include <string.h>
#include "sandboxd/proto/packscan.h"
#include "sandboxd/proto/scan.h"
#include "sandboxd/common/banned.h"

#define OBJ_BLOB 3
#define OBJ_OFS_DELTA 6
#define OBJ_REF_DELTA 7
#define OID_LEN 20                /* SHA-1: a SHA-256 push stops the scan */
#define FIRST_TRY 4096            /* a blob's first inflate once this much of it is in */

int packscan_init(struct packscan *s, size_t blob_max, packscan_fn fn, void *arg)
{
	memset(s, 0, sizeof(*s));
	s->state = PACKSCAN_PKT_LEN;
	s->fn = fn;
	s->arg = arg;
	s->blob_max = blob_max;
	s->flushes = 1;
	if (inflateInit(&s->z) != Z_OK || !(s->d = libdeflate_alloc_decompressor())) {
		s->state = PACKSCAN_STOPPED;
		if (s->z.state)
			inflateEnd(&s->z);
		return -1;
	}
	s->z_ready = 1;
	return 0;
}

void packscan_release(struct packscan *s)
{
	if (s->z_ready)
		inflateEnd(&s->z);
	s->z_ready = 0;
	if (s->d)
		libdeflate_free_decompressor(s->d);
	s->d = NULL;
	free(s->blob);
	free(s->win);
	s->blob = s->win = NULL;
	s->blob_cap = s->win_cap = s->win_len = s->win_pos = 0;
}

static size_t stop(struct packscan *s)
{
	s->state = PACKSCAN_STOPPED;
	return 0;
}

static int hexval(unsigned char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* 1 when the space-separated capabilities hold word (a whole token, or word=...). */
static int has_cap(const struct packscan *s, const char *word, size_t wlen)
{
	for (size_t i = 0; i + wlen <= s->ncaps; i++)
		if ((i == 0 || s->caps[i - 1] == ' ') && memcmp(s->caps + i, word, wlen) == 0 &&
		    (i + wlen == s->ncaps || strchr(" \n=", s->caps[i + wlen])))
			return 1;
	return 0;
}

/* A pkt-line's four hex digits: a flush ends the commands (or the push options); a
 * delimiter or response-end is not of this protocol. */
static size_t pkt_len(struct packscan *s, const unsigned char *p, size_t n)
{
	size_t len = 0;

	if (n < 4)
		return 0;
	for (int i = 0; i < 4; i++) {
		int v = hexval(p[i]);

		if (v < 0)
			return stop(s);
		len = len * 16 + (size_t)v;
	}
	if (len == 0) {
		if (--s->flushes == 0)
			s->state = PACKSCAN_PACK_HEADER;
		return 4;
	}
	if (len < 4)
		return stop(s);
	s->pkt_left = len - 4;
	if (s->pkt_left)
		s->state = PACKSCAN_PKT_DATA;
	return 4;
}

/* The first line that carries capabilities (after a NUL) decides what comes before the
 * pack: push options and their own flush, when asked for. */
static void caps_done(struct packscan *s)
{
	if (has_cap(s, "push-options", 12))
		s->flushes = 2;
	if (has_cap(s, "object-format", 13) && !has_cap(s, "object-format=sha1", 18))
		stop(s);
}

/* A pkt-line's payload: only the capabilities are kept (caps_seen 0: no NUL met yet; 1:
 * in the line that has them, after its NUL; 2: read). */
static size_t pkt_data(struct packscan *s, const unsigned char *p, size_t n)
{
	size_t k = s->pkt_left < n ? s->pkt_left : n;
	const unsigned char *from = NULL, *nul;

	if (s->caps_seen == 0 && (nul = memchr(p, 0, k)))
		s->caps_seen = 1, from = nul + 1;
	else if (s->caps_seen == 1)
		from = p;
	if (from) {
		size_t m = (size_t)(p + k - from), room = sizeof(s->caps) - s->ncaps;

		memcpy(s->caps + s->ncaps, from, m < room ? m : room);
		s->ncaps += m < room ? m : room;
	}
	s->pkt_left -= k;
	if (s->pkt_left == 0) {
		s->state = PACKSCAN_PKT_LEN;
		if (s->caps_seen == 1) {
			s->caps_seen = 2;
			caps_done(s);
		}
	}
	return k;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* "PACK", version 2 or 3, the number of entries. */
static size_t pack_header(struct packscan *s, const unsigned char *p, size_t n)
{
	uint32_t version;

	if (n < 12)
		return 0;
	version = be32(p + 4);
	if (memcmp(p, "PACK", 4) || (version != 2 && version != 3))
		return stop(s);
	s->entries = be32(p + 8);
	s->offset = 12;
	s->pack_at = s->body_pos;
	s->state = s->entries ? PACKSCAN_ENTRY_HEADER : PACKSCAN_DONE;
	return 12;
}

/* Bytes of the entry in hand: they count in its CRC and the pack's offset. */
static void take(struct packscan *s, const unsigned char *p, size_t k)
{
	s->crc = (uint32_t)crc32(s->crc, p, (uInt)k);
	s->offset += k;
}

/* The entry's data begins: a blob within the bound waits for its whole zlib stream and is
 * inflated into the buffer; anything else goes through zlib into scratch. */
static void data_begins(struct packscan *s)
{
	s->state = PACKSCAN_ENTRY_DATA;
	s->keep = s->type == OBJ_BLOB && s->size <= s->blob_max;
	s->next_try = FIRST_TRY;
	if (!s->keep) {
		if (inflateReset(&s->z) != Z_OK)
			stop(s);
		return;
	}
	if (s->size > s->blob_cap || !s->blob) {
		unsigned char *b = realloc(s->blob, s->size ? (size_t)s->size : 1);

		if (!b) {
			stop(s);
			return;
		}
		s->blob = b;
		s->blob_cap = s->size ? (size_t)s->size : 1;
	}
}

/* The entry's header: type and size (7 bits a byte, 4 in the first), whole or not yet. */
static size_t entry_header(struct packscan *s, const unsigned char *p, size_t n)
{
	size_t i = 0;
	unsigned c, shift = 4;
	uint64_t size;

	if (n == 0)
		return 0;
	c = p[i++];
	size = c & 15;
	while (c & 0x80) {
		if (i == n)
			return 0;       /* the rest of the header is still to come */
		if (shift > 57)
			return stop(s);
		c = p[i++];
		size |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	s->entry_offset = s->offset;
	s->crc = (uint32_t)crc32(0, NULL, 0);
	s->type = (int)((p[0] >> 4) & 7);
	s->size = size;
	take(s, p, i);
	if (s->type == OBJ_OFS_DELTA || s->type == OBJ_REF_DELTA) {
		s->state = PACKSCAN_DELTA_BASE;
		s->base_left = s->type == OBJ_REF_DELTA ? OID_LEN : 10;
	} else if (s->type < 1 || s->type > 4) {
		return stop(s);
	} else {
		data_begins(s);
	}
	return i;
}

/* A delta's base: a 20-byte name, or an offset in 7-bit groups (at most 10 bytes). */
static size_t delta_base(struct packscan *s, const unsigned char *p, size_t n)
{
	size_t k = 0;

	if (s->type == OBJ_REF_DELTA) {
		k = s->base_left < n ? s->base_left : n;
		s->base_left -= k;
	} else {
		while (k < n && s->base_left) {
			s->base_left = p[k++] & 0x80 ? s->base_left - 1 : 0;
			if (s->base_left == 1)
				return stop(s);
		}
	}
	take(s, p, k);
	if (s->base_left == 0)
		data_begins(s);
	return k;
}

/* The next entry, or the trailer (index-pack checks that; nothing after it matters). */
static void entry_done(struct packscan *s)
{
	s->state = ++s->seen == s->entries ? PACKSCAN_DONE : PACKSCAN_ENTRY_HEADER;
}

/* A whole blob's zlib stream in the window: inflated once it is all there. When an attempt
 * fails the stream is not whole yet, up to zlib's own bound on a stream of that size (git
 * writes with zlib); past it, the data is bad. Attempts at doubling lengths: each byte is
 * inflated at most about twice. */
static size_t blob_data(struct packscan *s, const unsigned char *p, size_t n)
{
	size_t used = 0;
	uint64_t most = compressBound((uLong)s->size) + 64;

	if (!s->ending && n < s->next_try && n < most)
		return 0;
	if (libdeflate_zlib_decompress_ex(s->d, p, n, s->blob, (size_t)s->size, &used, NULL) !=
	    LIBDEFLATE_SUCCESS) {
		if (n >= most || s->ending)
			return stop(s);
		s->next_try = n * 2;
		return 0;
	}
	take(s, p, used);
	s->stats_scanned++;
	if (!scan_buffer(s->blob, (size_t)s->size, NULL)) {
		struct packscan_blob b;

		/* Padding too: records are written whole (streamscan.c). */
		memset(&b, 0, sizeof(b));
		b.offset = s->entry_offset;
		b.raw_len = s->offset - s->entry_offset;
		b.size = s->size;
		b.crc = s->crc;
		s->stats_clean++;
		s->fn(s->arg, &b);
	}
	entry_done(s);
	return used;
}

/* Any other entry's zlib stream, through zlib into scratch as it comes, to find its end
 * (and to check it inflates to the size its header gives). */
static size_t other_data(struct packscan *s, const unsigned char *p, size_t n)
{
	size_t used = 0;

	for (;;) {
		uLong out = s->z.total_out;
		size_t was;
		int rc;

		s->z.next_in = (unsigned char *)(uintptr_t)(p + used);
		s->z.avail_in = (uInt)(n - used > (1u << 30) ? 1u << 30 : n - used);
		s->z.next_out = s->scratch;
		s->z.avail_out = sizeof(s->scratch);
		was = s->z.avail_in;
		rc = inflate(&s->z, Z_NO_FLUSH);
		take(s, p + used, was - s->z.avail_in);
		used += was - s->z.avail_in;
		if (rc == Z_STREAM_END) {
			if (s->z.total_out == s->size)
				entry_done(s);
			else
				stop(s);
			return used;
		}
		/* An error, or no progress with input there: bad data. */
		if ((rc != Z_OK && rc != Z_BUF_ERROR) ||
		    (used < n && s->z.total_out == out && was == s->z.avail_in)) {
			stop(s);
			return used;
		}
		if (used == n)
			return used;
	}
}

/* Appends data to the window, first dropping what the steps took. 0, or -1 out of memory. */
static int window_add(struct packscan *s, const void *data, size_t n)
{
	if (s->win_pos) {
		memmove(s->win, s->win + s->win_pos, s->win_len - s->win_pos);
		s->win_len -= s->win_pos;
		s->win_pos = 0;
	}
	if (s->win_len + n > s->win_cap) {
		size_t cap = s->win_cap ? s->win_cap : 65536;
		unsigned char *w;

		while (cap < s->win_len + n)
			cap *= 2;
		if (!(w = realloc(s->win, cap)))
			return -1;
		s->win = w;
		s->win_cap = cap;
	}
	memcpy(s->win + s->win_len, data, n);
	s->win_len += n;
	return 0;
}

static size_t step(struct packscan *s, const unsigned char *p, size_t n)
{
	switch (s->state) {
	case PACKSCAN_PKT_LEN: return pkt_len(s, p, n);
	case PACKSCAN_PKT_DATA: return pkt_data(s, p, n);
	case PACKSCAN_PACK_HEADER: return pack_header(s, p, n);
	case PACKSCAN_ENTRY_HEADER: return entry_header(s, p, n);
	case PACKSCAN_DELTA_BASE: return delta_base(s, p, n);
	case PACKSCAN_ENTRY_DATA: return s->keep ? blob_data(s, p, n) : other_data(s, p, n);
	default: return 0;
	}
}

/* The steps over the window, until one takes nothing and changes nothing: it waits for
 * more. */
static void run(struct packscan *s)
{
	while (s->win && s->state != PACKSCAN_DONE && s->state != PACKSCAN_STOPPED) {
		enum packscan_state was = s->state;
		size_t k = step(s, s->win + s->win_pos, s->win_len - s->win_pos);

		s->win_pos += k;
		s->body_pos += k;
		if (k == 0 && s->state == was)
			break;
	}
}

void packscan_feed(struct packscan *s, const void *data, size_t n)
{
	if (n == 0 || s->state == PACKSCAN_DONE || s->state == PACKSCAN_STOPPED)
		return;
	if (window_add(s, data, n)) {
		stop(s);
		return;
	}
	run(s);
}

void packscan_end(struct packscan *s)
{
	/* Blobs last in the pack: their streams and the trailer may be fewer bytes than an
	 * attempt waits for. Every blob is tried with what came. */
	s->ending = 1;
	run(s);
	if (s->state != PACKSCAN_DONE)
		s->state = PACKSCAN_STOPPED;
}
