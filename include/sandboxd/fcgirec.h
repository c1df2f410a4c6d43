/* fcgirec.h: FastCGI records of an answer, for a process that writes to nginx's connection
 * without libfcgi (the holder, holder.h, answers requests a worker accepted). Pure: the
 * records are appended to a buffer; nginx reads them as libfcgi's own (FastCGI 1.0, §3.3
 * record header, §5.3 FCGI_STDOUT, §5.5 FCGI_END_REQUEST). */
#ifndef SANDBOXD_FCGIREC_H
#define SANDBOXD_FCGIREC_H
#include <stddef.h>
#include "sandboxd/buf.h"

#define FCGIREC_CONTENT_MAX 65535u  /* one record's content; longer data takes several */

/* data[0..n) as FCGI_STDOUT records of request id (n > 0: an empty record would end the
 * stream). 0, or ERR_TOOBIG / ERR_NOMEM from the buffer (which keeps what was whole). */
int fcgirec_stdout(struct buf *out, unsigned id, const void *data, size_t n)
	__attribute__((warn_unused_result));
/* The end of the answer: the empty FCGI_STDOUT record, then FCGI_END_REQUEST with
 * appStatus 0 and FCGI_REQUEST_COMPLETE. */
int fcgirec_end(struct buf *out, unsigned id) __attribute__((warn_unused_result));

#endif
