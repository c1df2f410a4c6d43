/* exec.c: an attached exec over its connection: STARTED, STDOUT/STDERR frames as the
 * output comes, EXIT. Anything from the worker after the request (or its closing the
 * connection) ends the tree: the worker stopped waiting. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>
#include "agent.h"
#include "sandboxd/common/agentwire.h"
#include "sandboxd/common/banned.h"

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

/* Reads at most n - 1 bytes of path into out (NUL-terminated); its length, -1 when none. */
static ssize_t read_small(const char *path, char *out, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t got;

	if (fd < 0)
		return -1;
	got = read(fd, out, n - 1);
	close(fd);
	out[got > 0 ? got : 0] = 0;
	return got;
}

/* The last non-empty line of the clone's log (clone.log beside its state file), cut to fit
 * out: why it failed, as the service words it. */
static void clone_error(const char *state, char *out, size_t n)
{
	char path[AP_PATH_MAX + 16], tail[1024];
	const char *slash = strrchr(state, '/');
	int fd;

	snprintf(out, n, "unknown error");
	snprintf(path, sizeof(path), "%.*s/clone.log", slash ? (int)(slash - state) : 0, state);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return;
	off_t end = lseek(fd, 0, SEEK_END);
	ssize_t got = pread(fd, tail, sizeof(tail) - 1, end > (off_t)sizeof(tail) - 1
						      ? end - (off_t)sizeof(tail) + 1 : 0);
	close(fd);
	if (got <= 0)
		return;
	tail[got] = 0;
	while (got > 0 && (tail[got - 1] == '\n' || tail[got - 1] == '\r'))
		tail[--got] = 0;
	char *line = strrchr(tail, '\n');
	line = line ? line + 1 : tail;
	if (*line)
		agentproto_clean_text(out, n, line);
}

/* A watch on the directory of path for files written or moved in (clone.sh writes the
 * state file once), so that the wait wakes when it appears; -1 without inotify. */
static int watch_dir(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(dir) ||
	    (fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (inotify_add_watch(fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The state file read: 0 done, 1 the ERROR sent (failed, or the time is up), 2 not yet. */
static int clone_look(struct conn *c, const char *path, long long until)
{
	char state[16], why[400], msg[440];

	if (read_small(path, state, sizeof(state)) > 0) {
		if (!strncmp(state, "done", 4))
			return 0;
		if (!strncmp(state, "failed", 6)) {
			clone_error(path, why, sizeof(why));
			snprintf(msg, sizeof(msg), "clone failed: %s", why);
			conn_error(c, ERR_EXISTS, msg);
			return 1;
		}
	}
	if (agentwire_now_ms() >= until) {
		conn_error(c, ERR_EXISTS, "the clone is still running; try again");
		return 1;
	}
	return 2;
}

/* The wait of an EXEC with CLONE_WAIT (agentproto.h): 0 once the clone is done, else the
 * ERROR sent (1). The file is read again as soon as its directory changes (and every
 * 100 ms all the same; every 10 ms without inotify); the worker closing or writing ends
 * it. */
static int wait_clone(struct conn *c, const struct ap_msg *m)
{
	long long until = agentwire_now_ms() + (long long)m->num[AP_F_CLONE_WAIT];
	int w, rc;

	if (!m->has[AP_F_PATH] || m->str[AP_F_PATH][0] != '/') {
		conn_error(c, ERR_INVALID, "agent: a clone wait needs the state file's path");
		return 1;
	}
	w = watch_dir(m->str[AP_F_PATH]);
	while ((rc = clone_look(c, m->str[AP_F_PATH], until)) == 2) {
		struct pollfd p[2] = { { c->fd, POLLIN, 0 }, { w, POLLIN, 0 } };
		char events[4096];

		if (poll(p, w >= 0 ? 2 : 1, w >= 0 ? 100 : 10) > 0 && p[0].revents) {
			rc = 1;  /* the worker is gone (or broke the protocol): nothing to run */
			break;
		}
		/* Which file changed does not matter: the state file is read again. */
		while (w >= 0 && read(w, events, sizeof(events)) > 0)
			;
	}
	if (w >= 0)
		close(w);
	return rc;
}

void exec_clone_wait(struct conn *c, const struct ap_msg *m)
{
	unsigned char b[AP_HDR + 16];
	struct ap_enc w;

	if (wait_clone(c, m))
		return;
	agentproto_enc_init(&w, b, sizeof(b), AP_T_END, c->stream);
	if (agentwire_send(c->fd, &w, AGENT_IO_MS, NULL))
		return;                    /* the holder is gone: nothing waits for the answer */
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
	if (m->has[AP_F_CLONE_WAIT] && wait_clone(c, m)) {
		close(sigfd);
		return;
	}
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
