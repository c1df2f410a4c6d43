/* run.c: one exec, forked and supervised: output as it comes, the time limit, a cancel or
 * kill ending the whole tree (SIGTERM, then SIGKILL AGENT_GRACE_MS later, until nothing of
 * it is alive), the exit status. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "agent.h"
#include "sandboxd/common/agentwire.h"
#include "sandboxd/common/banned.h"

int run_sigfd(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigaddset(&s, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &s, NULL))
		return -1;
	return signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int validate(const struct ap_msg *m, struct err *e)
{
	if (!!m->has[AP_F_CMD] == !!m->has[AP_F_ARG])
		return err_set(e, ERR_INVALID, "an exec needs either cmd or argv");
	if (m->num[AP_F_TIMEOUT] < 1 || m->num[AP_F_TIMEOUT] > (uint64_t)AGENT_EXEC_MAX_MS)
		return err_set(e, ERR_INVALID, "timeout must be 1..%lld ms", AGENT_EXEC_MAX_MS);
	if (m->has[AP_F_CWD] && m->str[AP_F_CWD][0] != '/')
		return err_set(e, ERR_INVALID, "cwd must be absolute");
	for (unsigned i = 0; i < m->has[AP_F_ENV]; i++)
		if (!strchr(m->env[i], '=') || m->env[i][0] == '=')
			return err_set(e, ERR_INVALID, "env entry %u is not NAME=value", i);
	for (unsigned i = 0; i < m->has[AP_F_RLIMIT]; i++)
		if (m->rlim[i].resource >= RLIM_NLIMITS || m->rlim[i].cur > m->rlim[i].max)
			return err_set(e, ERR_INVALID, "rlimit %u is not valid", i);
	return 0;
}

/* PATH from the exec's own environment (nothing is inherited). */
static const char *env_path(const struct ap_msg *m)
{
	for (unsigned i = 0; i < m->has[AP_F_ENV]; i++)
		if (!strncmp(m->env[i], "PATH=", 5))
			return m->env[i] + 5;
	return "/usr/local/bin:/usr/bin:/bin";
}

static void exec_argv(const struct ap_msg *m)
{
	char *const *env = (char *const *)m->env;
	const char *p = env_path(m), *name = m->argv[0];
	char path[AP_PATH_MAX + 256];

	if (strchr(name, '/')) {
		execve(name, (char *const *)m->argv, env);
		return;
	}
	while (*p) {
		size_t n = strcspn(p, ":");

		if (n && n < AP_PATH_MAX) {
			snprintf(path, sizeof(path), "%.*s/%s", (int)n, p, name);
			execve(path, (char *const *)m->argv, env);
		}
		p += n + (p[n] == ':');
	}
}

/* Closes every descriptor from 3 up but keep: the command inherits only its three. */
static void close_others(int keep)
{
	if (keep > 3)
		syscall(SYS_close_range, 3, keep - 1, 0);
	if (syscall(SYS_close_range, keep + 1, ~0U, 0))
		for (int fd = keep + 1; fd < 1024; fd++)    /* a kernel before 5.9 */
			close(fd);
}

/* In the child: never returns. Failures go to errfd as {stage, errno}. */
static void child(const struct ap_msg *m, const int out[2], const int err[2], int errfd)
{
	const char *bash[] = { "bash", "-c", m->str[AP_F_CMD], NULL };
	sigset_t none;
	int msg[2] = { 0, 0 }, fd;

	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Every signal as a fresh process has it: the agent was started in the background by
	 * a shell (SIGINT and SIGQUIT ignored, which exec keeps), and ignores SIGPIPE itself;
	 * a command must die of the INT that a kill sends it. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
		goto fail;
	close_others(errfd);
	for (unsigned i = 0; i < m->has[AP_F_RLIMIT]; i++) {
		struct rlimit r = { m->rlim[i].cur, m->rlim[i].max };

		if (setrlimit((int)m->rlim[i].resource, &r))
			goto fail;
	}
	msg[0] = 1;
	if (m->has[AP_F_CWD] && chdir(m->str[AP_F_CWD]))
		goto fail;
	msg[0] = 2;
	if (m->has[AP_F_CMD])
		execve("/bin/bash", (char *const *)bash, (char *const *)m->env);
	else
		exec_argv(m);
fail:
	msg[1] = errno;
	if (write(errfd, msg, sizeof(msg)) < 0)
		_exit(127);
	_exit(127);
}

static int start_error(const int msg[2], const struct ap_msg *m, struct err *e)
{
	const char *cwd = m->has[AP_F_CWD] ? m->str[AP_F_CWD] : "";

	if (msg[0] == 1 && msg[1] == ENOENT)
		return err_set(e, ERR_NOTFOUND, "no such directory: %s", cwd);
	if (msg[0] == 1 && msg[1] == ENOTDIR)
		return err_set(e, ERR_NOTDIR, "not a directory: %s", cwd);
	if (msg[0] == 1 && msg[1] == EACCES)
		return err_set(e, ERR_DENIED, "permission denied: %s", cwd);
	return err_set(e, ERR_FAIL, "exec failed to start (%s): %s",
		       msg[0] == 2 ? "execve" : msg[0] == 1 ? "chdir" : "set-up", strerror(msg[1]));
}

int run_start(const struct ap_msg *m, pid_t *pid, int fds[2], struct err *e)
{
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, ep[2] = { -1, -1 }, msg[2], rc;
	ssize_t n;

	if ((rc = validate(m, e)))
		return rc;
	if (pipe2(out, O_CLOEXEC) || pipe2(errp, O_CLOEXEC) || pipe2(ep, O_CLOEXEC)) {
		rc = err_set(e, ERR_FAIL, "pipe: %s", strerror(errno));
		goto out;
	}
	if ((*pid = fork()) < 0) {
		rc = err_set(e, ERR_FAIL, "fork: %s", strerror(errno));
		goto out;
	}
	if (*pid == 0)
		child(m, out, errp, ep[1]);
	close(ep[1]);
	ep[1] = -1;
	/* EOF: execve succeeded (the pipe is close-on-exec); else why it did not. */
	while ((n = read(ep[0], msg, sizeof(msg))) < 0 && errno == EINTR)
		;
	if (n == sizeof(msg)) {
		waitpid(*pid, NULL, 0);
		rc = start_error(msg, m, e);
		goto out;
	}
	fds[0] = out[0];
	fds[1] = errp[0];
	out[0] = errp[0] = -1;
	rc = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	return rc;
}

/* What the supervision loop knows. */
struct sup {
	pid_t pid;
	int status, done;              /* the main process's wait status, once reaped */
	int fds[2];
	long long start, deadline, kill_at, drain_until;
	int killing;                   /* 1: the signal went out; KILL at kill_at */
	const struct run_sink *s;
	struct run_result *r;
};

/* Reaps every child that ended (orphans of the tree are ours too). */
static void reap(struct sup *u)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == u->pid) {
			u->status = st;
			u->done = 1;
		}
}

static void begin_kill(struct sup *u, int sig)
{
	if (u->killing)
		return;
	u->killing = 1;
	tree_signal(sig);
	u->kill_at = agentwire_now_ms() + (sig == SIGKILL ? 0 : AGENT_GRACE_MS);
}

/* Reads what one pipe has; closes it at EOF. */
static void pump(struct sup *u, int i)
{
	char b[AP_DATA_MAX];
	ssize_t n = read(u->fds[i], b, sizeof(b));

	if (n > 0) {
		/* A sink that fails has lost its reader: the tree ends as on a cancel. */
		if (u->s->output(u->s->arg, i + 1, b, (size_t)n)) {
			u->r->killed = 1;
			begin_kill(u, SIGTERM);
		}
		return;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	close(u->fds[i]);
	u->fds[i] = -1;
}

static void on_signals(struct sup *u, int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo == SIGUSR1 && !u->done) {
			int sig = si.ssi_int;

			if (sig != SIGTERM && sig != SIGKILL && sig != SIGINT && sig != SIGHUP)
				sig = SIGTERM;
			u->r->killed = 1;
			begin_kill(u, sig);
		}
	reap(u);
}

/* Past the limit, or the kill's grace: the next step, and how long poll may sleep. */
static int step(struct sup *u)
{
	long long now = agentwire_now_ms(), next = u->deadline;

	if (!u->killing && now >= u->deadline) {
		u->r->timed_out = 1;
		begin_kill(u, SIGTERM);
	}
	if (u->killing && now >= u->kill_at) {
		tree_signal(SIGKILL);
		next = now + 100;          /* until nothing of the tree is alive */
	} else if (u->killing) {
		next = u->kill_at;
	}
	/* Ended by itself: its output is read to EOF, as Docker exec does (a background job
	 * that keeps stdout open is still the command's, up to the limit). */
	return next - now < 0 ? 0 : next - now > 1000 ? 1000 : (int)(next - now);
}

/* Ended: the main process is reaped and (a kill) nothing of the tree is alive and its
 * output reached EOF or the drain time passed, or (a normal end) its output reached EOF;
 * background processes of a normal end that let go of it stay (servers for previews start
 * so); one that holds it past the limit is ended with the tree (124). */
static int ended(struct sup *u)
{
	if (!u->done)
		return 0;
	if (u->killing && !u->drain_until) {
		if (tree_signal(0))
			return 0;
		u->drain_until = agentwire_now_ms() + AGENT_DRAIN_MS;
	}
	return (u->fds[0] < 0 && u->fds[1] < 0) ||
	       (u->drain_until && agentwire_now_ms() >= u->drain_until);
}

void run_supervise(pid_t pid, int fds[2], int sigfd, long long timeout_ms,
		   const struct run_sink *s, struct run_result *r)
{
	struct sup u = { .pid = pid, .fds = { fds[0], fds[1] }, .s = s, .r = r };

	memset(r, 0, sizeof(*r));
	u.start = agentwire_now_ms();
	u.deadline = u.start + timeout_ms;
	for (;;) {
		struct pollfd p[4] = { { u.fds[0], POLLIN, 0 }, { u.fds[1], POLLIN, 0 },
				       { sigfd, POLLIN, 0 }, { u.killing ? -1 : s->cancel_fd,
							      POLLIN, 0 } };
		int wait_ms = step(&u);

		if (ended(&u))
			break;
		if (poll(p, 4, wait_ms) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++)
			if (p[i].revents && u.fds[i] >= 0)
				pump(&u, i);
		if (p[2].revents)
			on_signals(&u, sigfd);
		if (p[3].revents) {
			r->killed = 1;
			begin_kill(&u, SIGTERM);
		}
	}
	for (int i = 0; i < 2; i++)
		if (u.fds[i] >= 0)
			close(u.fds[i]);
	r->duration_ms = agentwire_now_ms() - u.start;
	r->signal = WIFSIGNALED(u.status) ? WTERMSIG(u.status) : 0;
	r->exit_code = WIFEXITED(u.status) ? WEXITSTATUS(u.status) : 128 + r->signal;
}
