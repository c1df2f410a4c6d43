/* exec_stream.h: an exec answered as NDJSON while it runs (SPEC.md §4 "Streaming exec"):
 * 200 at once, then {"stdout": "…"} and {"stderr": "…"} lines as output arrives (masked and
 * capped exactly as the attached result: see capture_take), {"keepalive": true} after every
 * 15 s of silence, and last the result without stdout and stderr. A line that cannot be
 * written means the client is gone: the exec is cancelled. */
#ifndef SANDBOXD_EXEC_STREAM_H
#define SANDBOXD_EXEC_STREAM_H
#include <time.h>
#include <json-c/json.h>
#include "sandboxd/proto/capture.h"
#include "sandboxd/http/http.h"

#define EXEC_STREAM_KEEPALIVE_S 15

/* Writes one whole line (its "\n" included) and passes it on at once; non-zero when the
 * client is gone. */
typedef int (*exec_stream_write_fn)(void *arg, const char *line, size_t n);

struct exec_stream {
	struct req *r;         /* the worker's request (NULL: write below is the only way out) */
	exec_stream_write_fn write;  /* NULL: http_write and http_flush on r */
	void *write_arg;
	struct capture *cap;
	struct timespec last;  /* the last line written */
	int broken;            /* a write failed: the client is gone */
};

/* 1 when the request asks for NDJSON (Accept: application/x-ndjson). */
int exec_stream_wanted(struct req *r) __attribute__((warn_unused_result));
/* Sends the status line and headers; the request is streamed from here on. */
/* The stream's head (status 200, NDJSON, no buffering in nginx) into out[size]: its
 * length, -1 when it does not fit. exec_stream_begin writes it; the holder too. */
int exec_stream_head(char *out, size_t size, const char *request_id)
	__attribute__((warn_unused_result));
int exec_stream_begin(struct exec_stream *s, struct req *r, struct capture *cap)
	__attribute__((warn_unused_result));
/* A dstream_fn: feeds the capture and writes what is safe to show. Non-zero stops the exec. */
int exec_stream_sink(void *arg, int stream, const char *data, size_t n)
	__attribute__((warn_unused_result));
/* A box_exec cancel hook: writes the keep-alive line when due; 1 when the client is
 * gone (asked of r when there is one). */
int exec_stream_tick(void *arg) __attribute__((warn_unused_result));
/* Writes the rest of each stream, then result (taken) as the last line. */
int exec_stream_end(struct exec_stream *s, json_object *result) __attribute__((warn_unused_result));
/* The last line when the exec could not finish: {"error": msg}. */
void exec_stream_fail(struct exec_stream *s, const char *msg);

#endif
