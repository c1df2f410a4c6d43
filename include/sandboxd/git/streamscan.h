/* streamscan.h: push protection's first pass, made while a push streams in. The git worker
 * tees a push's request body into a scanner process (pushtee.h: sandboxd-hook run under
 * the name "sandboxd-packscan", whose main is streamscan_serve), which scans the pack's
 * whole blobs as they arrive (packscan.h) and writes each one found clean into a memfd. The
 * pre-receive hook then waits for the scanner to end and skips those blobs (pushscan.h):
 * inflating and scanning them, most of the hook's time, overlaps git's index-pack instead
 * of following it.
 *
 * Descriptors: the scanner reads the body on 0, writes its records on 3 (the memfd) and
 * holds the write end of a "done" pipe on 4 until it exits. The hook finds the pipe's read
 * end and the memfd in SANDBOXD_HOOK_SCANNED, "<done fd> <records fd>" (empty: no
 * scanner). A record is a struct packscan_blob as this same program wrote it. */
#ifndef SANDBOXD_STREAMSCAN_H
#define SANDBOXD_STREAMSCAN_H
#include "sandboxd/git/pushscan.h"

#define STREAMSCAN_NAME "sandboxd-packscan"
#define STREAMSCAN_BLOB_MAX ((size_t)8 << 20)   /* bigger blobs are the hook's (and its memory bounded) */
#define STREAMSCAN_WAIT_MS 5000                 /* the hook's wait for the scanner's end */

/* The scanner: the body from in (to its end), records to out. 0, or 1 when out cannot be
 * written (the hook then finds fewer records: no harm). */
int streamscan_serve(int in, int out) __attribute__((warn_unused_result));

/* The hook's side: the records of the scanner spec names, once it has ended (waiting at
 * most STREAMSCAN_WAIT_MS). 0 with *out filled (its array malloc'd, sorted by offset; free
 * with streamscan_free), or -1 when there is nothing to use: no scanner (spec empty), a
 * scanner that did not end in time, records out of order or cut. The hook then scans
 * every blob itself. */
int streamscan_collect(const char *spec, struct pushscan_scanned *out)
	__attribute__((warn_unused_result));
void streamscan_free(struct pushscan_scanned *s);

#endif
