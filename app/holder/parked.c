/* parked.c: a call the holder keeps while its sandbox clones (parked.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/epoll.h>
#include "sandboxd/common/agentwire.h"
#include "sandboxd/http/http.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/holder/park.h"
#include "sandboxd/holder/parked.h"
#include "sandboxd/common/banned.h"

#define REPLAY_ID 1
#define OUT_MAX (HTTP_OUT_MAX + ((size_t)4 << 20))
#define RETRY_MS 100

static void close_fd(struct parked *p, int which)
{
	if (p->fd[which] < 0)
		return;
	if (p->forget)
		p->forget(p->forget_arg, p->fd[which]);
	close(p->fd[which]);
	p->fd[which] = -1;
}

int parked_open(struct parked *p, struct handover *ho, const int fds[3],
		const char *worker_socket, struct err *e)
{
	struct stat st;
	void *map;

	memset(p, 0, sizeof(*p));
	p->ho = *ho;
	memset(ho, 0, sizeof(*ho));
	p->worker_socket = worker_socket;
	p->fd[PARKED_NGINX] = fds[0];
	p->fd[PARKED_AGENT] = fds[1];
	p->fd[PARKED_WORKER] = -1;
	for (int i = 0; i < 3; i++)
		p->tag[i] = (struct held_tag){ HELD_PARKED, i, NULL, p };
	buf_init(&p->out, OUT_MAX);
	buf_init(&p->extra, 4096);
	p->waiting = 1;
	p->deadline_ms = agentwire_now_ms() + p->ho.w.clone_wait_ms + PARKED_SLACK_MS;
	for (int i = 0; i < 2; i++)
		held_nonblocking(p->fd[i]);
	/* The worker wrote it whole before it sent it: its size is what the message says. */
	if (fstat(fds[2], &st) || st.st_size != p->ho.w.park_len ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fds[2], 0)) ==
		    MAP_FAILED) {
		close(fds[2]);
		return err_set(e, ERR_INVALID, "a parked call whose records are not %lld bytes",
			       (long long)p->ho.w.park_len);
	}
	close(fds[2]);
	p->req = map;
	p->req_len = (size_t)st.st_size;
	return 0;
}

/* An answer of the holder's own, when no worker can be asked (the service stops). */
static void answer_self(struct parked *p, int status, const char *why)
{
	char head[512], body[256];
	int b = snprintf(body, sizeof(body), "{\"message\":\"%s\"}\n", why);
	int n = http_head(head, sizeof(head) - 2, status, p->ho.w.request_id, NULL, (size_t)b);

	log_warn("holder: parked call in %s answered %d: %s", p->ho.w.sandbox_id, status, why);
	p->replayed = 1;
	if (n < 0 || p->fd[PARKED_NGINX] < 0)
		return;
	memcpy(head + n, "\r\n", 2);
	if (fcgirec_stdout(&p->out, p->ho.w.fcgi_id, head, (size_t)n + 2) ||
	    fcgirec_stdout(&p->out, p->ho.w.fcgi_id, body, (size_t)b) ||
	    fcgirec_end(&p->out, p->ho.w.fcgi_id))
		close_fd(p, PARKED_NGINX);
}

void parked_refuse(struct parked *p, int status, const char *why)
{
	p->waiting = 0;
	close_fd(p, PARKED_AGENT);
	answer_self(p, status, why);
}

/* The replay's connection to a worker, and the parameters the holder adds. */
static void replay(struct parked *p)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char started[24];
	int fd;

	p->retry_ms = 0;
	if (!p->extra.len) {
		snprintf(started, sizeof(started), "%lld", (long long)p->ho.w.request_started_ms);
		struct buf pairs;
		buf_init(&pairs, 4096);
		int rc = fcgirec_pair(&pairs, PARK_REPLAY, strlen(PARK_REPLAY), started,
				      strlen(started));
		if (!rc && p->gone)
			rc = fcgirec_pair(&pairs, PARK_REPLAY_GONE, strlen(PARK_REPLAY_GONE), "1", 1);
		if (!rc)
			rc = fcgirec_stream(&p->extra, FCGIREC_PARAMS, REPLAY_ID, pairs.data, pairs.len);
		buf_release(&pairs);
		if (rc || fcgirec_stream(&p->extra, FCGIREC_PARAMS, REPLAY_ID, NULL, 0))
			return answer_self(p, 500, "internal error");
	}
	memcpy(a.sun_path, p->worker_socket, strlen(p->worker_socket) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return answer_self(p, 503, "the service is not taking calls now");
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) {
		int err = errno;

		close(fd);
		/* A full backlog: every worker busy and more waiting; again in a moment. */
		if (err == EAGAIN) {
			p->retry_ms = agentwire_now_ms() + RETRY_MS;
			return;
		}
		log_warn("holder: the workers' socket %s: %s", p->worker_socket, strerror(err));
		return answer_self(p, 503, "the service is not taking calls now");
	}
	p->fd[PARKED_WORKER] = fd;
}

/* The wait is over: the agent answered or closed, the client left, or the time is up. */
static void wait_over(struct parked *p)
{
	if (!p->waiting)
		return;
	p->waiting = 0;
	close_fd(p, PARKED_AGENT);
	replay(p);
}

/* The three parts of the replay from where it stands. */
static int send_request(struct parked *p)
{
	size_t params = (size_t)p->ho.w.park_params;
	const struct { const unsigned char *d; size_t n; } part[3] = {
		{ p->req, params }, { (unsigned char *)p->extra.data, p->extra.len },
		{ p->req + params, p->req_len - params } };
	size_t total = p->req_len + p->extra.len;

	while (p->sent < total) {
		struct iovec iov[3];
		int n = 0;
		size_t at = 0;

		for (int i = 0; i < 3; i++) {
			if (p->sent < at + part[i].n) {
				size_t skip = p->sent > at ? p->sent - at : 0;
				iov[n++] = (struct iovec){ (void *)(part[i].d + skip), part[i].n - skip };
			}
			at += part[i].n;
		}
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t k = sendmsg(p->fd[PARKED_WORKER], &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (k <= 0)
			return -1;
		p->sent += (size_t)k;
	}
	return 0;
}

static void worker_closed(struct parked *p, const char *why)
{
	close_fd(p, PARKED_WORKER);
	p->replayed = 1;
	/* An answer cut short: nginx, finding the connection closed, answers 502. */
	if (!p->relay.ended && p->fd[PARKED_NGINX] >= 0) {
		log_warn("holder: the replay of a call in %s ended without its answer: %s",
			 p->ho.w.sandbox_id, why);
		close_fd(p, PARKED_NGINX);
	}
}

static void worker_event(struct parked *p, uint32_t events)
{
	unsigned char b[64 * 1024];

	if ((events & EPOLLOUT) && send_request(p))
		return worker_closed(p, strerror(errno));
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (int i = 0; i < 16 && p->out.len - p->out_off < HELD_OUT_HIGH; i++) {
		ssize_t n = recv(p->fd[PARKED_WORKER], b, sizeof(b), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			return worker_closed(p, n ? strerror(errno) : "closed");
		/* A client gone reads nothing: the worker still ends its call (and its row). */
		if (p->fd[PARKED_NGINX] >= 0 &&
		    fcgirec_relay(&p->relay, p->ho.w.fcgi_id, b, (size_t)n, &p->out)) {
			log_warn("holder: the replay of a call in %s answered what is not FastCGI",
				 p->ho.w.sandbox_id);
			close_fd(p, PARKED_NGINX);
		}
	}
}

void parked_event(struct parked *p, int which, uint32_t events)
{
	switch (which) {
	case PARKED_AGENT:
		return wait_over(p);
	case PARKED_WORKER:
		return worker_event(p, events);
	default:
		if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
			p->gone = 1;
			close_fd(p, PARKED_NGINX);
			wait_over(p);
		}
	}
}

void parked_tick(struct parked *p, long long now)
{
	if (p->waiting && now >= p->deadline_ms)
		wait_over(p);
	else if (p->retry_ms && now >= p->retry_ms)
		replay(p);
}

int parked_write(struct parked *p)
{
	int w = p->fd[PARKED_NGINX] < 0 ? 1 : held_send_out(p->fd[PARKED_NGINX], &p->out,
							     &p->out_off);

	if (w == 0)
		return 0;
	if (w < 0) {
		p->gone = 1;
		close_fd(p, PARKED_NGINX);
	}
	/* Over once no more answer comes and what came is out (or no one reads it). */
	return p->replayed && (p->fd[PARKED_NGINX] < 0 || p->out.len == 0);
}

uint32_t parked_wants(const struct parked *p, int which)
{
	switch (which) {
	case PARKED_AGENT:
		return p->waiting ? EPOLLIN | EPOLLRDHUP : 0;
	case PARKED_WORKER:
		return (p->sent < p->req_len + p->extra.len ? EPOLLOUT : 0) |
		       (p->out.len - p->out_off < HELD_OUT_HIGH ? EPOLLIN | EPOLLRDHUP : 0);
	default:
		return EPOLLRDHUP | (p->out_off < p->out.len ? EPOLLOUT : 0);
	}
}

void parked_close(struct parked *p)
{
	for (int i = 0; i < 3; i++)
		close_fd(p, i);
	if (p->req)
		munmap(p->req, p->req_len);
	p->req = NULL;
	buf_release(&p->out);
	buf_release(&p->extra);
	handover_release(&p->ho);
}
