/* fcgiin.c: the undelivered bytes of libfcgi's input buffer. */
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/http/fcgiin.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

/* libfcgi 2.4's FCGX_Stream_Data (fcgiapp.c). */
struct fcgx_stream_data {
	unsigned char *buff;      /* the buffer, aligned to 8 */
	int bufflen;
	unsigned char *mBuff;     /* the buffer as allocated */
	unsigned char *buffStop;  /* reader: the end of what was read from the connection */
	int type;                 /* FCGI_STDIN once the parameters are read */
	int eorStop;
	int skip;
	int contentLen;           /* reader: content of the record in hand not yet read */
	int paddingLen;           /* reader: its padding not yet skipped */
	int isAnythingWritten;
	int rawWrite;
	FCGX_Request *reqDataPtr;
};

#define FCGI_STDIN_TYPE 5

/* What the public fields must agree with: the stream is req's body, the buffer holds the
 * handed-out window [rdNext, stop), the aligned buffer starts at most 7 bytes into the
 * allocation, and the record lengths are FastCGI's. */
static int layout_ok(const FCGX_Request *req, const FCGX_Stream *in,
		     const struct fcgx_stream_data *d)
{
	return d && d->reqDataPtr == req && req->in == in && in->isReader &&
	       d->type == FCGI_STDIN_TYPE && d->bufflen > 0 && d->bufflen <= 65536 &&
	       d->buff >= d->mBuff && d->buff - d->mBuff < 8 && ((uintptr_t)d->buff & 7) == 0 &&
	       in->rdNext >= d->buff && in->stop >= in->rdNext && d->buffStop >= in->stop &&
	       d->buffStop <= d->buff + d->bufflen && d->contentLen >= 0 &&
	       d->contentLen <= 65535 && d->paddingLen >= 0 && d->paddingLen <= 255;
}

int fcgiin_held(const FCGX_Request *req)
{
	static int warned;
	const FCGX_Stream *in = req->in;
	const struct fcgx_stream_data *d = in ? in->data : NULL;

	if (!in || !layout_ok(req, in, d)) {
		if (!warned++)
			log_error("libfcgi's input stream is not laid out as fcgiin.c knows: a push's "
				  "body is read without the stall bound (a slow client can hold a git "
				  "worker)");
		return -1;
	}
	/* The rest of the record in hand is still to come from the connection; past its
	 * padding, any byte is the next record's, read already. */
	return d->contentLen == 0 && d->buffStop - in->rdNext > d->paddingLen;
}
