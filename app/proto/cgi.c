/* cgi.c: parsing a CGI response's header block. */
#include <string.h>
#include <strings.h>
#include "sandboxd/proto/cgi.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

static int token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* Headers that describe the child's framing or the connection, not the content. */
static int dropped(const char *name, size_t n)
{
	static const char *const names[] = { "content-length", "connection", "transfer-encoding",
					     "keep-alive", "x-request-id", NULL };
	for (int i = 0; names[i]; i++)
		if (strlen(names[i]) == n && strncasecmp(name, names[i], n) == 0)
			return 1;
	return 0;
}

long cgi_parse_headers(const char *data, size_t n, int *status, struct buf *out)
{
	size_t pos = 0, limit = n < CGI_HEADERS_MAX ? n : CGI_HEADERS_MAX;

	*status = 200;
	buf_clear(out);
	for (;;) {
		const char *nl = memchr(data + pos, '\n', limit - pos);
		size_t end, len, nlen;
		const char *line = data + pos, *colon, *v;

		if (!nl)
			return n >= CGI_HEADERS_MAX ? ERR_INVALID : 0;
		end = (size_t)(nl - data);
		len = end - pos;
		if (len > 0 && line[len - 1] == '\r')
			len--;
		pos = end + 1;
		if (len == 0)
			return (long)pos;
		colon = memchr(line, ':', len);
		if (!colon || colon == line)
			return ERR_INVALID;
		nlen = (size_t)(colon - line);
		for (size_t i = 0; i < nlen; i++)
			if (!token_char(line[i]))
				return ERR_INVALID;
		v = colon + 1;
		while (v < line + len && (*v == ' ' || *v == '\t'))
			v++;
		size_t vlen = (size_t)(line + len - v);
		for (size_t i = 0; i < vlen; i++)
			if (v[i] == '\r' || v[i] == 0)
				return ERR_INVALID;
		if (nlen == 6 && strncasecmp(line, "Status", 6) == 0) {
			int s = 0;
			if (vlen < 3)
				return ERR_INVALID;
			for (int i = 0; i < 3; i++) {
				if (v[i] < '0' || v[i] > '9')
					return ERR_INVALID;
				s = s * 10 + (v[i] - '0');
			}
			if (s < 100 || s > 599 || (vlen > 3 && v[3] != ' '))
				return ERR_INVALID;
			*status = s;
			continue;
		}
		if (dropped(line, nlen))
			continue;
		if (buf_append(out, line, nlen) || buf_puts(out, ": ") || buf_append(out, v, vlen) ||
		    buf_puts(out, "\r\n"))
			return ERR_INVALID;
	}
}
