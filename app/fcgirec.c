/* fcgirec.c: FastCGI records of an answer (fcgirec.h). */
#include "sandboxd/err.h"
#include "sandboxd/fcgirec.h"
#include "sandboxd/banned.h"

#define VERSION_1 1
#define TYPE_END_REQUEST 3
#define TYPE_STDOUT 6

static int header(struct buf *out, unsigned type, unsigned id, size_t len)
{
	const unsigned char h[8] = { VERSION_1, (unsigned char)type,
				     (unsigned char)(id >> 8), (unsigned char)id,
				     (unsigned char)(len >> 8), (unsigned char)len, 0, 0 };

	return buf_append(out, h, sizeof(h));
}

int fcgirec_stdout(struct buf *out, unsigned id, const void *data, size_t n)
{
	const char *p = data;
	int rc;

	while (n) {
		size_t k = n > FCGIREC_CONTENT_MAX ? FCGIREC_CONTENT_MAX : n;
		size_t was = out->len;

		if ((rc = header(out, TYPE_STDOUT, id, k)) || (rc = buf_append(out, p, k))) {
			out->len = was;
			if (out->data)
				out->data[was] = 0;
			return rc;
		}
		p += k;
		n -= k;
	}
	return 0;
}

int fcgirec_end(struct buf *out, unsigned id)
{
	/* appStatus 0 (four bytes), protocolStatus FCGI_REQUEST_COMPLETE (0), reserved. */
	static const unsigned char body[8] = { 0 };
	int rc;

	if ((rc = header(out, TYPE_STDOUT, id, 0)) || (rc = header(out, TYPE_END_REQUEST, id, 8)))
		return rc;
	return buf_append(out, body, sizeof(body));
}
