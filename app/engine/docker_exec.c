/* docker_exec.c: a container's standard input (the attach, on a connection of its own)
 * and execs: create, start with the output demultiplexed to a sink, start detached,
 * inspect. */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "sandboxd/lib/clock.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/engine/docker_int.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/common/banned.h"

/* ---- a container's standard input ---- */

/* Until h's socket is ready for events, or the deadline: 0, else -1. */
static int sock_wait(CURL *h, short events, int64_t deadline)
{
	curl_socket_t fd = CURL_SOCKET_BAD;
	int64_t left;

	if (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD)
		return -1;
	while ((left = deadline - clock_ms()) > 0) {
		struct pollfd p = { .fd = fd, .events = events };
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
	return -1;
}

static int stdin_send(CURL *h, const char *p, size_t n, int64_t deadline, struct err *e)
{
	while (n) {
		size_t sent = 0;
		CURLcode cc = curl_easy_send(h, p, n, &sent);

		if (cc == CURLE_AGAIN) {
			if (sock_wait(h, POLLOUT, deadline))
				return err_set(e, ERR_DOCKER, "docker attach stdin: not sent in time");
			continue;
		}
		if (cc != CURLE_OK)
			return err_set(e, ERR_DOCKER, "docker attach stdin: %s", curl_easy_strerror(cc));
		p += sent;
		n -= sent;
	}
	return 0;
}

/* The engine's answer to the attach, up to its blank line: 101 (upgraded) or 200 (the raw
 * stream without the upgrade) is the connection taken over; anything else is its refusal. */
static int stdin_answer(CURL *h, int64_t deadline, struct err *e)
{
	char head[2048];
	size_t len = 0;

	while (!memmem(head, len, "\r\n\r\n", 4)) {
		size_t got = 0;
		CURLcode cc;

		if (len == sizeof(head))
			return err_set(e, ERR_FAIL, "docker attach stdin: an answer header over %zu bytes",
				       sizeof(head));
		cc = curl_easy_recv(h, head + len, sizeof(head) - len, &got);
		if (cc == CURLE_AGAIN) {
			if (sock_wait(h, POLLIN, deadline))
				return err_set(e, ERR_DOCKER, "docker attach stdin: no answer in time");
			continue;
		}
		if (cc != CURLE_OK || got == 0)
			return err_set(e, ERR_DOCKER, "docker attach stdin: %s",
				       cc != CURLE_OK ? curl_easy_strerror(cc) : "the engine closed");
		len += got;
	}
	if (len < 12 || memcmp(head, "HTTP/1.", 7) ||
	    (memcmp(head + 8, " 101", 4) && memcmp(head + 8, " 200", 4))) {
		size_t line = strcspn(head, "\r\n");
		return err_set(e, ERR_FAIL, "docker attach stdin: answered %.*s",
			       (int)(line < 64 ? line : 64), head);
	}
	return 0;
}

int docker_stdin_put(const char *id, const void *data, size_t len, long timeout_ms,
		     struct err *e)
{
	static const char op[] = "attach stdin";
	struct target t = dk_configured();
	char path[DK_OBJECT_PATH_MAX], curlerr[CURL_ERROR_SIZE] = "";
	struct buf url, req;
	struct timespec t0;
	CURL *h;
	int rc;

	if ((rc = dk_call_refused(e)))
		return rc;
	if ((rc = dk_object_path(path, DK_CONTAINER, id, "/attach?stream=1&stdin=1", e)))
		return rc;
	/* A handle of its own: CONNECT_ONLY leaves the connection to us, and the process's
	 * handle keeps its connection for the calls around this one. */
	if (!(h = curl_easy_init()))
		return err_set(e, ERR_FAIL, "docker %s: curl_easy_init failed", op);
	buf_init(&url, 4096);
	buf_init(&req, 1024);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int64_t deadline = clock_ms() + (timeout_ms > 0 ? timeout_ms : DOCKER_TIMEOUT_MS);
	if ((rc = dk_target_on(h, op, &t, path, &url, e)))
		goto out;
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curlerr);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
	CURLcode cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		rc = err_set(e, ERR_DOCKER, "docker %s: %s", op,
			     curlerr[0] ? curlerr : curl_easy_strerror(cc));
		goto out;
	}
	/* The upgrade, as the docker CLI asks for it: the answer is 101 and the connection is
	 * the container's input from then on. No body: the engine would take its bytes for
	 * the request's. */
	if (buf_printf(&req, "POST %s%s HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\n"
			     "Upgrade: tcp\r\nContent-Length: 0\r\n\r\n", DOCKER_API, path)) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (!(rc = stdin_send(h, req.data, req.len, deadline, e)) &&
	    !(rc = stdin_answer(h, deadline, e)))
		rc = stdin_send(h, data, len, deadline, e);
out:
	/* Closed: the engine has the bytes, and gives them to the process when it runs (its
	 * input then closes: StdinOnce). */
	curl_easy_cleanup(h);
	metrics_observe_docker(metrics_docker_op(op), clock_us_since(&t0));
	buf_release(&url);
	buf_release(&req);
	return rc;
}

/* ---- exec ---- */

int docker_exec_create(const char *container, const struct docker_exec_opts *o,
		       char *id_out, long timeout_ms, struct err *e)
{
	char path[DK_OBJECT_PATH_MAX];
	json_object *body = NULL;
	int rc;

	id_out[0] = 0;
	if ((rc = dk_object_path(path, DK_CONTAINER, container, "/exec", e)))
		return rc;
	if (!o->cmd || !o->cmd[0])
		return err_set(e, ERR_INVALID, "docker create exec: a command is required");
	if ((rc = dk_env_valid("env", o->env, 1, e)))
		return rc;
	if (!(body = json_object_new_object()) ||
	    dk_add_strings(body, "Cmd", o->cmd) || dk_add_strings(body, "Env", o->env)) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	json_add_bool(body, "AttachStdin", o->attach_stdin != 0);
	json_add_bool(body, "AttachStdout", 1);
	json_add_bool(body, "AttachStderr", 1);
	json_add_bool(body, "Tty", 0);
	json_add_bool(body, "Privileged", 0);
	/* No User: the container's own, the one its create chose (docker_create.user). */
	if (o->user)
		json_add_str(body, "User", o->user);
	if (o->workdir)
		json_add_str(body, "WorkingDir", o->workdir);
	rc = dk_post_for_id("exec", path, body, id_out, timeout_ms, e);
out:
	json_object_put(body);
	return rc;
}

struct exec_sink {
	struct dstream ds;
	struct docker_exec_io *io;
	int sink_stopped;
};

static int exec_out(void *arg, int stream, const char *data, size_t len)
{
	struct exec_sink *s = arg;
	int rc = s->io->sink(s->io->sink_arg, stream, data, len);

	if (rc)
		s->sink_stopped = 1;
	return rc;
}

static int sink_exec(struct call *c, const char *p, size_t n)
{
	struct exec_sink *s = c->sink_arg;
	struct err why;
	int rc = dstream_feed(&s->ds, p, n, &why);

	if (rc && s->sink_stopped)
		err_set(c->e, rc, "docker %s: stopped by the output sink", c->op);
	else if (rc)
		err_set(c->e, rc, "docker %s: %s", c->op, why.msg);
	return rc;
}

int docker_exec_start(const char *exec_id, struct docker_exec_io *io, long timeout_ms,
		      struct err *e)
{
	static const char body[] = "{\"Detach\":false,\"Tty\":false}";
	char path[DK_OBJECT_PATH_MAX];
	struct exec_sink s;
	struct call c;
	int rc;

	io->timed_out = io->cancelled = 0;
	memset(io->bytes, 0, sizeof(io->bytes));
	if ((rc = dk_object_path(path, DK_EXEC, exec_id, "/start", e)))
		return rc;
	if (!io->sink)
		return err_set(e, ERR_INVALID, "docker start exec: an output sink is required");
	memset(&s, 0, sizeof(s));
	s.io = io;
	dstream_init(&s.ds, io->max_frame, exec_out, &s);
	dk_call_init(&c, "start exec", "POST", path, timeout_ms, e);
	dk_call_body(&c, body);
	c.sink = sink_exec;
	c.sink_arg = &s;
	c.cancel = io->cancel;
	c.cancel_arg = io->cancel_arg;
	rc = dk_perform(&c);
	if (rc == 0 && c.status != 200)
		rc = err_set(e, ERR_FAIL, "docker start exec: answered %ld, not a stream", c.status);
	if (rc == 0 && (rc = dstream_finish(&s.ds, e)))
		err_set(e, rc, "docker start exec: the stream was cut inside a frame");
	io->timed_out = c.timed_out;
	io->cancelled = c.cancelled;
	io->bytes[1] = s.ds.bytes[1];
	io->bytes[2] = s.ds.bytes[2];
	return rc;
}

int docker_exec_start_detached(const char *exec_id, long timeout_ms, struct err *e)
{
	static const char body[] = "{\"Detach\":true,\"Tty\":false}";
	char path[DK_OBJECT_PATH_MAX];
	struct call c;
	int rc;

	if ((rc = dk_object_path(path, DK_EXEC, exec_id, "/start", e)))
		return rc;
	dk_call_init(&c, "start detached exec", "POST", path, timeout_ms, e);
	dk_call_body(&c, body);
	return dk_perform(&c);
}

int docker_exec_inspect(const char *exec_id, struct docker_exec_state *out, long timeout_ms,
			struct err *e)
{
	json_object *resp = NULL, *v;
	int64_t code = -1, pid = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = dk_object_get(DK_EXEC, "inspect exec", exec_id, "/json", timeout_ms, &resp, e)))
		return rc;
	if (get_bool(resp, "Running", &out->running)) {
		rc = err_set(e, ERR_FAIL, "docker inspect exec: no Running in the answer");
		goto out;
	}
	/* ExitCode is null until the command has ended. */
	if (json_object_object_get_ex(resp, "ExitCode", &v) && json_object_is_type(v, json_type_int))
		code = json_object_get_int64(v);
	get_int(resp, "Pid", &pid);
	out->exit_code = out->running ? -1 : (int)code;
	out->pid = pid;
out:
	json_object_put(resp);
	return rc;
}
