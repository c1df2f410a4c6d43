/* exec.c: sbx exec [--cwd DIR] [--timeout MS] ID -- WORD…, streamed (POST …/exec with
 * Accept: application/x-ndjson): each {"stdout"} / {"stderr"} line is written to our own
 * stdout / stderr as it comes, {"keepalive"} is skipped, and the last line, the result,
 * gives our exit code (the command's). A {"error"} line (a failure after the command
 * started) is printed and exits 1. With --json every line is printed as it came instead. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

/* A line carries at most the 512 KiB a stream shows live, JSON-escaped (6 bytes a byte at
 * worst): anything longer is not the server. */
#define LINE_MAX_BYTES (8u << 20)

struct run {
	CURL *c;
	long status;        /* 0 until the first byte: then the answer's */
	struct buf refusal; /* a non-200 answer, a JSON error */
	struct ndjson nd;
	int json;
	int have_result, code;
	char error[1024];
};

static void put(FILE *f, struct json_object *v)
{
	fwrite(json_object_get_string(v), 1, (size_t)json_object_get_string_len(v), f);
	fflush(f);
}

/* One line of the stream: 0 to go on, 1 at the result or an error line. */
static int on_line(void *ctx, const char *line, size_t n)
{
	struct run *r = ctx;
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o, *v;
	int done = 0;

	if (!tok)
		return -1;
	o = json_tokener_parse_ex(tok, line, (int)n);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(o, json_type_object)) {
		snprintf(r->error, sizeof(r->error), "the stream sent a line that is not a JSON object");
		json_object_put(o);
		json_tokener_free(tok);
		return -1;
	}
	json_tokener_free(tok);
	if (r->json) {
		fwrite(line, 1, n, stdout);
		putchar('\n');
		fflush(stdout);
	}
	/* Output first: the result line carries none, but an attached answer (a server that
	 * does not stream) is one object with both. */
	if (!r->json && json_object_object_get_ex(o, "stdout", &v) &&
	    json_object_is_type(v, json_type_string))
		put(stdout, v);
	if (!r->json && json_object_object_get_ex(o, "stderr", &v) &&
	    json_object_is_type(v, json_type_string))
		put(stderr, v);
	if (json_object_object_get_ex(o, "exitCode", &v)) {
		r->have_result = 1;
		r->code = json_object_get_int(v);
		done = 1;
	} else if (json_object_object_get_ex(o, "error", &v)) {
		snprintf(r->error, sizeof(r->error), "%s", json_object_get_string(v));
		done = 1;
	}
	json_object_put(o);
	return done;
}

static size_t on_bytes(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct run *r = ctx;
	size_t n = size * nmemb, take;

	if (http_refusal(r->c, &r->status, &r->refusal, p, n, &take))
		return take;
	if (ndjson_feed(&r->nd, p, n) < 0)
		return 0;
	return n;  /* after the result, the rest (nothing) is read and dropped */
}

static int parse_args(int argc, char **argv, const char **id, struct json_object *body,
		      int *first_word)
{
	int i = 1;

	for (; i < argc && !*id; i++) {
		const char *a = argv[i];
		char *end;

		if (!strcmp(a, "--cwd") && i + 1 < argc) {
			json_object_object_add(body, "cwd", json_object_new_string(argv[++i]));
		} else if (!strcmp(a, "--timeout") && i + 1 < argc) {
			long long ms = strtoll(argv[++i], &end, 10);

			if (*end || end == argv[i] || ms < 1)
				return usage("exec: --timeout takes milliseconds (a positive number)");
			json_object_object_add(body, "timeoutMs", json_object_new_int64(ms));
		} else if (a[0] == '-' && a[1]) {
			return usage("exec takes [--cwd DIR] [--timeout MS] ID -- COMMAND…");
		} else {
			*id = a;
		}
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (!*id || i >= argc)
		return usage("exec takes [--cwd DIR] [--timeout MS] ID -- COMMAND…");
	*first_word = i;
	return SBX_OK;
}

int cmd_exec(struct sbx *s, int argc, char **argv)
{
	struct json_object *body = json_object_new_object();
	struct curl_slist *h = NULL;
	struct buf cmd = { 0 };
	struct run r = { 0 };
	const char *id = NULL, *json_body;
	char path[2048], url[4096];
	int first = 0, rc;
	CURLcode cc;

	if ((rc = parse_args(argc, argv, &id, body, &first)))
		goto out;
	/* One word is a command line as typed ('make && make test'); several are words. */
	if (argc - first == 1 ? buf_add(&cmd, argv[first], strlen(argv[first]))
			      : shell_join(argc - first, argv + first, &cmd)) {
		rc = say(SBX_FAIL, "out of memory");
		goto out;
	}
	json_object_object_add(body, "cmd", json_object_new_string(cmd.p));
	if ((rc = sandbox_path(s, id, path, sizeof(path) - 8)))
		goto out;
	snprintf(url, sizeof(url), "%s%s/exec", s->url, path);
	r.c = http_handle(s, url, &h, "Content-Type: application/json");
	if (!r.c) {
		rc = say(SBX_FAIL, "libcurl could not start");
		goto out;
	}
	h = curl_slist_append(h, "Accept: application/x-ndjson");
	curl_easy_setopt(r.c, CURLOPT_HTTPHEADER, h);
	json_body = json_object_to_json_string(body);
	curl_easy_setopt(r.c, CURLOPT_POSTFIELDS, json_body);
	curl_easy_setopt(r.c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(json_body));
	curl_easy_setopt(r.c, CURLOPT_WRITEFUNCTION, on_bytes);
	curl_easy_setopt(r.c, CURLOPT_WRITEDATA, &r);
	r.json = s->json;
	ndjson_init(&r.nd, LINE_MAX_BYTES, on_line, &r);
	cc = curl_easy_perform(r.c);
	if (!r.status)
		curl_easy_getinfo(r.c, CURLINFO_RESPONSE_CODE, &r.status);
	if (r.status == 200 && !r.nd.stopped)
		(void)ndjson_end(&r.nd);
	if (r.status && r.status != 200) {
		struct reply rep = { .status = r.status, .body = r.refusal };

		rc = http_fail(&rep);
	} else if (r.have_result) {
		rc = r.code & 0xff;
	} else if (r.error[0]) {
		rc = say(SBX_FAIL, "%s", r.error);
	} else if (r.nd.stopped < 0) {
		rc = say(SBX_FAIL, "the stream sent a line longer than %u bytes", LINE_MAX_BYTES);
	} else if (cc != CURLE_OK) {
		rc = say(SBX_FAIL, "%s: %s", s->url, curl_easy_strerror(cc));
	} else {
		rc = say(SBX_FAIL, "the stream ended before the command's result");
	}
	curl_easy_cleanup(r.c);
out:
	curl_slist_free_all(h);
	ndjson_free(&r.nd);
	buf_free(&r.refusal);
	buf_free(&cmd);
	json_object_put(body);
	return rc;
}
