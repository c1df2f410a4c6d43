/* fcgirec.c: FastCGI records of an answer (fcgirec.h). */
#include "sandboxd/common/err.h"
#include "sandboxd/proto/fcgirec.h"
#include "sandboxd/common/banned.h"

#define VERSION_1 1
#define TYPE_BEGIN_REQUEST 1
#define TYPE_END_REQUEST 3
#define TYPE_STDOUT FCGIREC_STDOUT
#define ROLE_RESPONDER 1

static int header(struct buf *out, unsigned type, unsigned id, size_t len)
{
	const unsigned char h[8] = { VERSION_1, (unsigned char)type,
				     (unsigned char)(id >> 8), (unsigned char)id,
				     (unsigned char)(len >> 8), (unsigned char)len, 0, 0 };

	return buf_append(out, h, sizeof(h));
}

/* data[0..n) as records of type; n == 0 is the one empty record that ends a stream. */
int fcgirec_stream(struct buf *out, unsigned type, unsigned id, const void *data, size_t n)
{
	const char *p = data;
	int rc;

	if (n == 0)
		return header(out, type, id, 0);
	while (n) {
		size_t k = n > FCGIREC_CONTENT_MAX ? FCGIREC_CONTENT_MAX : n;
		size_t was = out->len;

		if ((rc = header(out, type, id, k)) || (rc = buf_append(out, p, k))) {
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

int fcgirec_stdout(struct buf *out, unsigned id, const void *data, size_t n)
{
	return n ? fcgirec_stream(out, TYPE_STDOUT, id, data, n) : 0;
}

int fcgirec_begin(struct buf *out, unsigned id)
{
	/* role (two bytes), flags 0: the connection closes after the answer (no keep-conn). */
	static const unsigned char body[8] = { 0, ROLE_RESPONDER, 0, 0, 0, 0, 0, 0 };
	int rc = header(out, TYPE_BEGIN_REQUEST, id, sizeof(body));

	return rc ? rc : buf_append(out, body, sizeof(body));
}

/* A length as §3.4 writes it: one byte below 128, else four with the top bit set. */
static int pair_len(struct buf *out, size_t n)
{
	const unsigned char l4[4] = { (unsigned char)(n >> 24 | 0x80), (unsigned char)(n >> 16),
				      (unsigned char)(n >> 8), (unsigned char)n };
	unsigned char l1 = (unsigned char)n;

	return n < 128 ? buf_append(out, &l1, 1) : buf_append(out, l4, sizeof(l4));
}

int fcgirec_pair(struct buf *pairs, const char *name, size_t nlen, const char *value,
		 size_t vlen)
{
	int rc;

	if (nlen > 0x7fffffffu || vlen > 0x7fffffffu)
		return ERR_TOOBIG;
	if ((rc = pair_len(pairs, nlen)) || (rc = pair_len(pairs, vlen)) ||
	    (rc = buf_append(pairs, name, nlen)))
		return rc;
	return vlen ? buf_append(pairs, value, vlen) : 0;
}

int fcgirec_relay(struct fcgirec_relay *st, unsigned id, const void *in, size_t n,
		  struct buf *out)
{
	const unsigned char *p = in;
	int rc;

	while (n) {
		if (st->left) {
			size_t k = n < st->left ? n : st->left;

			if ((rc = buf_append(out, p, k)))
				return rc;
			st->left -= k;
			p += k;
			n -= k;
			continue;
		}
		if (st->ended)
			return ERR_INVALID;  /* nothing comes after the request's end */
		while (st->hdr_got < sizeof(st->hdr) && n) {
			st->hdr[st->hdr_got++] = *p++;
			n--;
		}
		if (st->hdr_got < sizeof(st->hdr))
			break;
		if (st->hdr[0] != VERSION_1)
			return ERR_INVALID;
		st->hdr[2] = (unsigned char)(id >> 8);
		st->hdr[3] = (unsigned char)id;
		st->left = ((size_t)st->hdr[4] << 8 | st->hdr[5]) + st->hdr[6];
		st->ended = st->hdr[1] == TYPE_END_REQUEST;
		st->hdr_got = 0;
		if ((rc = buf_append(out, st->hdr, sizeof(st->hdr))))
			return rc;
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
