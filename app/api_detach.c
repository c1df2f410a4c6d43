/* api_detach.c: detached exec (SPEC.md §4). The command runs on in the container under the
 * same wrapper limits as an attached one; its output goes to files in the container
 * (8 MiB chunks written by split(1), the newest 8 kept: 64 MiB per stream, oldest dropped
 * first) and its exit code to a file when it ends. So any worker on any host can answer
 * GET …/execs/{execId}: it reads the state and the bytes asked for from the container,
 * and masks and decodes them as the attached exec does. The output lives as long as the
 * container: until the sandbox ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>
#include "sandboxd/api.h"
#include "sandboxd/capture.h"
#include "sandboxd/detach.h"
#include "sandboxd/docker.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/scripts.h"
#include "sandboxd/banned.h"

#define CHUNK ((uint64_t)8 << 20)  /* split -b: the bytes of one output file */
#define READ_MAX ((size_t)1 << 20) /* output per stream per GET */
#define EXEC_ID_LEN 27            /* "ex_" + 24 hex */
#define CALL_MS 30000L

static int valid_exec_id(const char *id)
{
	if (strlen(id) != EXEC_ID_LEN || strncmp(id, "ex_", 3))
		return 0;
	for (const char *p = id + 3; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

int api_exec_detach(struct req *r, const struct sandbox *s, const char *const *env,
		    const char *workdir, const char *cmd, long long timeout_ms)
{
	unsigned char rnd[12];
	char id[EXEC_ID_LEN + 1] = "ex_", exec_id[DOCKER_ID_MAX], tms[32];
	struct err e = { "" };
	int rc;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return err_set(&e, ERR_FAIL, "no randomness"), http_fail(r, ERR_FAIL, &e);
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(id + 3 + 2 * i, 3, "%02x", rnd[i]);
	snprintf(tms, sizeof(tms), "%lld", timeout_ms);
	const char *argv[] = { "bash", "-c", sh_detach, "sandboxd-detach", id, tms, cmd, NULL };
	struct docker_exec_opts o = { .cmd = argv, .env = env, .workdir = workdir };
	if ((rc = docker_exec_create(s->container_id, &o, exec_id, CALL_MS, &e)) ||
	    (rc = docker_exec_start_detached(exec_id, CALL_MS, &e))) {
		db_begin(r->db, &e);
		return http_fail(r, rc, &e);
	}
	json_add_str(r->audit_details, "exec_id", id);
	json_add_bool(r->audit_details, "detached", 1);
	if ((rc = db_begin(r->db, &e)) || (rc = sandbox_touch(r, s, &e)))
		return http_fail(r, rc, &e);
	json_object *o2 = json_object_new_object();
	json_add_str(o2, "execId", id);
	http_json(r, 202, o2);
	return 0;
}

int detach_query_offset(const char *query, const char *name, uint64_t *out)
{
	size_t n = strlen(name);

	*out = 0;
	for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		if (strncmp(p, name, n) || p[n] != '=')
			continue;
		const char *v = p + n + 1, *end = strchr(v, '&');
		size_t len = end ? (size_t)(end - v) : strlen(v);
		char buf[24];
		if (len == 0 || len >= sizeof(buf))
			return -1;
		memcpy(buf, v, len);
		buf[len] = 0;
		for (size_t i = 0; i < len; i++)
			if (buf[i] < '0' || buf[i] > '9')
				return -1;
		/* Past 2^63 no stream ever reaches: refused rather than wrapped. */
		if (len > 18)
			return -1;
		*out = strtoull(buf, NULL, 10);
		return 0;
	}
	return 0;
}

void detach_parse_state(char *text, struct detach_state *st)
{
	char *save = NULL;
	long long start = 0, now = 0, end = 0;

	memset(st, 0, sizeof(*st));
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, b, c;
		long long x, y;
		int i = strncmp(line, "out ", 4) == 0 ? 0 : strncmp(line, "err ", 4) == 0 ? 1 : -1;
		/* The container's files are the user's to change: numbers stay in bounds. */
		if (i >= 0 && sscanf(line + 4, "%llu %llu %llu", &a, &b, &c) == 3 && a <= b &&
		    b < 100000 && c <= CHUNK) {
			st->first[i] = a * CHUNK;
			st->total[i] = b * CHUNK + c;
		} else if (sscanf(line, "start %lld %lld", &x, &y) == 2) {
			start = x;
			now = y;
		} else if (sscanf(line, "rc %d %lld", &st->exit_code, &end) == 2) {
			st->ended = 1;
		}
	}
	long long d = (st->ended ? end : now) - start;
	st->duration_ms = d > 0 && d < (1LL << 40) ? d : 0;
}

/* Bytes fetched before the offset asked for, so that a secret that began before it is
 * masked from every offset (capture_masked_through). */
#define CONTEXT ((uint64_t)CAPTURE_SECRET_MAX)

struct out_stream {
	uint64_t first, total;     /* the bytes still kept: [first, total) */
	uint64_t want, from;       /* asked for; shown from */
	uint64_t ctx;              /* bytes fetched before from, for the mask's sake */
	size_t count;              /* fetched */
	struct buf data;
};

static int collect(void *arg, int stream, const char *p, size_t n)
{
	struct out_stream *o = arg;

	return buf_append(&o[stream == 1 ? 0 : 1].data, p, n);
}

/* The text of one stream from its fetched bytes; *next is the offset to ask for next. */
static int stream_text(const char *token, struct out_stream *o, int ended, struct buf *text,
		       uint64_t *next, struct err *e)
{
	struct capture_opts opts = { READ_MAX, 0, 1 };
	struct capture c;
	const char *p = o->data.data ? o->data.data : "";
	size_t len = o->data.len;
	uint64_t off = o->from;
	int rc = 0;

	capture_init(&c, &opts);
	if (token && (rc = capture_add_token(&c, token, strlen(token), e)))
		goto out;
	/* From a chosen offset: a secret that began before it is masked from it on, and bytes
	 * that may be the start of one still being written wait, as they do at the end. */
	if (o->ctx) {
		size_t at = o->ctx < len ? (size_t)o->ctx : len, end;
		int whole = ended && o->from - o->ctx + len == o->total;
		if (!whole && len - capture_pending(&c, p, len) < at) {
			*next = o->want;
			goto out;
		}
		end = capture_masked_through(&c, p, len, at);
		if (end > at && (rc = buf_puts(text, CAPTURE_MASK)))
			goto out;
		off += end - at;
		p += end;
		len -= end;
	}
	/* Where older output was dropped, a secret may have been cut: its end goes too. */
	if (o->want < o->from) {
		size_t k = capture_cut_fragment(&c, p, len);
		p += k;
		len -= k;
		off += k;
		if ((rc = capture_marker(text, off - o->want)))
			goto out;
	}
	if ((rc = capture_feed(&c, CAPTURE_STDOUT, p, len)))
		goto out;
	if (ended && off + len == o->total) {
		rc = capture_finish(&c, CAPTURE_STDOUT, text, NULL, NULL, e);
		*next = off + len;
	} else {
		rc = capture_take(&c, CAPTURE_STDOUT, text, e);
		*next = off + c.streams[0].sent;
	}
out:
	capture_release(&c);
	return rc;
}

int api_sandbox_exec_get(struct req *r)
{
	const char *id = http_path_param(r, 3);
	struct repo repo;
	struct sandbox s;
	struct sandbox_output g;
	struct out_stream o[2];
	struct err e = { "" };
	int rc, exit_code = 0, ended;

	if (api_sandbox_access(r, &repo, &s, 1))
		return 0;
	json_add_str(r->audit_details, "exec_id", id);
	if (!valid_exec_id(id)) {
		api_sandbox_error(r, 404, "no such exec: %.64s", id);
		return 0;
	}
	memset(o, 0, sizeof(o));
	if (detach_query_offset(r->query, "stdoutOffset", &o[0].want) ||
	    detach_query_offset(r->query, "stderrOffset", &o[1].want)) {
		api_sandbox_error(r, 400, "stdoutOffset and stderrOffset must be byte counts");
		return 0;
	}
	const char *state_argv[] = { "bash", "-c", sh_detach_state, "sandboxd-state", id, NULL };
	if ((rc = sandbox_run(s.container_id, state_argv, &g, &exit_code, &e)))
		return http_fail(r, rc, &e);
	if (exit_code == 3) {
		api_sandbox_error(r, 404, "no such exec: %s", id);
		return 0;
	}
	struct detach_state ds;
	detach_parse_state(g.out, &ds);
	for (int i = 0; i < 2; i++) {
		o[i].first = ds.first[i];
		o[i].total = ds.total[i];
		if (o[i].want > o[i].total) {
			api_sandbox_error(r, 400, "%s %llu is past the output (%llu bytes so far)",
					  i ? "stderrOffset" : "stdoutOffset",
					  (unsigned long long)o[i].want,
					  (unsigned long long)o[i].total);
			return 0;
		}
		o[i].from = o[i].want > o[i].first ? o[i].want : o[i].first;
		o[i].ctx = o[i].from - o[i].first < CONTEXT ? o[i].from - o[i].first : CONTEXT;
		o[i].count = o[i].total - o[i].from < READ_MAX ? (size_t)(o[i].total - o[i].from)
							       : READ_MAX;
		o[i].count += o[i].ctx;
		buf_init(&o[i].data, READ_MAX + CONTEXT);
	}
	/* The bytes asked for, both streams in one exec. */
	char args[6][24];
	for (int i = 0; i < 2; i++) {
		uint64_t start = o[i].from - o[i].ctx;
		snprintf(args[3 * i], 24, "%llu", (unsigned long long)(start / CHUNK));
		snprintf(args[3 * i + 1], 24, "%llu", (unsigned long long)(start % CHUNK));
		snprintf(args[3 * i + 2], 24, "%zu", o[i].count);
	}
	const char *read_argv[] = { "bash", "-c", sh_detach_read, "sandboxd-read", id, args[0],
				    args[1], args[2], args[3], args[4], args[5], NULL };
	struct docker_exec_opts xo = { .cmd = read_argv };
	struct docker_exec_io io = { .sink = collect, .sink_arg = o };
	struct docker_exec_state st = { 0, -1, 0 };
	char xid[DOCKER_ID_MAX];
	if (o[0].count + o[1].count > 0 &&
	    ((rc = docker_exec_create(s.container_id, &xo, xid, CALL_MS, &e)) ||
	     (rc = docker_exec_start(xid, &io, CALL_MS, &e)) ||
	     (rc = docker_exec_inspect(xid, &st, CALL_MS, &e)))) {
		buf_release(&o[0].data);
		buf_release(&o[1].data);
		return http_fail(r, rc, &e);
	}
	ended = ds.ended;
	/* A chunk pruned between the two looks: nothing this time, the next call jumps. */
	if (st.exit_code == 4) {
		buf_clear(&o[0].data);
		buf_clear(&o[1].data);
		o[0].from = o[0].want;
		o[1].from = o[1].want;
		o[0].ctx = o[1].ctx = 0;
		ended = 0;
	}
	const char *token = NULL;
	if (!rc && (rc = api_sandbox_token(r->db, &s, &token, &e))) {
		buf_release(&o[0].data);
		buf_release(&o[1].data);
		return http_fail(r, rc, &e);
	}
	struct buf text[2];
	uint64_t next[2] = { o[0].want, o[1].want };
	for (int i = 0; i < 2; i++) {
		buf_init(&text[i], capture_text_max(&(struct capture_opts){ READ_MAX, 0, 1 }) + 128);
		if (!rc)
			rc = stream_text(token, &o[i], ended, &text[i], &next[i], &e);
		buf_release(&o[i].data);
	}
	if (!rc && (rc = sandbox_touch(r, &s, &e)) == 0) {
		json_object *res = json_object_new_object();
		json_add_str(res, "state", ended ? "exited" : "running");
		if (ended) {
			json_add_int(res, "exitCode", ds.exit_code);
			json_add_bool(res, "timedOut", ds.exit_code == 124);
		}
		json_object_object_add(res, "stdout", json_object_new_string_len(
			text[0].data ? text[0].data : "", (int)text[0].len));
		json_object_object_add(res, "stderr", json_object_new_string_len(
			text[1].data ? text[1].data : "", (int)text[1].len));
		json_add_int(res, "stdoutOffset", (int64_t)next[0]);
		json_add_int(res, "stderrOffset", (int64_t)next[1]);
		json_add_int(res, "durationMs", ds.duration_ms);
		http_json(r, 200, res);
	}
	buf_release(&text[0]);
	buf_release(&text[1]);
	return rc ? http_fail(r, rc, &e) : 0;
}
