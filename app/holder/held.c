/* held.c: one exec the holder keeps (held.h). Every answer is the one the worker gives for
 * the same run (api_exec.c): the same texts, the same shapes, built by the same functions
 * (exec_answer, exec_stream_*). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/common/agentwire.h"
#include "sandboxd/core/audit.h"
#include "sandboxd/proto/fcgirec.h"
#include "sandboxd/holder/held.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/proto/mcp.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/common/banned.h"

/* Past the command's limit: the agent's own grace (5 s) and what agent_exec allows it. */
#define DEADLINE_SLACK_MS 20000
#define OUT_MAX (HTTP_OUT_MAX + ((size_t)4 << 20))

void held_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* The streamed answer's way out: FastCGI records in the queue. */
static int queue_line(void *arg, const char *line, size_t n)
{
	struct held *x = arg;

	return x->fcgi < 0 || fcgirec_stdout(&x->out, x->ho.w.fcgi_id, line, n);
}

int held_open(struct held *x, struct handover *ho, const int fds[2], struct db *db,
	      struct err *e)
{
	struct secrets_set sec = { .n = ho->w.nsecrets };
	int rc;

	memset(x, 0, sizeof(*x));
	x->ho = *ho;
	memset(ho, 0, sizeof(*ho));
	x->db = db;
	x->fcgi = fds[0];
	x->agent = fds[1];
	x->tag[0] = (struct held_tag){ HELD_NGINX, -1, x, NULL };
	x->tag[1] = (struct held_tag){ HELD_AGENT, -1, x, NULL };
	held_nonblocking(x->fcgi);
	held_nonblocking(x->agent);
	buf_init(&x->out, OUT_MAX);
	x->status = 200;
	x->starting = x->ho.w.awaiting_start != 0;
	x->deadline_ms = x->ho.w.exec_started_ms + x->ho.w.timeout_ms + DEADLINE_SLACK_MS +
			 (x->starting ? x->ho.w.clone_wait_ms : 0);
	x->res.backend = "agent";
	for (size_t i = 0; i < sec.n; i++)
		sec.values[i] = x->ho.secrets[i];
	if (!(x->audit = json_object_new_object()))
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((rc = exec_capture_init(&x->cap, x->ho.w.token[0] ? x->ho.w.token : NULL, &sec, e)))
		return rc;
	x->xs = (struct exec_stream){ .write = queue_line, .write_arg = x, .cap = &x->cap };
	clock_gettime(CLOCK_MONOTONIC, &x->xs.last);
	return 0;
}

/* Closes *fd, out of the holder's epoll first: a close alone leaves the registration in
 * place while another process still has the connection open (the worker that handed it
 * over keeps its copy for a moment), and its next event would name a freed exec. */
static void close_fd(struct held *x, int *fd)
{
	if (*fd < 0)
		return;
	if (x->forget)
		x->forget(x->forget_arg, *fd);
	close(*fd);
	*fd = -1;
}

static void close_agent(struct held *x)
{
	/* The agent ends the command's tree when its connection closes. */
	close_fd(x, &x->agent);
	free(x->body);
	x->body = NULL;
}

static void queue_end(struct held *x)
{
	if (fcgirec_end(&x->out, x->ho.w.fcgi_id))
		log_error("held exec %lld: the answer's end does not fit", (long long)x->ho.w.held_id);
	x->answered = 1;
	close_agent(x);
}

/* An MCP call's answer (handover.h: mcp): the REST answer o with its status becomes the
 * sandbox_exec tool's result in a JSON-RPC response, as api_mcp.c builds it for a call its
 * worker answers; the HTTP status is then 200 (the row keeps the REST status). */
static json_object *mcp_answer(struct held *x, int status, json_object *o)
{
	json_object *id = json_tokener_parse(x->ho.w.rpc_id), *v = NULL, *res;
	const char *body = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL;
	const char *error = NULL;

	if (o && (json_object_object_get_ex(o, "message", &v) ||
		  json_object_object_get_ex(o, "error", &v)))
		error = json_object_get_string(v);
	res = mcp_tool_result(mcp_tool_find("sandbox_exec"), o ? status : 500, body,
			      body ? strlen(body) : 0, error ? error : "internal error");
	json_object_put(o);
	o = mcp_result(id, res);
	json_object_put(id);
	return o;
}

/* The start of a batch's answer (handover.h: batch): "[" and the others' answers. */
static int batch_open(struct held *x, struct buf *body)
{
	if (!x->ho.w.batch)
		return 0;
	return buf_puts(body, "[") || buf_puts(body, x->ho.batch) ||
	       (x->ho.batch[0] && buf_puts(body, ","));
}

/* A whole answer of one JSON object (attached). */
static void queue_json(struct held *x, int status, json_object *o)
{
	struct buf body;
	char head[512];
	int n, http_status;

	x->status = status;
	if (x->ho.w.mcp) {
		o = mcp_answer(x, status, o);
		status = 200;
	}
	http_status = status;
	buf_init(&body, HTTP_OUT_MAX);
	if (!o || batch_open(x, &body) || json_write(&body, o) ||
	    (x->ho.w.batch && buf_puts(&body, "]")) || buf_puts(&body, "\n")) {
		buf_clear(&body);
		x->status = http_status = 500;
		if (buf_puts(&body, "{\"error\":\"internal error\"}\n"))
			log_error("cannot write even the internal error answer");
	}
	json_object_put(o);
	n = http_head(head, sizeof(head) - 2, http_status, x->ho.w.request_id, NULL, body.len);
	if (n < 0 || fcgirec_stdout(&x->out, x->ho.w.fcgi_id, head, (size_t)n) ||
	    fcgirec_stdout(&x->out, x->ho.w.fcgi_id, "\r\n", 2) ||
	    (body.len && fcgirec_stdout(&x->out, x->ho.w.fcgi_id, body.data, body.len)))
		log_error("held exec %lld: the answer does not fit", (long long)x->ho.w.held_id);
	buf_release(&body);
	queue_end(x);
}

/* The line a stream ends with when the agent failed it (api_exec.c's, for the agent). */
#define BROKE_OFF_LINE "the exec failed: the sandbox's agent broke off the exec"

/* The answer for a run that did not end well: {key: msg} with status when attached; once
 * streaming (the head went out with 200), the last line {"error": line}. */
static void fail(struct held *x, int status, const char *key, const char *msg,
		 const char *line)
{
	json_add_str(x->audit, "error", msg);
	if (x->ho.w.streamed && !x->starting) {
		exec_stream_fail(&x->xs, line);
		queue_end(x);
		return;
	}
	json_object *o = json_object_new_object();
	json_add_str(o, key, msg);
	queue_json(x, status, o);
}

/* A close that raced the exec: 410 as the worker answers (api_exec.c ended_meanwhile). */
static int ended_meanwhile(struct held *x)
{
	struct err e;
	int code = 0, ended = 0;
	char msg[80];
	PGresult *res = db_ensure(x->db, &e) ? NULL
			: db_exec(x->db, &e, &code, "SELECT state FROM sandboxes WHERE id = $1", 1,
				  x->ho.w.sandbox_id);

	if (!res)
		return 0;
	if (PQntuples(res) == 1 && strcmp(db_val(res, 0, 0), "ready")) {
		snprintf(msg, sizeof(msg), "sandbox is %.32s", db_val(res, 0, 0));
		ended = 1;
	}
	PQclear(res);
	if (ended)
		fail(x, 410, "message", msg, msg);
	return ended;
}

static void broke_off(struct held *x, const char *why)
{
	char msg[600];

	/* A close that raced the command removed the container under it: the close is the
	 * answer (as the worker gives it), not the broken connection. */
	if (ended_meanwhile(x))
		return;
	snprintf(msg, sizeof(msg), "the sandbox's agent broke off the exec: agent: %.400s", why);
	log_warn("held exec %lld: %s", (long long)x->ho.w.held_id, msg);
	fail(x, 502, "error", msg, BROKE_OFF_LINE);
}

static void exited(struct held *x)
{
	struct ap_msg m;
	struct agent_exit ax = { 0 };
	struct err e;

	if (agentproto_decode(x->h.type, x->body, x->h.len, &m, &e)) {
		broke_off(x, "sent a bad exit frame");
		return;
	}
	agent_exit_take(&m, &ax);
	x->res.timed_out = ax.timed_out;
	x->res.exit_code = ax.timed_out ? 124 : ax.exit_code;
	x->res.duration_ms = agentwire_now_ms() - x->ho.w.exec_started_ms;
	x->ran = 1;
	exec_audit_result(x->audit, &x->res);
	if ((x->res.exit_code == 126 || x->res.exit_code == 137) && ended_meanwhile(x))
		return;
	if (x->ho.w.streamed) {
		if (exec_stream_end(&x->xs, exec_stream_result(&x->res)))
			log_info("held exec %lld: the client left before the result line",
				 (long long)x->ho.w.held_id);
		queue_end(x);
		return;
	}
	json_object *o = exec_answer(&x->res, &x->cap, &e);
	queue_json(x, o ? 200 : 500, o);
}

/* The sandbox's clone as the agent found it: the row says so at once, as a worker's wait
 * would have written it (sandbox_clone_wait). */
static void clone_ended(struct held *x, const char *state, const char *why)
{
	struct err e;

	if (db_ensure(x->db, &e) ||
	    db_run(x->db, &e, "UPDATE sandboxes SET clone_state = $2, clone_error = nullif($3, '')"
		   " WHERE id = $1 AND clone_state = 'pending'", 3, x->ho.w.sandbox_id, state, why))
		log_warn("held exec %lld: the clone's state: %s", (long long)x->ho.w.held_id, e.msg);
}

/* STARTED of an exec handed before it (it waited for the clone): the command runs from
 * now, and a stream's head goes out. */
static void started(struct held *x)
{
	char head[256];
	int n;

	x->starting = 0;
	x->ho.w.exec_started_ms = agentwire_now_ms();
	x->deadline_ms = x->ho.w.exec_started_ms + x->ho.w.timeout_ms + DEADLINE_SLACK_MS;
	clone_ended(x, "done", "");
	if (!x->ho.w.streamed)
		return;
	clock_gettime(CLOCK_MONOTONIC, &x->xs.last);
	if ((n = exec_stream_head(head, sizeof(head), x->ho.w.request_id)) < 0 ||
	    fcgirec_stdout(&x->out, x->ho.w.fcgi_id, head, (size_t)n))
		fail(x, 500, "error", "internal error", BROKE_OFF_LINE);
}

/* The agent's refusal before the start: the clone (409) or the working directory (400),
 * answered as the worker's own checks answer; anything else broke the exec off. */
static void refused(struct held *x, const struct ap_msg *m)
{
	int code = agentproto_err_code((int64_t)m->num[AP_F_CODE]);
	char msg[400];

	agentproto_clean_text(msg, sizeof(msg), m->str[AP_F_MSG]);
	if (code == ERR_EXISTS && !strncmp(msg, "clone failed: ", 14))
		clone_ended(x, "failed", msg + 14);
	if (code == ERR_EXISTS)
		fail(x, 409, "error", msg, msg);
	else if (code == ERR_NOTFOUND || code == ERR_NOTDIR)
		fail(x, 400, "error", msg, msg);
	else
		broke_off(x, msg);
}

/* One whole frame of the agent's. */
static void frame(struct held *x)
{
	int stream = x->h.type == AP_T_STDOUT ? CAPTURE_STDOUT : CAPTURE_STDERR;
	struct ap_msg m;
	struct err e;
	char clean[400];

	if (x->starting && x->h.type == AP_T_STARTED) {
		started(x);
	} else if (x->starting && x->h.type != AP_T_ERROR) {
		snprintf(clean, sizeof(clean), "sent frame type %u before STARTED", x->h.type);
		broke_off(x, clean);
	} else if (x->h.type == AP_T_STDOUT || x->h.type == AP_T_STDERR) {
		int rc = x->ho.w.streamed
			 ? exec_stream_sink(&x->xs, stream, (const char *)x->body, x->h.len)
			 : capture_feed(&x->cap, stream, (const char *)x->body, x->h.len);
		if (rc)
			fail(x, 500, "error", "internal error", BROKE_OFF_LINE);
	} else if (x->h.type == AP_T_EXIT) {
		exited(x);
	} else if (x->h.type == AP_T_ERROR) {
		if (agentproto_decode(x->h.type, x->body, x->h.len, &m, &e)) {
			broke_off(x, "sent a bad error frame");
			return;
		}
		if (x->starting) {
			refused(x, &m);
			return;
		}
		agentproto_clean_text(clean, sizeof(clean), m.str[AP_F_MSG]);
		broke_off(x, clean);
	} else {
		snprintf(clean, sizeof(clean), "sent frame type %u during an exec", x->h.type);
		broke_off(x, clean);
	}
}

/* Reads into p[*got..n): 1 when it is full, 0 for more to come, -1 with why set. */
static int fill(int fd, unsigned char *p, size_t n, size_t *got, const char **why)
{
	while (*got < n) {
		ssize_t r = recv(fd, p + *got, n - *got, MSG_DONTWAIT);

		if (r == 0) {
			*why = "the connection closed";
			return -1;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			*why = strerror(errno);
			return -1;
		}
		*got += (size_t)r;
	}
	return 1;
}

void held_agent_readable(struct held *x)
{
	const char *why = NULL;
	struct err e;
	int r;

	while (x->agent >= 0 && !x->answered && held_wants_agent(x)) {
		if (x->hdr_got < AP_HDR) {
			if ((r = fill(x->agent, x->hdr, AP_HDR, &x->hdr_got, &why)) <= 0)
				break;
			if (agentproto_hdr_parse(x->hdr, AP_DATA_MAX, &x->h, &e)) {
				broke_off(x, e.msg);
				return;
			}
			if (x->h.stream != AGENT_CLIENT_STREAM) {
				broke_off(x, "answered on another stream");
				return;
			}
			if (!(x->body = malloc(x->h.len + 1))) {
				fail(x, 500, "error", "internal error", BROKE_OFF_LINE);
				return;
			}
			x->body_got = 0;
		}
		if ((r = fill(x->agent, x->body, x->h.len, &x->body_got, &why)) <= 0)
			break;
		frame(x);
		free(x->body);
		x->body = NULL;
		x->hdr_got = 0;
	}
	if (why && !x->answered)
		broke_off(x, why);
}

void held_client_gone(struct held *x)
{
	if (x->answered && x->out_off == x->out.len)
		return;
	log_info("held exec %lld: the client went away; its process tree is being ended",
		 (long long)x->ho.w.held_id);
	close_agent(x);
	x->answered = 1;
	x->status = HTTP_CLIENT_CLOSED;
	json_add_str(x->audit, "error", "the client closed the connection");
	json_add_int(x->audit, "duration_ms", agentwire_now_ms() - x->ho.w.exec_started_ms);
	close_fd(x, &x->fcgi);
	buf_release(&x->out);
	x->out_off = 0;
}

int held_send_out(int fd, struct buf *out, size_t *off)
{
	while (*off < out->len) {
		ssize_t n = send(fd, out->data + *off, out->len - *off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		*off += (size_t)n;
	}
	buf_clear(out);
	*off = 0;
	return 1;
}

int held_write(struct held *x)
{
	int w = x->fcgi < 0 ? -1 : held_send_out(x->fcgi, &x->out, &x->out_off);

	if (w < 0) {
		if (x->fcgi >= 0)
			held_client_gone(x);
		return -1;
	}
	return w ? x->answered : 0;
}

void held_tick(struct held *x, long long now)
{
	if (x->answered)
		return;
	if (now >= x->deadline_ms) {
		broke_off(x, "no answer in time");
		return;
	}
	if (x->ho.w.streamed && !x->starting && exec_stream_tick(&x->xs))
		held_client_gone(x);
}

int held_wants_agent(const struct held *x)
{
	return x->out.len - x->out_off < HELD_OUT_HIGH;
}

/* The row, with one more try on a connection found dead (db_ensure reconnects). */
static int write_row(struct held *x, long long ms, struct err *e)
{
	for (int i = 0; i < 2; i++)
		if (!db_ensure(x->db, e) &&
		    !audit_held_finish(x->db, x->ho.w.held_id, x->status, ms, x->audit,
				       (int)x->ho.w.idle_timeout, e))
			return 0;
	return ERR_DB;
}

void held_audit(struct held *x)
{
	struct timespec now;
	long long ms;
	struct err e;

	if (x->audited)
		return;
	x->audited = 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 - x->ho.w.request_started_ms;
	if (x->ran)
		metrics_observe_exec((int64_t)x->res.duration_ms * 1000);
	if (!write_row(x, ms, &e))
		return;
	log_error("held exec %lld: its audit row: %s (the reaper ends it)",
		  (long long)x->ho.w.held_id, e.msg);
	/* As a worker does: a request whose row cannot be written does not succeed. A whole
	 * answer still unsent becomes the 503; a stream's lines are out already. */
	if (!x->ho.w.streamed && x->fcgi >= 0 && x->out_off == 0) {
		json_object *o = json_object_new_object();
		buf_clear(&x->out);
		json_add_str(o, "message", "database unavailable");
		queue_json(x, 503, o);
	}
}

void held_close(struct held *x)
{
	held_audit(x);
	close_agent(x);
	close_fd(x, &x->fcgi);
	capture_release(&x->cap);
	buf_release(&x->out);
	json_object_put(x->audit);
	handover_release(&x->ho);
}
