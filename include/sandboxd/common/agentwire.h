/* agentwire.h: frames of agentproto.h over a socket, for both ends (the worker's client
 * and sandboxd-agent, which compiles this file too: it uses nothing but libc). Reads are
 * bounded by the reader's maximum before any payload byte is read, and by a deadline;
 * writes never raise SIGPIPE.
 *
 * Errors: 0; ERR_TOOBIG or ERR_INVALID for a header that is refused (nothing more is read:
 * the connection is not usable after it); ERR_FAIL for a connection that closed or failed,
 * or a deadline that passed; ERR_CANCELLED when the cancel callback asked to stop. */
#ifndef SANDBOXD_AGENTWIRE_H
#define SANDBOXD_AGENTWIRE_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/agentproto.h"
#include "sandboxd/common/err.h"

/* Milliseconds of CLOCK_MONOTONIC. */
long long agentwire_now_ms(void);

/* How long a read may wait: until deadline_ms (CLOCK_MONOTONIC ms, 0: for ever), asking
 * cancel (if not NULL) at least once a second. */
struct agentwire_wait {
	long long deadline_ms;
	int (*cancel)(void *arg);
	void *arg;
};

/* One frame into buf[0..cap): its header in *h, its payload at buf[0..h->len). The payload
 * bound is min(max, cap, the type's own). */
int agentwire_read(int fd, unsigned char *buf, size_t cap, uint32_t max,
		   const struct agentwire_wait *w, struct ap_hdr *h, struct err *e)
	__attribute__((warn_unused_result));

/* Writes p[0..n) whole, waiting at most timeout_ms for room each time. */
int agentwire_write(int fd, const void *p, size_t n, int timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* Ends the frame being encoded and writes it. */
int agentwire_send(int fd, struct ap_enc *w, int timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* A raw frame (STDOUT, STDERR, DATA) of n <= AP_DATA_MAX bytes. */
int agentwire_send_raw(int fd, uint8_t type, uint32_t stream, const void *p, size_t n,
		       int timeout_ms, struct err *e) __attribute__((warn_unused_result));

#endif
