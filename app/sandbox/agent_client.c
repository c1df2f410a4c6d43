/* agent_client.c: the worker's client of sandboxd-agent (agent_client.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/random.h>
#include <sys/socket.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/common/agentwire.h"
#include "sandboxd/common/banned.h"

#define REQ_STREAM AGENT_CLIENT_STREAM
#define EXEC_SLACK_MS 15000        /* past the limit and the grace, the agent is broken */

void agent_close(struct agent_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
}

/* e's message again with pre before it (copied first: the source is e itself). */
static int prefix(struct err *e, int code, const char *pre)
{
	char was[400];

	if (!e)
		return code;
	agentproto_clean_text(was, sizeof(was), e->msg);
	return err_set(e, code, "%s%s", pre, was);
}

/* A frame from the agent, on c's stream; an ERROR frame becomes the agent's code. */
static int recv_frame(struct agent_conn *c, const struct agentwire_wait *w, struct ap_hdr *h,
		      struct err *e)
{
	struct ap_msg m;
	char clean[400];
	int rc;

	if ((rc = agentwire_read(c->fd, c->buf, AP_MSG_MAX, AP_MSG_MAX, w, h, e)))
		return rc == ERR_CANCELLED ? rc : prefix(e, rc, "agent: ");
	if (h->stream != c->stream)
		return err_set(e, ERR_FAIL, "agent answered on stream %u, not %u", h->stream,
			       c->stream);
	if (h->type != AP_T_ERROR)
		return 0;
	if ((rc = agentproto_decode(h->type, c->buf, h->len, &m, e)))
		return err_set(e, ERR_FAIL, "agent sent a bad error frame");
	agentproto_clean_text(clean, sizeof(clean), m.str[AP_F_MSG]);
	return err_set(e, agentproto_err_code((int64_t)m.num[AP_F_CODE]), "agent: %s", clean);
}

/* A fielded frame of type into m, within w (NULL: c's I/O bound). */
static int expect_within(struct agent_conn *c, const struct agentwire_wait *within, uint8_t type,
			 struct ap_msg *m, struct err *e)
{
	struct agentwire_wait w = { agentwire_now_ms() + c->io_ms, NULL, NULL };
	struct ap_hdr h;
	int rc;

	if ((rc = recv_frame(c, within ? within : &w, &h, e)))
		return rc;
	if (h.type != type)
		return err_set(e, ERR_FAIL, "agent answered frame type %u where %u was due",
			       h.type, type);
	if ((rc = agentproto_decode(h.type, c->buf, h.len, m, e)))
		return prefix(e, ERR_FAIL, "agent sent a bad frame: ");
	return 0;
}

static int expect(struct agent_conn *c, uint8_t type, struct ap_msg *m, struct err *e)
{
	return expect_within(c, NULL, type, m, e);
}

static int tcp_connect(const char *host, int port, long long deadline, struct err *e)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd, soerr = 0, one = 1;
	socklen_t len = sizeof(soerr);

	if (port < 1 || port > 65535 || inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return err_set(e, ERR_INVALID, "agent address '%s:%d' is not valid", host, port);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return err_set(e, ERR_FAIL, "socket: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS)
		goto fail;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		long long left = deadline - agentwire_now_ms();
		int r = left > 0 ? poll(&p, 1, (int)left) : 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			close(fd);
			return err_set(e, ERR_FAIL, "agent at %s:%d: no connection in time", host,
				       port);
		}
		break;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) || soerr) {
		errno = soerr ? soerr : errno;
		goto fail;
	}
	return fd;
fail:
	soerr = errno;
	close(fd);
	return err_set(e, ERR_FAIL, "agent at %s:%d: %s", host, port, strerror(soerr));
}

/* HELLO, AUTH, AUTH_OK: both sides prove the key (agentproto.h). */
static int handshake(struct agent_conn *c, const unsigned char *key, size_t key_len,
		     struct err *e)
{
	unsigned char wn[AP_NONCE_LEN], an[AP_NONCE_LEN], mac[AP_MAC_LEN], b[AP_HDR + 128];
	struct ap_enc w;
	struct ap_msg m;
	int rc;

	if ((rc = expect(c, AP_T_HELLO, &m, e)))
		goto refused;
	memcpy(an, m.bin[AP_F_NONCE], sizeof(an));
	if (getrandom(wn, sizeof(wn), 0) != sizeof(wn))
		return err_set(e, ERR_FAIL, "no randomness for the agent's handshake");
	agentproto_mac(key, key_len, 1, an, wn, mac);
	agentproto_enc_init(&w, b, sizeof(b), AP_T_AUTH, 1);
	agentproto_put_bin(&w, AP_F_NONCE, wn, sizeof(wn));
	agentproto_put_bin(&w, AP_F_MAC, mac, sizeof(mac));
	if ((rc = agentwire_send(c->fd, &w, c->io_ms, e)) ||
	    (rc = expect(c, AP_T_AUTH_OK, &m, e)))
		goto refused;
	agentproto_mac(key, key_len, 0, an, wn, mac);
	if (!agentproto_mac_equal(mac, m.bin[AP_F_MAC]))
		return err_set(e, ERR_DENIED, "agent failed to authenticate: wrong proof of the key");
	return 0;
refused:
	if (rc == ERR_DENIED && e && !strncmp(e->msg, "agent: ", 7)) {
		memmove(e->msg, e->msg + 7, strlen(e->msg + 7) + 1);
		return prefix(e, ERR_DENIED, "agent refused the connection: ");
	}
	return rc;
}

int agent_connect(struct agent_conn *c, const char *host, int port, const unsigned char *key,
		  size_t key_len, int timeout_ms, struct err *e)
{
	long long deadline = agentwire_now_ms() + timeout_ms;
	int rc;

	c->fd = -1;
	c->stream = 1;
	c->io_ms = timeout_ms;
	if (key_len < AP_KEY_MIN || key_len > AP_KEY_MAX)
		return err_set(e, ERR_INVALID, "an agent key has %d..%d bytes", AP_KEY_MIN,
			       AP_KEY_MAX);
	if (!(c->buf = malloc(AP_MSG_MAX)))
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((c->fd = tcp_connect(host, port, deadline, e)) < 0) {
		rc = c->fd;
		c->fd = -1;
		agent_close(c);
		return rc;
	}
	if ((rc = handshake(c, key, key_len, e))) {
		agent_close(c);
		return rc;
	}
	c->stream = REQ_STREAM;
	return 0;
}

/* The bytes an EXEC frame of r needs, or 0 when it cannot fit AP_REQ_MAX. */
static size_t exec_size(const struct agent_exec_req *r)
{
	size_t n = AP_HDR + 2 * 13 + r->n_rlimits * 29;

	if (r->cmd)
		n += 6 + strlen(r->cmd);
	if (r->cwd)
		n += 6 + strlen(r->cwd);
	if (r->clone_state)
		n += 13 + 6 + strlen(r->clone_state);
	for (size_t i = 0; r->argv && r->argv[i]; i++)
		n += 6 + strlen(r->argv[i]);
	for (size_t i = 0; r->env && r->env[i]; i++)
		n += 6 + strlen(r->env[i]);
	return n - AP_HDR > AP_REQ_MAX ? 0 : n;
}

static int send_exec(struct agent_conn *c, const struct agent_exec_req *r, int detach,
		     struct err *e)
{
	size_t n = exec_size(r);
	unsigned char *b;
	struct ap_enc w;
	int rc;

	if (!n)
		return err_set(e, ERR_TOOBIG, "the exec request is over %u bytes", AP_REQ_MAX);
	if (!(b = malloc(n)))
		return err_set(e, ERR_NOMEM, "out of memory");
	agentproto_enc_init(&w, b, n, AP_T_EXEC, c->stream);
	if (r->cmd)
		agentproto_put_str(&w, AP_F_CMD, r->cmd);
	for (size_t i = 0; r->argv && r->argv[i]; i++)
		agentproto_put_str(&w, AP_F_ARG, r->argv[i]);
	if (r->cwd)
		agentproto_put_str(&w, AP_F_CWD, r->cwd);
	for (size_t i = 0; r->env && r->env[i]; i++)
		agentproto_put_str(&w, AP_F_ENV, r->env[i]);
	agentproto_put_num(&w, AP_F_TIMEOUT, (uint64_t)r->timeout_ms);
	agentproto_put_num(&w, AP_F_DETACH, (uint64_t)detach);
	for (size_t i = 0; i < r->n_rlimits; i++)
		agentproto_put_rlimit(&w, &r->rlimits[i]);
	if (r->clone_state) {
		agentproto_put_num(&w, AP_F_CLONE_WAIT, (uint64_t)r->clone_wait_ms);
		agentproto_put_str(&w, AP_F_PATH, r->clone_state);
	}
	rc = agentwire_send(c->fd, &w, c->io_ms, e);
	free(b);
	return rc;
}

void agent_exit_take(const struct ap_msg *m, struct agent_exit *x)
{
	int64_t code = (int64_t)m->num[AP_F_CODE];

	x->exit_code = code < 0 || code > 255 ? 255 : (int)code;
	x->signal = m->num[AP_F_SIGNAL] > 64 ? 0 : (int)m->num[AP_F_SIGNAL];
	x->timed_out = m->num[AP_F_TIMEDOUT] != 0;
	x->killed = m->num[AP_F_KILLED] != 0;
	x->duration_ms = m->num[AP_F_DURATION] > (uint64_t)1 << 40 ? 0
			 : (long long)m->num[AP_F_DURATION];
}

/* One frame of a running exec: output to the sink, or the end into out (*done). */
static int exec_frame(struct agent_conn *c, const struct ap_hdr *h,
		      const struct agent_exec_hooks *hk, struct agent_exit *out, int *done,
		      struct err *e)
{
	struct ap_msg m;
	int rc;

	if (h->type == AP_T_STDOUT || h->type == AP_T_STDERR) {
		if (!h->len)
			return 0;
		rc = hk->sink(hk->sink_arg, h->type == AP_T_STDOUT ? DSTREAM_STDOUT : DSTREAM_STDERR,
			      (const char *)c->buf, h->len);
		return rc ? err_set(e, rc, "the exec's output was refused") : 0;
	}
	if (h->type != AP_T_EXIT)
		return err_set(e, ERR_FAIL, "agent sent frame type %u during an exec", h->type);
	if (agentproto_decode(h->type, c->buf, h->len, &m, e))
		return prefix(e, ERR_FAIL, "agent sent a bad exit frame: ");
	agent_exit_take(&m, out);
	*done = 1;
	return 0;
}

/* The most of a run's frames that are looked at before its hand-over. */
#define PEEK_MAX (64u * 1024)

/* Whether the whole run (its output and EXIT) is on c within ms, looked at with MSG_PEEK so
 * that nothing is read: 1 when it is, or when the bytes there are not a run's (the reader
 * here then says what is wrong), 0 when it is not whole by then, or is more than PEEK_MAX,
 * or (at_output) when the run's first frame came and was not its end.
 * A hand-over, its held row, claim and end, cost more than a command that ends at once. */
static int ends_within(struct agent_conn *c, int ms, int at_output)
{
	long long deadline = agentwire_now_ms() + ms;
	unsigned char *p;
	int lowat = 1, whole = 0;

	if (ms <= 0 || !(p = malloc(PEEK_MAX)))
		return 0;
	for (ssize_t seen = -1;;) {
		ssize_t n = recv(c->fd, p, PEEK_MAX, MSG_PEEK | MSG_DONTWAIT);
		long long left = deadline - agentwire_now_ms();
		struct pollfd pf = { c->fd, POLLIN, 0 };

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			whole = 1;  /* closed or broken: the reader here says so */
			break;
		}
		if (n > 0 && (whole = agentproto_run_ends(p, (size_t)n)) != 0) {
			whole = 1;
			break;
		}
		if (at_output && (size_t)n >= AP_HDR)
			break;  /* output first: it goes out now, by whoever takes the run */
		/* Full, out of time, or woken with nothing new: the kernel caps SO_RCVLOWAT at
		 * half its buffer, past which poll would not wait. */
		if ((size_t)(n > 0 ? n : 0) == PEEK_MAX || left <= 0 || (n > 0 && n == seen))
			break;
		seen = n;
		/* Woken by more bytes than are there now, not by those (poll honours it). */
		lowat = (int)(n > 0 ? n : 0) + 1;
		if (setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)) ||
		    (poll(&pf, 1, (int)left) < 0 && errno != EINTR))
			break;
	}
	if (lowat != 1) {
		lowat = 1;
		if (setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)))
			whole = 1;  /* frames must not wait for more than they need: keep it here */
	}
	free(p);
	return whole;
}

int agent_exec(struct agent_conn *c, const struct agent_exec_req *r,
	       const struct agent_exec_hooks *h, struct agent_exit *out, struct err *e)
{
	int waits = r->clone_state != NULL;
	struct agentwire_wait w = { agentwire_now_ms() + r->timeout_ms + 5000 + EXEC_SLACK_MS,
				    h->cancel, h->cancel_arg },
			      start = { agentwire_now_ms() + r->clone_wait_ms + c->io_ms, h->cancel,
					h->cancel_arg };
	struct ap_msg m;
	struct ap_hdr hdr;
	int rc, done = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = send_exec(c, r, 0, e)))
		goto out;
	/* An exec that waits for the clone is handed on before it starts: the waiting is the
	 * long part (the holder reads STARTED or the refusal itself). */
	if (waits && h->handover && h->handover(h->handover_arg, c->fd) == 0) {
		out->handed = 1;
		return 0;
	}
	if ((rc = expect_within(c, waits ? &start : NULL, AP_T_STARTED, &m, e)))
		goto out;
	w.deadline_ms = agentwire_now_ms() + r->timeout_ms + 5000 + EXEC_SLACK_MS;
	if (h->started && h->started(h->started_arg)) {
		rc = err_set(e, ERR_CANCELLED, "the caller stopped waiting");
		goto out;
	}
	/* Nothing of the run is read yet (agentwire reads a frame and no byte more): whoever
	 * takes the connection reads it from its first output frame. */
	if (!waits && h->handover && !ends_within(c, h->handover_after_ms, h->handover_at_output) &&
	    h->handover(h->handover_arg, c->fd) == 0) {
		out->handed = 1;
		return 0;
	}
	while (!done)
		if ((rc = recv_frame(c, &w, &hdr, e)) ||
		    (rc = exec_frame(c, &hdr, h, out, &done, e)))
			goto out;
out:
	/* Whatever stopped it, the connection's end makes the agent end the tree. */
	if (rc && c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	return rc;
}

int agent_detach_start(struct agent_conn *c, const struct agent_exec_req *r,
		       char id[AGENT_CLIENT_ID_MAX], struct err *e)
{
	struct ap_msg m;
	int rc;

	if ((rc = send_exec(c, r, 1, e)) || (rc = expect(c, AP_T_STARTED, &m, e)))
		return rc;
	if (!m.has[AP_F_ID] || strlen(m.str[AP_F_ID]) >= AGENT_CLIENT_ID_MAX)
		return err_set(e, ERR_FAIL, "agent sent no usable exec id");
	agentproto_clean_text(id, AGENT_CLIENT_ID_MAX, m.str[AP_F_ID]);
	return 0;
}

static int send_msg(struct agent_conn *c, struct ap_enc *w, struct err *e)
{
	return agentwire_send(c->fd, w, c->io_ms, e);
}

/* A file request: its type, the path and one number (tag t, value v), sent. */
static int send_file_req(struct agent_conn *c, int type, const char *path, int t, uint64_t v,
			 struct err *e)
{
	unsigned char b[AP_HDR + AP_PATH_MAX + 64];
	struct ap_enc w;

	agentproto_enc_init(&w, b, sizeof(b), type, c->stream);
	agentproto_put_str(&w, AP_F_PATH, path);
	agentproto_put_num(&w, t, v);
	return send_msg(c, &w, e);
}

int agent_clone_wait_send(struct agent_conn *c, const char *state, int64_t wait_ms,
			  struct err *e)
{
	return send_file_req(c, AP_T_CWAIT, state, AP_F_CLONE_WAIT, (uint64_t)wait_ms, e);
}

/* The frames after DSTATUS: stdout's, then stderr's, each at most max bytes, then END. */
static int dread_frames(struct agent_conn *c, uint64_t max, dstream_fn sink, void *arg,
			struct agent_dstatus *out, struct err *e)
{
	uint64_t got[2] = { 0, 0 };
	int phase = 0, rc;                /* 1 once stderr began: no stdout after it */

	for (;;) {
		struct agentwire_wait w = { agentwire_now_ms() + c->io_ms, NULL, NULL };
		struct ap_hdr h;
		int i;

		if ((rc = recv_frame(c, &w, &h, e)))
			return rc;
		if (h.type == AP_T_END)
			break;
		i = h.type == AP_T_STDERR;
		if ((h.type != AP_T_STDOUT && !i) || (phase && !i) || h.len > max - got[i])
			return err_set(e, ERR_FAIL, "agent sent more output than was asked for");
		phase |= i;
		got[i] += h.len;
		if (h.len && (rc = sink(arg, i ? DSTREAM_STDERR : DSTREAM_STDOUT,
					(const char *)c->buf, h.len)))
			return err_set(e, rc, "the output was refused");
	}
	for (int i = 0; i < 2; i++)
		out->next[i] = out->from[i] + got[i];
	return 0;
}

int agent_detach_read(struct agent_conn *c, const char *id, const uint64_t want[2],
		      uint64_t max, dstream_fn sink, void *arg, struct agent_dstatus *out,
		      struct err *e)
{
	unsigned char b[AP_HDR + 160];
	struct ap_enc w;
	struct ap_msg m;
	int rc;

	memset(out, 0, sizeof(*out));
	agentproto_enc_init(&w, b, sizeof(b), AP_T_DREAD, c->stream);
	agentproto_put_str(&w, AP_F_ID, id);
	agentproto_put_num(&w, AP_F_OFF_OUT, want[0]);
	agentproto_put_num(&w, AP_F_OFF_ERR, want[1]);
	agentproto_put_num(&w, AP_F_MAX, max);
	if ((rc = send_msg(c, &w, e)) || (rc = expect(c, AP_T_DSTATUS, &m, e)))
		return rc;
	out->running = m.num[AP_F_STATE] == 0;
	out->lost = m.num[AP_F_STATE] == 2;
	agent_exit_take(&m, &out->x);
	for (int i = 0; i < 2; i++) {
		out->from[i] = m.num[i ? AP_F_OFF_ERR : AP_F_OFF_OUT];
		out->total[i] = m.num[i ? AP_F_TOTAL_ERR : AP_F_TOTAL_OUT];
		/* The agent may skip dropped output forward, never back, and never past the
		 * end; asked past the end, it answers the end. */
		if (out->from[i] > out->total[i] ||
		    out->from[i] < (want[i] < out->total[i] ? want[i] : out->total[i]))
			return err_set(e, ERR_FAIL, "agent answered offsets outside those asked for");
	}
	if ((rc = dread_frames(c, max, sink, arg, out, e)))
		return rc;
	for (int i = 0; i < 2; i++)
		if (out->next[i] > out->total[i])
			return err_set(e, ERR_FAIL, "agent sent more output than it counted");
	return 0;
}

int agent_detach_kill(struct agent_conn *c, const char *id, int sig, struct err *e)
{
	unsigned char b[AP_HDR + 160];
	struct ap_enc w;
	struct ap_msg m;
	int rc;

	agentproto_enc_init(&w, b, sizeof(b), AP_T_DKILL, c->stream);
	agentproto_put_str(&w, AP_F_ID, id);
	agentproto_put_num(&w, AP_F_SIGNAL, (uint64_t)sig);
	if ((rc = send_msg(c, &w, e)))
		return rc;
	return expect(c, AP_T_END, &m, e);
}

int agent_file_read(struct agent_conn *c, const char *path, uint64_t limit,
		    const struct files_sink *sink, struct err *e)
{
	uint64_t size, got = 0;
	struct ap_msg m;
	int rc;

	if ((rc = send_file_req(c, AP_T_FREAD, path, AP_F_LIMIT, limit, e)) ||
	    (rc = expect(c, AP_T_FINFO, &m, e)))
		return rc;
	if ((size = m.num[AP_F_SIZE]) > limit)
		return err_set(e, ERR_FAIL, "agent announced a file over the limit");
	if ((rc = sink->start(sink->arg, size, e)))
		return rc;
	while (got < size) {
		struct agentwire_wait wt = { agentwire_now_ms() + c->io_ms, NULL, NULL };
		struct ap_hdr h;

		if ((rc = recv_frame(c, &wt, &h, e)))
			return rc;
		if (h.type != AP_T_DATA || h.len > size - got)
			return err_set(e, ERR_FAIL, "agent sent other than the file's bytes");
		if ((rc = sink->bytes(sink->arg, (const char *)c->buf, h.len, e)))
			return rc;
		got += h.len;
	}
	return expect(c, AP_T_END, &m, e);
}

int agent_file_write(struct agent_conn *c, const char *path, unsigned mode,
		     struct files_source *src, struct err *e)
{
	unsigned char b[AP_HDR + AP_PATH_MAX + 64], *chunk = NULL;
	struct ap_enc w;
	struct ap_msg m;
	int rc;

	agentproto_enc_init(&w, b, sizeof(b), AP_T_FWRITE, c->stream);
	agentproto_put_str(&w, AP_F_PATH, path);
	agentproto_put_num(&w, AP_F_MODE, mode);
	agentproto_put_num(&w, AP_F_SIZE, src->size);
	rc = send_msg(c, &w, e);
	/* A reader's bytes go through a buffer of one frame; memory's as they are. */
	if (!rc && !src->data && src->size > 0 && !(chunk = malloc(AP_DATA_MAX)))
		rc = err_set(e, ERR_NOMEM, "out of memory");
	while (!rc && src->taken < src->size) {
		const unsigned char *p = chunk;
		uint64_t left = src->size - src->taken;
		long n;

		if (src->data) {
			p = src->data + src->taken;
			n = (long)(left < AP_DATA_MAX ? left : AP_DATA_MAX);
			src->taken += (uint64_t)n;
		} else if ((n = files_source_read(src, chunk, AP_DATA_MAX)) < 0) {
			/* The agent sees the connection end without END and keeps nothing. */
			free(chunk);
			return err_set(e, ERR_INVALID, "the body ended before its length");
		}
		rc = agentwire_send_raw(c->fd, AP_T_DATA, c->stream, p, (size_t)n, c->io_ms, e);
	}
	free(chunk);
	if (!rc) {
		agentproto_enc_init(&w, b, sizeof(b), AP_T_END, c->stream);
		rc = send_msg(c, &w, e);
	}
	/* A refusal may have come while we wrote (a directory, no permission): its words
	 * are the answer, not the broken pipe. */
	if (rc == ERR_FAIL || !rc) {
		int rc2 = expect(c, AP_T_END, &m, e);

		rc = rc2 ? rc2 : rc;
	}
	return rc;
}

int agent_file_remove(struct agent_conn *c, const char *path, int recursive, struct err *e)
{
	struct ap_msg m;
	int rc;

	if ((rc = send_file_req(c, AP_T_FREMOVE, path, AP_F_RECURSIVE, recursive ? 1 : 0, e)))
		return rc;
	return expect(c, AP_T_END, &m, e);
}

/* One FENTRY frame to fn, its fields brought into range. */
static int take_entry(struct agent_conn *c, const struct ap_hdr *h, agent_entry_fn fn,
		      void *arg, struct err *e)
{
	struct agent_entry ent;
	struct ap_msg m;

	if (agentproto_decode(h->type, c->buf, h->len, &m, e))
		return prefix(e, ERR_FAIL, "agent sent a bad entry: ");
	ent.path = m.str[AP_F_NAME];
	ent.type = m.num[AP_F_FTYPE] >= 1 && m.num[AP_F_FTYPE] <= 4 ? (int)m.num[AP_F_FTYPE] : 4;
	ent.size = m.num[AP_F_SIZE];
	ent.mode = (unsigned)(m.num[AP_F_MODE] & 07777);
	ent.mtime = (int64_t)m.num[AP_F_MTIME];
	return fn(arg, &ent);
}

int agent_file_list(struct agent_conn *c, const char *path, int depth, agent_entry_fn fn,
		    void *arg, int *truncated, struct err *e)
{
	struct ap_msg m;
	unsigned count = 0;
	int rc;

	*truncated = 0;
	if ((rc = send_file_req(c, AP_T_FLIST, path, AP_F_DEPTH, (uint64_t)depth, e)))
		return rc;
	for (;;) {
		struct agentwire_wait wt = { agentwire_now_ms() + c->io_ms, NULL, NULL };
		struct ap_hdr h;

		if ((rc = recv_frame(c, &wt, &h, e)))
			return rc;
		if (h.type == AP_T_END) {
			if (agentproto_decode(h.type, c->buf, h.len, &m, e))
				return prefix(e, ERR_FAIL, "agent sent a bad end: ");
			*truncated = m.num[AP_F_TRUNC] != 0;
			return 0;
		}
		if (h.type != AP_T_FENTRY || ++count > 10000)
			return err_set(e, ERR_FAIL, "agent sent other than entries");
		if ((rc = take_entry(c, &h, fn, arg, e)))
			return rc;
	}
}
