/* dstream.c: Docker's multiplexed stream, split into stdout and stderr, bounded. */
#include <string.h>
#include "sandboxd/proto/dstream.h"
#include "sandboxd/common/banned.h"

void dstream_init(struct dstream *d, uint32_t max_frame, dstream_fn fn, void *arg)
{
	memset(d, 0, sizeof(*d));
	d->fn = fn;
	d->arg = arg;
	d->max_frame = max_frame ? max_frame : DSTREAM_MAX_FRAME;
}

static int header(struct dstream *d, struct err *e)
{
	const unsigned char *h = d->hdr;
	uint32_t size = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];

	if (h[0] != DSTREAM_STDOUT && h[0] != DSTREAM_STDERR)
		return err_set(e, ERR_FAIL, "exec stream: unknown stream id %u", h[0]);
	if (h[1] || h[2] || h[3])
		return err_set(e, ERR_FAIL, "exec stream: malformed frame header");
	if (size > d->max_frame)
		return err_set(e, ERR_FAIL, "exec stream: frame of %u bytes is larger than %u",
			       size, d->max_frame);
	d->stream = h[0];
	d->remaining = size;
	return 0;
}

int dstream_feed(struct dstream *d, const void *data, size_t len, struct err *e)
{
	const char *p = data;
	int rc;

	if (d->failed)
		return err_set(e, d->failed, "exec stream: already failed");
	while (len > 0) {
		size_t take;

		if (d->remaining == 0) {
			take = DSTREAM_HEADER - d->hdr_len;
			take = take < len ? take : len;
			memcpy(d->hdr + d->hdr_len, p, take);
			d->hdr_len += take;
			p += take;
			len -= take;
			if (d->hdr_len < DSTREAM_HEADER)
				break;
			d->hdr_len = 0;
			if ((rc = header(d, e)))
				return d->failed = rc;
			continue;
		}
		take = d->remaining < len ? d->remaining : len;
		if ((rc = d->fn(d->arg, d->stream, p, take))) {
			d->failed = rc;
			return rc;
		}
		d->bytes[d->stream] += take;
		d->remaining -= (uint32_t)take;
		p += take;
		len -= take;
	}
	return 0;
}

int dstream_finish(struct dstream *d, struct err *e)
{
	if (d->failed)
		return err_set(e, d->failed, "exec stream: already failed");
	if (d->hdr_len || d->remaining)
		return err_set(e, ERR_FAIL, "exec stream: cut inside a frame");
	return 0;
}
