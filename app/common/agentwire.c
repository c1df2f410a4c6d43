/* agentwire.c: agentproto frames over a socket, bounded and with deadlines (agentwire.h). */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include "sandboxd/common/agentwire.h"
#include "sandboxd/common/banned.h"

long long agentwire_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits until fd is readable: 0, or the wait's failure. */
static int wait_readable(int fd, const struct agentwire_wait *w, struct err *e)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = 1000;
		int r;

		if (w && w->cancel && w->cancel(w->arg))
			return err_set(e, ERR_CANCELLED, "the caller stopped waiting");
		if (w && w->deadline_ms) {
			left = w->deadline_ms - agentwire_now_ms();
			if (left <= 0)
				return err_set(e, ERR_FAIL, "no answer in time");
			if (left > 1000)
				left = 1000;
		}
		r = poll(&p, 1, (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return err_set(e, ERR_FAIL, "poll: %s", strerror(errno));
	}
}

static int read_full(int fd, unsigned char *p, size_t n, const struct agentwire_wait *w,
		     struct err *e)
{
	while (n) {
		ssize_t r;
		int rc;

		if ((rc = wait_readable(fd, w, e)))
			return rc;
		r = recv(fd, p, n, MSG_DONTWAIT);
		if (r == 0)
			return err_set(e, ERR_FAIL, "the connection closed");
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			return err_set(e, ERR_FAIL, "read: %s", strerror(errno));
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int agentwire_read(int fd, unsigned char *buf, size_t cap, uint32_t max,
		   const struct agentwire_wait *w, struct ap_hdr *h, struct err *e)
{
	unsigned char hdr[AP_HDR];
	int rc;

	if (cap < max || !max)
		max = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	if ((rc = read_full(fd, hdr, sizeof(hdr), w, e)) ||
	    (rc = agentproto_hdr_parse(hdr, max, h, e)))
		return rc;
	return read_full(fd, buf, h->len, w, e);
}

int agentwire_write(int fd, const void *p, size_t n, int timeout_ms, struct err *e)
{
	const unsigned char *q = p;
	long long deadline = agentwire_now_ms() + timeout_ms;

	while (n) {
		ssize_t r = send(fd, q, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			long long left = deadline - agentwire_now_ms();

			if (left <= 0)
				return err_set(e, ERR_FAIL, "the peer does not read");
			if (poll(&pf, 1, (int)left) < 0 && errno != EINTR)
				return err_set(e, ERR_FAIL, "poll: %s", strerror(errno));
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set(e, ERR_FAIL, "write: %s", strerror(errno));
		q += r;
		n -= (size_t)r;
	}
	return 0;
}

int agentwire_send(int fd, struct ap_enc *w, int timeout_ms, struct err *e)
{
	size_t n;
	int rc;

	if ((rc = agentproto_enc_end(w, &n, e)))
		return rc;
	return agentwire_write(fd, w->p, n, timeout_ms, e);
}

int agentwire_send_raw(int fd, uint8_t type, uint32_t stream, const void *p, size_t n,
		       int timeout_ms, struct err *e)
{
	unsigned char hdr[AP_HDR];
	int rc;

	if (n > AP_DATA_MAX)
		return err_set(e, ERR_TOOBIG, "raw frame of %zu bytes", n);
	agentproto_hdr_put(hdr, type, stream, (uint32_t)n);
	if ((rc = agentwire_write(fd, hdr, sizeof(hdr), timeout_ms, e)))
		return rc;
	return n ? agentwire_write(fd, p, n, timeout_ms, e) : 0;
}
