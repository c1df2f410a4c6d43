/* conn.c: one connection: the key, the mutual challenge-response, one request. */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "agent.h"
#include "sandboxd/common/agentwire.h"
#include "sandboxd/common/banned.h"

void conn_error(struct conn *c, int code, const char *msg)
{
	unsigned char b[AP_HDR + 600];
	struct ap_enc w;
	char clean[512];

	agentproto_clean_text(clean, sizeof(clean), msg);
	agentproto_enc_init(&w, b, sizeof(b), AP_T_ERROR, c->stream);
	agentproto_put_num(&w, AP_F_CODE, (uint64_t)(int64_t)code);
	agentproto_put_str(&w, AP_F_MSG, clean);
	if (agentwire_send(c->fd, &w, AGENT_IO_MS, NULL))
		return;                    /* the peer is gone: nothing to tell */
}

/* The key, read anew for each connection (the worker writes it at claim time, after the
 * agent started). Never followed through a symbolic link; a regular file of
 * AP_KEY_MIN..AP_KEY_MAX bytes. Its length, or an error in e. */
static int key_load(const char *path, unsigned char key[AP_KEY_MAX], size_t *len,
		    struct err *e)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), rc = 0;

	if (fd < 0)
		return err_set(e, ERR_DENIED, "agent has no key: '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < AP_KEY_MIN ||
	    st.st_size > AP_KEY_MAX) {
		rc = err_set(e, ERR_DENIED, "agent has no key: '%s' is not a regular file of "
			     "%d..%d bytes", path, AP_KEY_MIN, AP_KEY_MAX);
		goto out;
	}
	n = read(fd, key, AP_KEY_MAX);
	if (n != st.st_size)
		rc = err_set(e, ERR_DENIED, "agent has no key: '%s' could not be read", path);
	*len = n > 0 ? (size_t)n : 0;
out:
	close(fd);
	return rc;
}

/* HELLO, the worker's AUTH checked, AUTH_OK. 0 when the worker proved the key. */
static int handshake(struct conn *c, struct err *e)
{
	unsigned char key[AP_KEY_MAX], an[AP_NONCE_LEN], mac[AP_MAC_LEN], b[AP_HDR + 128];
	struct agentwire_wait w = { agentwire_now_ms() + AGENT_HANDSHAKE_MS, NULL, NULL };
	struct ap_enc enc;
	struct ap_hdr h;
	struct ap_msg m;
	size_t key_len = 0;
	int rc;

	if ((rc = key_load(c->cfg->key_path, key, &key_len, e)))
		goto out;
	if (getrandom(an, sizeof(an), 0) != sizeof(an)) {
		rc = err_set(e, ERR_FAIL, "agent has no randomness");
		goto out;
	}
	agentproto_enc_init(&enc, b, sizeof(b), AP_T_HELLO, 1);
	agentproto_put_bin(&enc, AP_F_NONCE, an, sizeof(an));
	if ((rc = agentwire_send(c->fd, &enc, AGENT_IO_MS, e)) ||
	    (rc = agentwire_read(c->fd, c->buf, AP_MSG_MAX, AP_MSG_MAX, &w, &h, e)))
		goto out;
	if (h.type != AP_T_AUTH || (rc = agentproto_decode(h.type, c->buf, h.len, &m, e))) {
		rc = err_set(e, ERR_DENIED, "authentication failed: expected an auth frame");
		goto out;
	}
	agentproto_mac(key, key_len, 1, an, m.bin[AP_F_NONCE], mac);
	if (!agentproto_mac_equal(mac, m.bin[AP_F_MAC])) {
		rc = err_set(e, ERR_DENIED, "authentication failed: wrong key");
		goto out;
	}
	agentproto_mac(key, key_len, 0, an, m.bin[AP_F_NONCE], mac);
	agentproto_enc_init(&enc, b, sizeof(b), AP_T_AUTH_OK, 1);
	agentproto_put_bin(&enc, AP_F_MAC, mac, sizeof(mac));
	rc = agentwire_send(c->fd, &enc, AGENT_IO_MS, e);
out:
	explicit_bzero(key, sizeof(key));
	return rc;
}

/* The request, decoded into *m, and dispatched. */
static void serve_request(struct conn *c, struct ap_msg *m)
{
	struct agentwire_wait w = { agentwire_now_ms() + AGENT_IO_MS, NULL, NULL };
	struct err e = { .msg = "" };
	struct ap_hdr h;
	int rc;

	if ((rc = agentwire_read(c->fd, c->buf, AP_REQ_MAX, AP_REQ_MAX, &w, &h, &e))) {
		if (rc != ERR_FAIL)        /* refused, not gone: say why */
			conn_error(c, rc, e.msg);
		return;
	}
	c->stream = h.stream;
	if ((rc = agentproto_decode(h.type, c->buf, h.len, m, &e)))
		return conn_error(c, rc, e.msg);
	switch (h.type) {
	case AP_T_EXEC:
		return m->num[AP_F_DETACH] ? detached_start(c, m) : exec_attached(c, m);
	case AP_T_DREAD:
		return detached_read(c, m);
	case AP_T_DKILL:
		return detached_kill(c, m);
	case AP_T_FREAD:
		return fileops_read(c, m);
	case AP_T_FWRITE:
		return fileops_write(c, m);
	case AP_T_FLIST:
		return fileops_list(c, m);
	case AP_T_FREMOVE:
		return fileops_remove(c, m);
	case AP_T_CWAIT:
		return exec_clone_wait(c, m);
	default:
		return conn_error(c, ERR_INVALID, "not a request frame");
	}
}

/* Ends the connection so that the worker reads our last frame: closing with its unread
 * bytes in our buffer (a refused write's data) would send a reset that can destroy the
 * error frame before it is read. So: no more from us, then read until its EOF (bounded). */
static void linger_close(int fd)
{
	struct agentwire_wait w = { agentwire_now_ms() + 2000, NULL, NULL };
	unsigned char b[4096];

	if (fd < 0)
		return;
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 2048; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = w.deadline_ms - agentwire_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) <= 0 || recv(fd, b, sizeof(b), 0) <= 0)
			break;
	}
	close(fd);
}

void conn_serve(int fd, const struct agent_cfg *cfg)
{
	struct conn c = { .fd = fd, .stream = 1, .cfg = cfg };
	struct ap_msg *m = malloc(sizeof(*m));
	struct err e = { .msg = "" };
	int one = 1, rc;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c.buf = malloc(AP_REQ_MAX);
	if (!m || !c.buf) {
		conn_error(&c, ERR_NOMEM, "agent out of memory");
		goto out;
	}
	if ((rc = handshake(&c, &e))) {
		if (rc != ERR_FAIL || e.msg[0])
			conn_error(&c, rc, e.msg);
		goto out;
	}
	serve_request(&c, m);
out:
	linger_close(c.fd);
	free(m);
	free(c.buf);
}
