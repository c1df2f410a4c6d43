/* sniff.c: the host name in a connection's first bytes (sniff.h). */
#include <string.h>
#include <strings.h>
#include "sandboxd/proto/sniff.h"
#include "sandboxd/common/banned.h"

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

int sniff_name_valid(const char *name)
{
	size_t n = strlen(name), label = 0;
	int digits_only = 1;

	if (n == 0 || n > SNIFF_NAME_MAX)
		return 0;
	for (size_t i = 0; i <= n; i++) {
		char c = name[i];

		if (c == '.' || c == '\0') {
			if (label == 0 || name[i - 1] == '-')
				return 0;
			if (c == '\0')
				break;
			label = 0;
			digits_only = 1;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return 0;
		if (c == '-' && label == 0)
			return 0;
		if (++label > 63)
			return 0;
		if (c < '0' || c > '9')
			digits_only = 0;
	}
	return !digits_only;
}

/* Copies the name of n bytes at p, lower-cased, when it is a DNS name. */
static enum sniff_result take_name(const uint8_t *p, size_t n, char *name, size_t namesz,
				   const char **why)
{
	if (n == 0 || n > SNIFF_NAME_MAX || n >= namesz) {
		*why = "the server name is empty or longer than 253 bytes";
		return SNIFF_BAD;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];

		name[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	name[n] = '\0';
	if (memchr(p, '\0', n) || !sniff_name_valid(name)) {
		*why = "the server name is not a DNS name (an address, or bytes a name cannot hold)";
		name[0] = '\0';
		return SNIFF_BAD;
	}
	return SNIFF_FOUND;
}

/* The server_name extension's body at p[0..n): its first host_name. */
static enum sniff_result server_name(const uint8_t *p, size_t n, char *name, size_t namesz,
				     const char **why)
{
	size_t list, off = 2;

	if (n < 2 || (list = be16(p)) != n - 2) {
		*why = "a malformed server_name extension";
		return SNIFF_BAD;
	}
	while (off + 3 <= n) {
		unsigned type = p[off];
		size_t len = be16(p + off + 1);

		off += 3;
		if (len > n - off)
			break;
		if (type == 0)
			return take_name(p + off, len, name, namesz, why);
		off += len;
	}
	*why = "a server_name extension without a host_name";
	return SNIFF_BAD;
}

enum sniff_result sniff_tls_sni(const uint8_t *buf, size_t len, char *name, size_t namesz,
				const char **why)
{
	size_t rec, hs, off, end, n, ext_end;
	int found = 0;
	enum sniff_result r = SNIFF_BAD;

	*why = "";
	if (namesz)
		name[0] = '\0';
	if (len < 5)
		return len > 0 && buf[0] != 0x16 ? (*why = "not a TLS handshake", SNIFF_BAD)
						 : SNIFF_MORE;
	if (buf[0] != 0x16 || buf[1] != 3 || buf[2] > 4) {
		*why = "not a TLS handshake";
		return SNIFF_BAD;
	}
	rec = be16(buf + 3);
	if (rec < 4 || rec > 16384) {
		*why = "a TLS record of a length no ClientHello has";
		return SNIFF_BAD;
	}
	if (len < 5 + rec)
		return SNIFF_MORE;
	/* The handshake message: a ClientHello, whole in this first record. */
	if (buf[5] != 1) {
		*why = "the first handshake message is not a ClientHello";
		return SNIFF_BAD;
	}
	hs = (size_t)buf[6] << 16 | (size_t)buf[7] << 8 | buf[8];
	if (hs > rec - 4) {
		*why = "a ClientHello split across TLS records";
		return SNIFF_BAD;
	}
	off = 9;
	end = 9 + hs;
	/* version (2), random (32), session id, cipher suites, compression methods */
	if (end - off < 35)
		goto short_hello;
	off += 34;
	n = buf[off];
	if (n > 32 || end - off < 1 + n)
		goto short_hello;
	off += 1 + n;
	if (end - off < 2 || (n = be16(buf + off)) < 2 || n % 2 || end - off < 2 + n)
		goto short_hello;
	off += 2 + n;
	if (end - off < 1 || (n = buf[off]) < 1 || end - off < 1 + n)
		goto short_hello;
	off += 1 + n;
	if (off == end) {
		*why = "a ClientHello without extensions (no server name)";
		return SNIFF_BAD;
	}
	if (end - off < 2 || (n = be16(buf + off)) != end - off - 2)
		goto short_hello;
	off += 2;
	ext_end = off + n;
	/* Every extension is walked, so that a second server_name is seen and refused. */
	while (off < ext_end) {
		unsigned type;

		if (ext_end - off < 4)
			goto short_hello;
		type = be16(buf + off);
		n = be16(buf + off + 2);
		off += 4;
		if (n > ext_end - off)
			goto short_hello;
		if (type == 0) {
			if (found++) {
				*why = "two server_name extensions";
				name[0] = '\0';
				return SNIFF_BAD;
			}
			r = server_name(buf + off, n, name, namesz, why);
			if (r != SNIFF_FOUND)
				return r;
		}
		off += n;
	}
	if (!found)
		*why = "a ClientHello without a server name";
	return found ? SNIFF_FOUND : SNIFF_BAD;
short_hello:
	*why = "a malformed ClientHello";
	if (namesz)
		name[0] = '\0';
	return SNIFF_BAD;
}

static int tchar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* host[:port] at p[0..n) into name and *port. */
static enum sniff_result host_port(const uint8_t *p, size_t n, char *name, size_t namesz,
				   int *port, const char **why)
{
	const uint8_t *colon = memchr(p, ':', n);
	size_t hn = colon ? (size_t)(colon - p) : n;

	*port = 80;
	if (n && p[0] == '[') {
		*why = "the server name is not a DNS name (an address, or bytes a name cannot hold)";
		return SNIFF_BAD;
	}
	if (colon) {
		long v = 0;
		size_t digits = n - hn - 1;

		if (digits == 0 || digits > 5)
			goto bad_port;
		for (size_t i = hn + 1; i < n; i++) {
			if (p[i] < '0' || p[i] > '9')
				goto bad_port;
			v = v * 10 + (p[i] - '0');
		}
		if (v < 1 || v > 65535)
			goto bad_port;
		*port = (int)v;
	}
	return take_name(p, hn, name, namesz, why);
bad_port:
	*why = "a Host whose port is not a number from 1 to 65535";
	return SNIFF_BAD;
}

enum sniff_result sniff_http_host(const uint8_t *buf, size_t len, char *name, size_t namesz,
				  int *port, const char **why)
{
	const uint8_t *end = NULL, *p, *eol, *sp1, *sp2;
	const uint8_t *target_host = NULL;
	size_t target_len = 0;
	char other[SNIFF_NAME_MAX + 1];
	int hosts = 0, other_port = 0;

	*why = "";
	*port = 80;
	if (namesz)
		name[0] = '\0';
	for (size_t i = 0; i + 4 <= len && i + 4 <= SNIFF_HEAD_MAX; i++)
		if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
			end = buf + i + 2; /* past the last header line's CRLF */
			break;
		}
	if (!end) {
		if (len >= SNIFF_HEAD_MAX) {
			*why = "an HTTP request head longer than 8 KiB";
			return SNIFF_BAD;
		}
		for (size_t i = 0; i < len && buf[i] != ' '; i++)
			if (!tchar(buf[i])) {
				*why = "not an HTTP request";
				return SNIFF_BAD;
			}
		return SNIFF_MORE;
	}
	/* The request line: METHOD SP target SP HTTP/1.x */
	eol = memchr(buf, '\r', (size_t)(end - buf));
	if (!eol || eol[1] != '\n' || !(sp1 = memchr(buf, ' ', (size_t)(eol - buf))) ||
	    sp1 == buf || !(sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1))) ||
	    sp2 == sp1 + 1 || eol - sp2 != 9 ||
	    (memcmp(sp2 + 1, "HTTP/1.1", 8) && memcmp(sp2 + 1, "HTTP/1.0", 8))) {
		*why = "not an HTTP/1.x request line";
		return SNIFF_BAD;
	}
	for (p = buf; p < sp1; p++)
		if (!tchar(*p)) {
			*why = "not an HTTP/1.x request line";
			return SNIFF_BAD;
		}
	if (sp1 - buf == 7 && memcmp(buf, "CONNECT", 7) == 0) {
		*why = "CONNECT is not asked of this proxy";
		return SNIFF_BAD;
	}
	if ((size_t)(sp2 - sp1 - 1) > 7 && memcmp(sp1 + 1, "http://", 7) == 0) {
		const uint8_t *h = sp1 + 8, *slash = memchr(h, '/', (size_t)(sp2 - h));

		target_host = h;
		target_len = (size_t)((slash ? slash : sp2) - h);
		if (memchr(h, '@', target_len)) {
			*why = "a request target with user information";
			return SNIFF_BAD;
		}
	} else if (sp1[1] != '/' && !(sp2 - sp1 == 2 && sp1[1] == '*')) {
		*why = "a request target that is neither a path nor an http:// URL";
		return SNIFF_BAD;
	}
	/* The header lines: one Host, no folded line, every line ended by CRLF. */
	for (p = eol + 2; p < end; p = eol + 2) {
		const uint8_t *colon, *v, *ve;

		eol = memchr(p, '\r', (size_t)(end - p));
		if (!eol || eol[1] != '\n' || memchr(p, '\n', (size_t)(eol - p))) {
			*why = "a header line not ended by CRLF";
			goto bad;
		}
		if (*p == ' ' || *p == '\t') {
			*why = "a folded header line";
			goto bad;
		}
		colon = memchr(p, ':', (size_t)(eol - p));
		if (!colon || colon == p) {
			*why = "a header line without a name";
			goto bad;
		}
		for (const uint8_t *q = p; q < colon; q++)
			if (!tchar(*q)) {
				*why = "a header name with bytes a name cannot hold";
				goto bad;
			}
		if (colon - p != 4 || strncasecmp((const char *)p, "host", 4))
			continue;
		if (hosts++) {
			*why = "two Host headers";
			goto bad;
		}
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		for (ve = eol; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
			;
		if (host_port(v, (size_t)(ve - v), name, namesz, port, why) != SNIFF_FOUND)
			goto bad;
	}
	if (!hosts) {
		*why = "a request without a Host header";
		goto bad;
	}
	if (target_host) {
		const char *w2;

		if (host_port(target_host, target_len, other, sizeof(other), &other_port, &w2) !=
			    SNIFF_FOUND ||
		    strcmp(other, name) || other_port != *port) {
			*why = "a request target that names another host than its Host header";
			goto bad;
		}
	}
	return SNIFF_FOUND;
bad:
	if (namesz)
		name[0] = '\0';
	return SNIFF_BAD;
}

int sniff_allowed(const char *name, const char *const *allow, size_t n)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n; i++) {
		const char *a = allow[i];

		if (a[0] == '*' && a[1] == '.') {
			size_t sl = strlen(a + 1); /* ".example.org" */

			if (len > sl && strcmp(name + len - sl, a + 1) == 0)
				return 1;
		} else if (strcmp(name, a) == 0) {
			return 1;
		}
	}
	return 0;
}
