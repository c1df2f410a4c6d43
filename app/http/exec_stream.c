/* exec_stream.c: NDJSON lines of an exec while it runs. */
#include <stdlib.h>
#include <string.h>
#include "sandboxd/http/exec_stream.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

int exec_stream_wanted(struct req *r)
{
	const char *accept = http_param(r, "HTTP_ACCEPT");

	return accept && strstr(accept, "application/x-ndjson") != NULL;
}

/* The worker's way out: the request's FastCGI stream, flushed. */
static int http_line(void *arg, const char *line, size_t n)
{
	return http_write(arg, line, n) || http_flush(arg);
}

/* One line: obj as JSON, then "\n", flushed so that nginx passes it on at once. */
static int put_line(struct exec_stream *s, json_object *obj)
{
	size_t n = 0;
	const char *text = obj ? json_object_to_json_string_length(
					 obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n)
			       : NULL;
	char *line = text ? malloc(n + 1) : NULL;

	if (line) {
		memcpy(line, text, n);
		line[n] = '\n';
	}
	if (!s->broken && (!line || (s->write ? s->write(s->write_arg, line, n + 1)
					      : http_line(s->r, line, n + 1)))) {
		log_info("exec stream: the client went away");
		s->broken = 1;
	}
	free(line);
	json_object_put(obj);
	clock_gettime(CLOCK_MONOTONIC, &s->last);
	return s->broken ? ERR_FAIL : 0;
}

static int put_text(struct exec_stream *s, int stream, const struct buf *text)
{
	json_object *o;

	if (!text->len)
		return 0;
	o = json_object_new_object();
	json_object_object_add(o, stream == CAPTURE_STDOUT ? "stdout" : "stderr",
			       json_object_new_string_len(text->data, (int)text->len));
	return put_line(s, o);
}

int exec_stream_head(char *out, size_t size, const char *request_id)
{
	/* X-Accel-Buffering: nginx passes each line on instead of filling its buffers. */
	int n = snprintf(out, size,
			 "Status: 200 OK\r\nX-Request-Id: %s\r\nCache-Control: no-store\r\n"
			 "Content-Type: application/x-ndjson\r\nX-Accel-Buffering: no\r\n\r\n",
			 request_id);

	return n < 0 || (size_t)n >= size ? -1 : n;
}

int exec_stream_begin(struct exec_stream *s, struct req *r, struct capture *cap)
{
	char head[256];
	int n;

	memset(s, 0, sizeof(*s));
	s->r = r;
	s->cap = cap;
	r->status = 200;
	r->responded = 1;
	r->streamed = 1;
	n = exec_stream_head(head, sizeof(head), r->request_id);
	clock_gettime(CLOCK_MONOTONIC, &s->last);
	if (n < 0 || http_write(r, head, (size_t)n) ||
	    http_flush(r)) {
		s->broken = 1;
		return ERR_FAIL;
	}
	return 0;
}

int exec_stream_sink(void *arg, int stream, const char *data, size_t n)
{
	struct exec_stream *s = arg;
	struct buf text;
	struct err e;
	int rc = capture_feed(s->cap, stream, data, n);

	if (rc)
		return rc;
	buf_init(&text, capture_text_max(&s->cap->opts));
	rc = capture_take(s->cap, stream, &text, &e);
	if (!rc)
		rc = put_text(s, stream, &text);
	buf_release(&text);
	return rc;
}

int exec_stream_tick(void *arg)
{
	struct exec_stream *s = arg;
	struct timespec now;

	if (!s->broken && s->r && http_client_gone(s->r)) {
		log_info("exec stream: the client went away");
		s->broken = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!s->broken && now.tv_sec - s->last.tv_sec >= EXEC_STREAM_KEEPALIVE_S) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "keepalive", json_object_new_boolean(1));
		put_line(s, o);
	}
	return s->broken;
}

int exec_stream_end(struct exec_stream *s, json_object *result)
{
	static const int streams[] = { CAPTURE_STDOUT, CAPTURE_STDERR };
	uint64_t bytes[2] = { 0, 0 };
	int trunc[2] = { 0, 0 }, rc = 0;
	struct err e;

	for (int i = 0; i < 2; i++) {
		struct buf text;
		buf_init(&text, capture_text_max(&s->cap->opts));
		rc = capture_finish(s->cap, streams[i], &text, &bytes[i], &trunc[i], &e);
		if (!rc)
			put_text(s, streams[i], &text);
		buf_release(&text);
		if (rc)
			break;
	}
	if (rc) {
		json_object_put(result);
		exec_stream_fail(s, "internal error");
		return rc;
	}
	json_object_object_add(result, "truncated", json_object_new_boolean(trunc[0] || trunc[1]));
	json_object_object_add(result, "stdoutBytes", json_object_new_int64((int64_t)bytes[0]));
	json_object_object_add(result, "stderrBytes", json_object_new_int64((int64_t)bytes[1]));
	return put_line(s, result);
}

void exec_stream_fail(struct exec_stream *s, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "error", json_object_new_string(msg));
	put_line(s, o);
}
