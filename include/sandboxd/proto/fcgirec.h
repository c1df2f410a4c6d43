/* fcgirec.h: FastCGI records of an answer, for a process that writes to nginx's connection
 * without libfcgi (the holder, holder.h, answers requests a worker accepted). Pure: the
 * records are appended to a buffer; nginx reads them as libfcgi's own (FastCGI 1.0, §3.3
 * record header, §5.3 FCGI_STDOUT, §5.5 FCGI_END_REQUEST). */
#ifndef SANDBOXD_FCGIREC_H
#define SANDBOXD_FCGIREC_H
#include <stddef.h>
#include "sandboxd/lib/buf.h"

#define FCGIREC_CONTENT_MAX 65535u  /* one record's content; longer data takes several */
#define FCGIREC_PARAMS 4
#define FCGIREC_STDIN 5
#define FCGIREC_STDOUT 6

/* data[0..n) as FCGI_STDOUT records of request id (n > 0: an empty record would end the
 * stream). 0, or ERR_TOOBIG / ERR_NOMEM from the buffer (which keeps what was whole). */
int fcgirec_stdout(struct buf *out, unsigned id, const void *data, size_t n)
	__attribute__((warn_unused_result));
/* The end of the answer: the empty FCGI_STDOUT record, then FCGI_END_REQUEST with
 * appStatus 0 and FCGI_REQUEST_COMPLETE. */
int fcgirec_end(struct buf *out, unsigned id) __attribute__((warn_unused_result));

/* data[0..n) as records of type (FCGIREC_PARAMS, _STDIN, _STDOUT); n == 0 appends the
 * one empty record that ends that stream. */
int fcgirec_stream(struct buf *out, unsigned type, unsigned id, const void *data, size_t n)
	__attribute__((warn_unused_result));
/* FCGI_BEGIN_REQUEST for the responder role, without FCGI_KEEP_CONN. */
int fcgirec_begin(struct buf *out, unsigned id) __attribute__((warn_unused_result));
/* One name-value pair appended to pairs: the content of FCGI_PARAMS records to be. */
int fcgirec_pair(struct buf *pairs, const char *name, size_t nlen, const char *value,
		 size_t vlen) __attribute__((warn_unused_result));

/* An answer's records passed on from one connection to another (a worker's to nginx's),
 * each record's request id set to the other connection's. Records are cut anywhere across
 * calls: the state carries a header in pieces and what is left of a record's body. */
struct fcgirec_relay {
	unsigned char hdr[8];
	size_t hdr_got;
	size_t left;            /* content and padding of the record in hand, still to copy */
	int ended;              /* FCGI_END_REQUEST came: the answer is whole */
};
/* in[0..n) onto out with the id rewritten. ERR_INVALID for a record that is not FastCGI
 * 1.0 or one after the end; the buffer's errors as they are. */
int fcgirec_relay(struct fcgirec_relay *st, unsigned id, const void *in, size_t n,
		  struct buf *out) __attribute__((warn_unused_result));

#endif
