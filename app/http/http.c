/* http.c: reading a FastCGI request and writing its response. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcgiapp.h>
#include "sandboxd/http/fcgiin.h"
#include "sandboxd/http/http.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

const char *http_param(struct req *r, const char *name)
{
	return r->fcgx ? FCGX_GetParam(name, r->fcgx->envp) : NULL;
}

const char *const *http_params(struct req *r)
{
	return r->fcgx ? (const char *const *)r->fcgx->envp : NULL;
}

const char *http_path_param(struct req *r, int i)
{
	return i < r->match.nparams ? r->match.params[i] : "";
}

int http_read_body(struct req *r, size_t limit, struct err *e)
{
	const char *cl = http_param(r, "CONTENT_LENGTH");
	size_t cap = 4096, len = 0;
	char *body;
	int n;

	/* Refuse early when the declared length is already too big. */
	if (cl && *cl) {
		size_t want = 0;
		for (const char *p = cl; *p; p++) {
			if (*p < '0' || *p > '9' || want > (SIZE_MAX - 9) / 10)
				return err_set(e, ERR_INVALID, "bad Content-Length");
			want = want * 10 + (size_t)(*p - '0');
		}
		if (want > limit)
			return err_set(e, ERR_TOOBIG, "request body is larger than %zu bytes", limit);
		cap = want + 1; /* + 1: EOF is seen without another allocation */
	}
	if (cap > limit + 1)
		cap = limit + 1;
	if (!(body = pool_alloc(r->pool, cap + 1)))
		return err_set(e, ERR_NOMEM, "out of memory reading the body");
	/* Read to EOF: a chunked body has no length. */
	for (;;) {
		if (len == cap) {
			size_t ncap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
			if (ncap <= len)
				return err_set(e, ERR_TOOBIG, "request body is larger than %zu bytes",
					       limit);
			char *nb = pool_alloc(r->pool, ncap + 1);
			if (!nb)
				return err_set(e, ERR_NOMEM, "out of memory reading the body");
			memcpy(nb, body, len);
			body = nb;
			cap = ncap;
		}
		n = FCGX_GetStr(body + len, (int)(cap - len > 65536 ? 65536 : cap - len), r->fcgx->in);
		if (n < 0)
			return err_set(e, ERR_FAIL, "error reading the request body");
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > limit)
			return err_set(e, ERR_TOOBIG, "request body is larger than %zu bytes", limit);
	}
	body[len] = 0;
	r->body = body;
	r->body_len = len;
	return 0;
}

void http_header(struct req *r, const char *name, const char *value)
{
	/* Values are ours; a CR or LF would split the header block. */
	if (strpbrk(value, "\r\n"))
		return;
	if (buf_printf(&r->headers, "%s: %s\r\n", name, value))
		log_error("response header %s dropped: the header block is full", name);
}

void http_json(struct req *r, int status, json_object *obj)
{
	buf_clear(&r->out);
	r->status = status;
	r->responded = 1;
	r->content_type = NULL;
	/* json_write, not json-c's printer: an exec's output or a file is megabytes of string. */
	if (json_write(&r->out, obj) || buf_puts(&r->out, "\n")) {
		/* Cleared, the buffer holds the short text whatever its bound. */
		buf_clear(&r->out);
		r->status = 500;
		if (buf_puts(&r->out, "{\"message\":\"internal error\"}\n"))
			log_error("cannot write even the internal error answer");
	}
	json_object_put(obj);
}

void http_verror(struct req *r, int status, const char *key, const char *fmt, va_list ap)
{
	char msg[1024];
	json_object *o = json_object_new_object();

	vsnprintf(msg, sizeof(msg), fmt, ap);
	json_object_object_add(o, key, json_object_new_string(msg));
	http_json(r, status, o);
	r->error = pool_strdup(r->pool, msg);
}

void http_answer_error(struct req *r, int status, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	http_verror(r, status, key, fmt, ap);
	va_end(ap);
}

void http_error(struct req *r, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	http_verror(r, status, "message", fmt, ap);
	va_end(ap);
}

void http_body(struct req *r, int status, const char *content_type)
{
	r->status = status;
	r->responded = 1;
	r->content_type = content_type;
}

void http_empty(struct req *r, int status)
{
	buf_clear(&r->out);
	r->status = status;
	r->responded = 1;
}

void http_fail(struct req *r, int code, const struct err *e)
{
	int status = e && e->status ? e->status : err_status(code);
	const char *key = e && e->key ? e->key : "message";

	/* The engine's and the database's words are for the log; the client gets the kind. */
	if (!(e && e->status) && (code == ERR_DB || code == ERR_DOCKER)) {
		log_warn("%s", e ? e->msg : "unavailable");
		http_error(r, 503, code == ERR_DB ? "database unavailable" : "docker unavailable");
		return;
	}
	if (status == 500) {
		log_error("internal error: %s", e ? e->msg : "unknown");
		http_error(r, 500, "internal error");
		return;
	}
	if (status == 401)
		http_header(r, "WWW-Authenticate",
			    r->git || r->basic_realm ? "Basic realm=\"sandboxd\""
						 : "Bearer realm=\"sandboxd\"");
	http_answer_error(r, status, key, "%s", e ? e->msg : "");
}

void http_unauthorized(struct req *r, const char *message)
{
	http_header(r, "WWW-Authenticate",
		    r->git || r->basic_realm ? "Basic realm=\"sandboxd\""
						 : "Bearer realm=\"sandboxd\"");
	http_error(r, 401, "%s", message);
}

int http_on_abort(struct req *r, void (*fn)(void *), void *arg)
{
	struct req_cleanup *c = pool_alloc(r->pool, sizeof(*c));

	if (!c)
		return ERR_NOMEM;
	c->fn = fn;
	c->arg = arg;
	c->next = r->on_abort;
	r->on_abort = c;
	return 0;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 413: return "Payload Too Large";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case HTTP_CLIENT_CLOSED: return "Client Closed Request";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 507: return "Insufficient Storage";
	default: return "Unknown";
	}
}

int http_head(char *out, size_t size, int status, const char *request_id,
	      const char *content_type, size_t len)
{
	int n = snprintf(out, size,
			 "Status: %d %s\r\nX-Request-Id: %s\r\nCache-Control: no-store\r\n",
			 status, reason(status), request_id);

	if (status != 204 && n > 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n,
			      "Content-Type: %s\r\nContent-Length: %zu\r\n",
			      content_type ? content_type : "application/json", len);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

void http_release(struct req *r)
{
	struct FCGX_Request *q = r->fcgx;
	int fd = q->ipcFd;

	/* Nothing written, nothing shut down: libfcgi frees the request's streams and
	 * parameters, and only our copy of the connection closes (the holder has its own). */
	FCGX_Free(q, 0);
	if (fd >= 0)
		close(fd);
	q->ipcFd = -1;
	r->fcgx = NULL;
}

int http_fcgi_fd(struct req *r)
{
	return r->fcgx ? r->fcgx->ipcFd : -1;
}

unsigned http_fcgi_id(struct req *r)
{
	return r->fcgx ? (unsigned)r->fcgx->requestId : 0;
}

int http_send(struct req *r)
{
	FCGX_Stream *out = r->fcgx->out;
	char head[256];
	int n, rc;

	/* snprintf, not FCGX_FPrintF: libfcgi's own printf knows no %zu. */
	n = http_head(head, sizeof(head), r->status, r->request_id, r->content_type, r->out.len);
	if (n < 0)
		return ERR_FAIL;
	rc = FCGX_PutStr(head, n, out);
	if (rc >= 0 && r->headers.len)
		rc = FCGX_PutStr(r->headers.data, (int)r->headers.len, out);
	if (rc >= 0)
		rc = FCGX_PutStr("\r\n", 2, out);
	if (rc >= 0 && r->status != 204 && r->out.len)
		rc = FCGX_PutStr(r->out.data, (int)r->out.len, out);
	if (rc >= 0)
		rc = FCGX_FFlush(out);
	if (rc < 0) {
		log_info("client went away before the response was written");
		return ERR_FAIL;
	}
	return 0;
}

int http_client_gone(struct req *r)
{
	struct pollfd p;
	char c;
	ssize_t n;

	if (!r->fcgx || r->fcgx->ipcFd < 0)
		return 0;
	p.fd = r->fcgx->ipcFd;
	p.events = POLLIN;
	p.revents = 0;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
		return 1;
	/* Readable: nginx sends nothing after the request's body (it never multiplexes nor
	 * aborts by record), so this is the end of the connection, unless the handler left
	 * some of the body unread, which stays in the socket and is no sign of a departure. */
	n = recv(p.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

int http_write(struct req *r, const void *data, size_t n)
{
	/* FCGX_PutStr takes an int: big writes go in pieces. */
	for (const char *p = data; n > 0;) {
		int part = n > (1u << 30) ? 1 << 30 : (int)n;
		if (FCGX_PutStr(p, part, r->fcgx->out) != part)
			return ERR_FAIL;
		p += part;
		n -= (size_t)part;
	}
	return 0;
}

int http_flush(struct req *r)
{
	return FCGX_FFlush(r->fcgx->out) < 0 ? ERR_FAIL : 0;
}

long http_read(struct req *r, void *buf, size_t n)
{
	return FCGX_GetStr(buf, n > (1u << 30) ? 1 << 30 : (int)n, r->fcgx->in);
}

/* Up to n bytes of what libfcgi has handed out of the body (its window), without reading. */
static long take_window(FCGX_Stream *in, void *buf, size_t n)
{
	size_t avail = (size_t)(in->stop - in->rdNext);

	if (avail > n)
		avail = n;
	if (avail > (1u << 30))
		avail = 1u << 30;
	return avail ? FCGX_GetStr(buf, (int)avail, in) : 0;
}

/* One step of libfcgi's reading (its buffer, else one read of the connection), then the
 * rest of its window: > 0 bytes, 0 at the end, HTTP_READ_GONE. */
static long step(FCGX_Stream *in, char *buf, size_t n)
{
	if (FCGX_GetStr(buf, 1, in) != 1)
		return FCGX_GetError(in) ? HTTP_READ_GONE : 0;
	return 1 + take_window(in, buf + 1, n - 1);
}

long http_read_nowait(struct req *r, void *buf, size_t n)
{
	FCGX_Stream *in = r->fcgx->in;

	if (n == 0)
		return 0;
	if (in->stop > in->rdNext)
		return take_window(in, buf, n);
	if (in->isClosed)
		return FCGX_GetError(in) ? HTTP_READ_GONE : 0;
	/* Records read with the last ones (the end of the body among them) are in libfcgi's
	 * buffer, not in the connection: a poll would wait for them for ever. */
	if (fcgiin_held(r->fcgx) == 0)
		return HTTP_READ_WAIT;
	return step(in, buf, n);
}

/* 1 when the connection has bytes to read right now. */
static int readable_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

long http_read_ready(struct req *r, void *buf, size_t n)
{
	FCGX_Stream *in = r->fcgx->in;
	char *p = buf;
	size_t got = 0;
	long k;

	/* libfcgi reads the connection once (8 KiB at most) per step, and waits only within a
	 * record nginx has begun to write; more steps while the connection has more. */
	for (int first = 1; got < n; first = 0) {
		k = http_read_nowait(r, p + got, n - got);
		if (k == HTTP_READ_WAIT) {
			if (!first && !readable_now(r->fcgx->ipcFd))
				break;
			k = step(in, p + got, n - got);
		}
		if (k <= 0)
			return got ? (long)got : k;
		got += (size_t)k;
	}
	return (long)got;
}

int http_read_body_arrived(struct req *r, size_t limit, struct err *e)
{
	char *body = pool_alloc(r->pool, limit + 1);
	size_t len = 0;
	long k = 0;

	if (!body)
		return err_set(e, ERR_NOMEM, "out of memory reading the body");
	/* One more byte than the limit: a body that has it is too long. */
	while (len <= limit) {
		k = http_read_nowait(r, body + len, limit + 1 - len);
		if (k == HTTP_READ_WAIT)
			k = readable_now(r->fcgx->ipcFd) ? http_read_ready(r, body + len, limit + 1 - len)
							 : HTTP_READ_WAIT;
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	if (len > limit)
		return err_set(e, ERR_TOOBIG, "request body is larger than %zu bytes", limit);
	if (k != 0)
		return err_set(e, ERR_FAIL, k == HTTP_READ_WAIT ? "the request body is still arriving"
				   : "the connection failed while reading the request body");
	body[len] = 0;
	r->body = body;
	r->body_len = len;
	return 0;
}
