/* handover.c: the message that hands a running exec to the holder (handover.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "sandboxd/holder/handover.h"
#include "sandboxd/common/banned.h"

#define MAGIC 0x73626831u  /* "sbh1" */

static int connect_holder(const char *path, struct err *e)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return err_set(e, ERR_FAIL, "the holder's socket path is too long");
	memcpy(a.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0)
		return err_set(e, ERR_FAIL, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int err = errno;
		close(fd);
		return err_set(e, ERR_FAIL, "the holder at %s: %s", path, strerror(err));
	}
	return fd;
}

/* The message w (its secrets from sec) with nfds descriptors, in one record. */
static int send_with(const char *path, const int *fds, int nfds, struct handover_wire w,
		     const struct secrets_set *sec, const char *batch, struct err *e)
{
	struct iovec iov[2 + SECRETS_PER_SANDBOX];
	union { char b[CMSG_SPACE(3 * sizeof(int))]; struct cmsghdr align; } u;
	struct msghdr m = { .msg_iov = iov, .msg_control = u.b,
			    .msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int)) };
	int fd;
	ssize_t sent;

	w.magic = MAGIC;
	w.nsecrets = sec ? (uint32_t)sec->n : 0;
	iov[0] = (struct iovec){ &w, sizeof(w) };
	for (uint32_t i = 0; i < w.nsecrets; i++) {
		w.secret_len[i] = (uint32_t)strlen(sec->values[i]);
		iov[1 + i] = (struct iovec){ (void *)sec->values[i], w.secret_len[i] };
	}
	m.msg_iovlen = 1 + w.nsecrets;
	if (w.batch_len > HANDOVER_BATCH_MAX || (w.batch_len && !batch))
		return err_set(e, ERR_TOOBIG, "a batch's answers of %u bytes do not fit a hand-over",
			       w.batch_len);
	if (w.batch_len)
		iov[m.msg_iovlen++] = (struct iovec){ (void *)batch, w.batch_len };
	memset(u.b, 0, sizeof(u.b));
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	if ((fd = connect_holder(path, e)) < 0)
		return fd;
	/* One record: the holder gets all of it, with the descriptors, or nothing. */
	sent = sendmsg(fd, &m, MSG_NOSIGNAL);
	if (sent < 0) {
		int err = errno;
		close(fd);
		return err_set(e, ERR_FAIL, "sending to the holder: %s", strerror(err));
	}
	close(fd);
	return 0;
}

int handover_send(const char *path, int fcgi_fd, int agent_fd, const struct handover_wire *h,
		  const struct secrets_set *sec, const char *batch, struct err *e)
{
	const int fds[2] = { fcgi_fd, agent_fd };
	struct handover_wire w = *h;

	w.park = 0;
	return send_with(path, fds, 2, w, sec, batch, e);
}

int handover_park_send(const char *path, const int fds[3], const struct handover_wire *h,
		       struct err *e)
{
	struct handover_wire w = *h;

	w.park = 1;
	w.batch = w.batch_len = 0;
	return send_with(path, fds, 3, w, NULL, NULL, e);
}

static int terminated(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

int handover_decode(const void *p, size_t n, struct handover *h, struct err *e)
{
	size_t need = sizeof(h->w), at = 0;

	memset(h, 0, sizeof(*h));
	if (n < sizeof(h->w))
		return err_set(e, ERR_INVALID, "a hand-over of %zu bytes is too short", n);
	memcpy(&h->w, p, sizeof(h->w));
	if (h->w.magic != MAGIC || h->w.nsecrets > SECRETS_PER_SANDBOX ||
	    !terminated(h->w.sandbox_id, sizeof(h->w.sandbox_id)) ||
	    !terminated(h->w.request_id, sizeof(h->w.request_id)) ||
	    !terminated(h->w.token, sizeof(h->w.token)) || h->w.timeout_ms < 0 ||
	    !terminated(h->w.rpc_id, sizeof(h->w.rpc_id)) || h->w.mcp > 1 ||
	    (h->w.mcp && (h->w.streamed || !h->w.rpc_id[0])) || h->w.batch > 1 ||
	    (h->w.batch && !h->w.mcp) || (h->w.batch_len && !h->w.batch) ||
	    h->w.batch_len > HANDOVER_BATCH_MAX ||
	    h->w.fcgi_id > 0xffff || h->w.streamed > 1 || h->w.park > 1 ||
	    (h->w.park && (h->w.nsecrets || h->w.streamed || h->w.park_params < 16 ||
			   h->w.park_len < h->w.park_params + 8 || h->w.clone_wait_ms < 0)))
		return err_set(e, ERR_INVALID, "a hand-over that is not one");
	for (uint32_t i = 0; i < h->w.nsecrets; i++) {
		if (h->w.secret_len[i] > SECRETS_VALUE_MAX)
			return err_set(e, ERR_INVALID, "a hand-over's secret is too long");
		need += h->w.secret_len[i];
	}
	need += h->w.batch_len;
	if (n != need)
		return err_set(e, ERR_INVALID, "a hand-over of %zu bytes where %zu were due", n,
			       need);
	if (!(h->buf = malloc(need - sizeof(h->w) + h->w.nsecrets + 2)))
		return err_set(e, ERR_NOMEM, "out of memory");
	for (uint32_t i = 0; i < h->w.nsecrets; i++) {
		size_t k = h->w.secret_len[i];
		const char *src = (const char *)p + sizeof(h->w) + (at - i);

		memcpy(h->buf + at, src, k);
		h->buf[at + k] = 0;
		h->secrets[i] = h->buf + at;
		at += k + 1;
	}
	/* The batch's answers follow the secrets: at - nsecrets bytes in. */
	memcpy(h->buf + at, (const char *)p + sizeof(h->w) + (at - h->w.nsecrets), h->w.batch_len);
	h->buf[at + h->w.batch_len] = 0;
	h->batch = h->buf + at;
	return 0;
}

void handover_release(struct handover *h)
{
	free(h->buf);
	h->buf = NULL;
}

int handover_recv(int conn, struct handover *h, int fds[3], struct err *e)
{
	char *b = malloc(HANDOVER_MSG_MAX + 1);
	union { char b[CMSG_SPACE(3 * sizeof(int))]; struct cmsghdr align; } u;
	struct iovec iov = { b, HANDOVER_MSG_MAX + 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b) };
	ssize_t n;
	int rc, got = 0;

	fds[0] = fds[1] = fds[2] = -1;
	if (!b)
		return err_set(e, ERR_NOMEM, "out of memory");
	n = recvmsg(conn, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); n >= 0 && c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    (c->cmsg_len == CMSG_LEN(sizeof(int) * 2) ||
		     c->cmsg_len == CMSG_LEN(sizeof(int) * 3)) && !got) {
			got = c->cmsg_len == CMSG_LEN(sizeof(int) * 2) ? 2 : 3;
			memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)got);
		}
	if (n <= 0)
		rc = err_set(e, ERR_FAIL, "the worker sent no hand-over");
	else if (!got || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		rc = err_set(e, ERR_INVALID, "a hand-over without its connections");
	else if ((rc = handover_decode(b, (size_t)n, h, e)) == 0 && got != (h->w.park ? 3 : 2)) {
		handover_release(h);
		rc = err_set(e, ERR_INVALID, "a hand-over with %d descriptors where %d were due",
			     got, h->w.park ? 3 : 2);
	}
	free(b);
	if (rc) {
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		fds[0] = fds[1] = fds[2] = -1;
	}
	return rc;
}
