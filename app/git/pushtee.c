/* pushtee.c: a push's body copied to the scanner process while it streams to git. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sandboxd/lib/log.h"
#include "sandboxd/git/pushtee.h"
#include "sandboxd/git/streamscan.h"
#include "sandboxd/common/banned.h"

#define PIPE_BYTES (1 << 20)  /* what the scanner may lag behind by (pipe-max-size's default) */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void pushtee_init(struct pushtee *t)
{
	t->pid = -1;
	t->body = t->done = t->records = -1;
	t->stuck_since = -1;
}

/* The scanner: the body on 0, its records on 3, the write end of "done" on 4, nothing
 * else; an empty environment (it needs nothing of ours). */
static void exec_scanner(const char *program, int body, int records, int done)
{
	char *argv[] = { (char *)STREAMSCAN_NAME, NULL }, *envp[] = { NULL };
	sigset_t none;

	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Out of the way of 0, 3 and 4 first: a source may sit on a target's number. */
	body = fcntl(body, F_DUPFD, 10);
	records = fcntl(records, F_DUPFD, 10);
	done = fcntl(done, F_DUPFD, 10);
	if (body < 0 || records < 0 || done < 0 || dup2(body, 0) < 0 || dup2(records, 3) < 0 ||
	    dup2(done, 4) < 0)
		_exit(127);
	closefrom(5);
	execve(program, argv, envp);
	_exit(127);
}

int pushtee_start(struct pushtee *t, const char *program, struct err *e)
{
	int in[2] = { -1, -1 }, done[2] = { -1, -1 };

	if (pipe2(in, O_CLOEXEC) || pipe2(done, O_CLOEXEC) ||
	    (t->records = memfd_create("sandboxd-scanned", MFD_CLOEXEC)) < 0) {
		err_set(e, ERR_FAIL, "the push's scanner: %s", strerror(errno));
		goto fail;
	}
	/* Best effort: a smaller pipe only lets the scanner go sooner. */
	(void)fcntl(in[1], F_SETPIPE_SZ, PIPE_BYTES);
	if ((t->pid = fork()) == 0)
		exec_scanner(program, in[0], t->records, done[1]);
	if (t->pid < 0) {
		err_set(e, ERR_FAIL, "the push's scanner: fork: %s", strerror(errno));
		goto fail;
	}
	close(in[0]);
	close(done[1]);
	t->body = in[1];
	t->done = done[0];
	fcntl(t->body, F_SETFL, O_NONBLOCK);
	return 0;
fail:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&done[0]);
	close_fd(&done[1]);
	close_fd(&t->records);
	t->pid = -1;
	return ERR_FAIL;
}

size_t pushtee_write(struct pushtee *t, const void *data, size_t n, int64_t now)
{
	ssize_t w;

	if (t->body < 0)
		return n;
	do
		w = write(t->body, data, n);
	while (w < 0 && errno == EINTR);
	if (w > 0) {
		t->stuck_since = -1;
		return (size_t)w;
	}
	if (w < 0 && errno == EAGAIN) {
		if (t->stuck_since < 0)
			t->stuck_since = now;
		if (now - t->stuck_since < PUSHTEE_STUCK_MS)
			return 0;
	}
	/* Gone (it stopped on something it does not read), or stuck: git is not held for it,
	 * and the hook scans what it did not report. */
	log_info("the push's scanner is let go (%s): the hook scans the rest",
		 w < 0 && errno != EAGAIN ? strerror(errno) : "it fell behind");
	close_fd(&t->body);
	return n;
}

void pushtee_end(struct pushtee *t)
{
	close_fd(&t->body);
}

long pushtee_count(const struct pushtee *t)
{
	struct stat st;

	if (t->records < 0 || fstat(t->records, &st))
		return 0;
	return (long)(st.st_size / (off_t)sizeof(struct packscan_blob));
}

void pushtee_finish(struct pushtee *t)
{
	close_fd(&t->body);
	close_fd(&t->done);
	close_fd(&t->records);
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		while (waitpid(t->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	t->pid = -1;
}
