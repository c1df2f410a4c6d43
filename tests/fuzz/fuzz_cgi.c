/* fuzz_cgi.c: cgi_parse_headers on what git http-backend (or anything in its place) writes.
 * Invariants: the block length is within the input and ends with a line break; the status
 * is 100..599; the headers passed on are "Name: value\r\n" lines with no bare CR or LF and
 * none of the dropped framing headers; the same block with the body cut off parses the
 * same; ERR_INVALID and 0 ("more bytes") are the only other answers. */
#include <strings.h>
#include "fuzz.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/proto/cgi.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

static void check_out(const struct buf *out)
{
	const char *p, *end;

	if (!out->len)
		return;
	p = out->data;
	end = out->data + out->len;
	FUZZ_CHECK(p && p[out->len] == 0);
	while (p < end) {
		const char *crlf = memchr(p, '\r', (size_t)(end - p)), *colon;

		FUZZ_CHECK(crlf && crlf + 1 < end && crlf[1] == '\n');
		FUZZ_CHECK(!memchr(p, '\n', (size_t)(crlf - p)));
		colon = memchr(p, ':', (size_t)(crlf - p));
		FUZZ_CHECK(colon && colon > p && colon[1] == ' ');
		FUZZ_CHECK(!((size_t)(colon - p) == 14 && strncasecmp(p, "content-length", 14) == 0));
		FUZZ_CHECK(!((size_t)(colon - p) == 6 && strncasecmp(p, "status", 6) == 0));
		p = crlf + 2;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_dup(data, size);
	struct buf out, again;
	int status = -1, status2 = -1;
	long rc;

	buf_init(&out, CGI_HEADERS_MAX * 2);
	buf_init(&again, CGI_HEADERS_MAX * 2);
	rc = cgi_parse_headers(in, size, &status, &out);
	if (rc > 0) {
		FUZZ_CHECK((size_t)rc <= size && (size_t)rc <= CGI_HEADERS_MAX);
		FUZZ_CHECK(in[rc - 1] == '\n');
		FUZZ_CHECK(status >= 100 && status <= 599);
		check_out(&out);
		/* The header block alone, in a buffer of its size, gives the same answer. */
		char *block = fuzz_dup(in, (size_t)rc);
		FUZZ_CHECK(cgi_parse_headers(block, (size_t)rc, &status2, &again) == rc);
		FUZZ_CHECK(status2 == status && again.len == out.len &&
			   (!out.len || memcmp(again.data, out.data, out.len) == 0));
		free(block);
	} else if (rc == 0) {
		FUZZ_CHECK(size < CGI_HEADERS_MAX);
	} else {
		FUZZ_CHECK(rc == ERR_INVALID);
	}
	buf_release(&again);
	buf_release(&out);
	free(in);
	return 0;
}
