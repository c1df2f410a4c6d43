/* scanstream.h: the secret scanner (scan.h) over a stream that arrives in chunks of any
 * size, such as an LFS object's upload (decision 0088): objects may be GiBs, so nothing
 * but a window of the stream is ever held. The answer is scan_buffer's on the whole
 * stream: a secret split across any chunk boundary is found, on the same line, and UTF-16
 * text is scanned a second time as text, as scan_buffer does.
 *
 * How: each window is scanned for secrets starting in its first part only; the last
 * SCAN_LOOKAHEAD bytes (the most any rule reads past a secret's start), and one byte
 * before them (a rule bounded on the left looks at it), are kept for the next window.
 * Pure: no I/O, no allocation (the caller provides the struct, about 140 KiB). */
#ifndef SANDBOXD_SCANSTREAM_H
#define SANDBOXD_SCANSTREAM_H
#include <stddef.h>
#include "sandboxd/proto/scan.h"

#define SCANSTREAM_STEP 65536   /* new bytes a window scans at most */

struct scanstream_win {
	size_t len;    /* bytes in buf */
	size_t from;   /* buf[0..from) was scanned (or is the byte before what was not) */
	size_t lines;  /* line feeds in the bytes dropped off buf's front */
	struct scan_hit hit;
	unsigned char buf[SCANSTREAM_STEP + SCAN_LOOKAHEAD + 1];
};

struct scanstream {
	size_t step;                    /* bytes a window scans before it slides */
	struct scanstream_win raw;      /* the bytes as they are */
	struct scanstream_win text;     /* UTF-16 code units as ASCII, when the stream is UTF-16 */
	unsigned char head[SCAN_UTF16_PROBE];
	size_t head_len;
	int kind;                       /* -1 undecided yet; 0 not UTF-16; 1 LE; 2 BE */
	size_t skip;                    /* byte-order mark bytes still to skip */
	int odd;                        /* a code unit's first byte waits in odd_byte */
	unsigned char odd_byte;
	int ended;
};

/* Starts a scan. step: bytes a window scans before it slides (1 to SCANSTREAM_STEP; 0
 * means SCANSTREAM_STEP); a small one is for tests. */
void scanstream_init(struct scanstream *s, size_t step);

/* The next n bytes of the stream (data may be NULL when n is 0). 1 once a secret was found
 * in the bytes as they are (the answer cannot change: the caller may stop feeding and call
 * scanstream_end); else 0. */
int scanstream_feed(struct scanstream *s, const void *data, size_t n)
	__attribute__((warn_unused_result));

/* The end of the stream: 1 with *hit (may be NULL) naming the secret found, scan_buffer's
 * answer on the whole stream; 0 with *hit = {NULL, 0} when none was. Called once. */
int scanstream_end(struct scanstream *s, struct scan_hit *hit)
	__attribute__((warn_unused_result));

#endif
