/* cgi.h: the header block a CGI program (git http-backend) writes before its body:
 * "Name: value" lines ended by an empty line, LF or CRLF. Status comes from "Status: NNN
 * reason" (200 when absent). The parser is bounded and never trusts the child's bytes. */
#ifndef SANDBOXD_CGI_H
#define SANDBOXD_CGI_H
#include <stddef.h>
#include "sandboxd/lib/buf.h"

#define CGI_HEADERS_MAX 16384

/* Looks for the end of the header block in data[0..n). Returns the number of bytes the block
 * takes (the body starts there), 0 when more bytes are needed, or ERR_INVALID when the block
 * is malformed or longer than CGI_HEADERS_MAX. On success *status is set and out receives the
 * headers to pass on, each as "Name: value\r\n" (Status itself is not copied; hop-by-hop and
 * framing headers such as Content-Length are dropped because the response is streamed). */
long cgi_parse_headers(const char *data, size_t n, int *status, struct buf *out);

#endif
