/* exec.c: an attached exec over its connection: STARTED, STDOUT/STDERR frames as the
 * output comes, EXIT. Anything from the worker after the request (or its closing the
 * connection) ends the tree: the worker stopped waiting. */
#include <sys/socket.h>
#include <unistd.h>
#include "agent.h"
#include "sandboxd/agentwire.h"
#include "sandboxd/banned.h"

static int to_conn(void *arg, int stream, const char *p, size_t n)
{
	struct conn *c = arg;

	return agentwire_send_raw(c->fd, stream == 1 ? AP_T_STDOUT : AP_T_STDERR, c->stream, p,
				  n, AGENT_IO_MS, NULL);
}

void agent_put_result(struct ap_enc *w, const struct run_result *r)
{
	agentproto_put_num(w, AP_F_CODE, (uint64_t)(int64_t)r->exit_code);
	agentproto_put_num(w, AP_F_SIGNAL, (uint64_t)r->signal);
	agentproto_put_num(w, AP_F_TIMEDOUT, (uint64_t)r->timed_out);
	agentproto_put_num(w, AP_F_KILLED, (uint64_t)r->killed);
	agentproto_put_num(w, AP_F_DURATION, (uint64_t)r->duration_ms);
}

void exec_attached(struct conn *c, const struct ap_msg *m)
{
	unsigned char b[AP_HDR + 256];
	struct run_sink s = { to_conn, c, c->fd };
	struct run_result r;
	struct err e = { .msg = "" };
	struct ap_enc w;
	int fds[2], sigfd = run_sigfd(), rc;
	pid_t pid;

	if (sigfd < 0)
		return conn_error(c, ERR_FAIL, "agent: signalfd failed");
	if ((rc = run_start(m, &pid, fds, &e))) {
		close(sigfd);
		return conn_error(c, rc, e.msg);
	}
	agentproto_enc_init(&w, b, sizeof(b), AP_T_STARTED, c->stream);
	agentproto_put_num(&w, AP_F_PID, (uint64_t)pid);
	/* A worker gone already shows as the connection's end: a cancel. */
	if (agentwire_send(c->fd, &w, AGENT_IO_MS, NULL))
		shutdown(c->fd, SHUT_RDWR);
	run_supervise(pid, fds, sigfd, (long long)m->num[AP_F_TIMEOUT], &s, &r);
	close(sigfd);
	agentproto_enc_init(&w, b, sizeof(b), AP_T_EXIT, c->stream);
	agent_put_result(&w, &r);
	if (agentwire_send(c->fd, &w, AGENT_IO_MS, NULL))
		return;                    /* the worker is gone; the tree ended with it */
}
