/* detached.c: detached execs. Each has a directory <dir>/<id>/ that this agent owns: a
 * status file (written whole and renamed into place: running with its supervisor's pid,
 * then its result) and its output in segment files "<stream>.<n>", each a quarter of the
 * cap; when a fifth starts, the oldest goes, so at most the cap is kept per stream and the
 * oldest output is dropped first. Offsets count every byte the command wrote, so a reader
 * asking for dropped bytes gets the oldest kept ones and learns where they start. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "agent.h"
#include "sandboxd/common/agentwire.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

enum { ST_RUNNING = 0, ST_EXITED = 1, ST_LOST = 2 };

struct status {
	int state, sup;
	long long start_ms;
	struct run_result r;
};

struct segs {
	int dirfd;
	uint64_t seg;                  /* bytes per segment */
	uint64_t written[2];
	int fd[2];
};

static int id_valid(const char *id)
{
	return strlen(id) == AGENT_ID_LEN && strncmp(id, "ex_", 3) == 0 &&
	       hex_is(id + 3, AGENT_ID_LEN - 3);
}

static int status_write(int dirfd, const struct status *s)
{
	char b[512];
	int n = snprintf(b, sizeof(b), "state=%d\nsup=%d\nstart=%lld\ncode=%d\nsignal=%d\n"
			 "timedout=%d\nkilled=%d\nduration=%lld\n", s->state, s->sup,
			 s->start_ms, s->r.exit_code, s->r.signal, s->r.timed_out, s->r.killed,
			 s->r.duration_ms);
	int fd = openat(dirfd, "status.new", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
			O_CLOEXEC, 0600), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, b, (size_t)n) == n;
	close(fd);
	return ok ? renameat(dirfd, "status.new", dirfd, "status") : -1;
}

/* The status file: every key bounded, an unknown one ignored. */
static int status_read(int dirfd, struct status *s)
{
	char b[512], *line, *save = NULL;
	int fd = openat(dirfd, "status", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	memset(s, 0, sizeof(*s));
	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	for (line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long v = strtoll(strchr(line, '=') ? strchr(line, '=') + 1 : "", NULL, 10);
		int iv = v < -1000000 || v > 1000000000 ? 0 : (int)v;

		if (!strncmp(line, "state=", 6))
			s->state = iv;
		else if (!strncmp(line, "sup=", 4))
			s->sup = iv;
		else if (!strncmp(line, "start=", 6))
			s->start_ms = v;
		else if (!strncmp(line, "code=", 5))
			s->r.exit_code = iv;
		else if (!strncmp(line, "signal=", 7))
			s->r.signal = iv;
		else if (!strncmp(line, "timedout=", 9))
			s->r.timed_out = iv;
		else if (!strncmp(line, "killed=", 7))
			s->r.killed = iv;
		else if (!strncmp(line, "duration=", 9))
			s->r.duration_ms = v;
	}
	/* A supervisor that is gone without writing its result (the agent was killed). */
	if (s->state == ST_RUNNING && (s->sup <= 0 || (kill(s->sup, 0) && errno == ESRCH)))
		s->state = ST_LOST;
	if (s->state == ST_RUNNING)
		s->r.duration_ms = agentwire_now_ms() - s->start_ms;
	return 0;
}

/* Appends to stream i's segments, starting a new one at each boundary. */
static int seg_output(void *arg, int stream, const char *p, size_t n)
{
	struct segs *g = arg;
	int i = stream - 1;

	while (n) {
		uint64_t k = g->written[i] / g->seg, room = g->seg - g->written[i] % g->seg;
		size_t take = n < room ? n : (size_t)room;
		char name[48];
		ssize_t w;

		if (g->fd[i] < 0 || g->written[i] % g->seg == 0) {
			if (g->fd[i] >= 0)
				close(g->fd[i]);
			snprintf(name, sizeof(name), "%d.%llu", stream, (unsigned long long)k);
			g->fd[i] = openat(g->dirfd, name, O_WRONLY | O_CREAT | O_APPEND |
					  O_NOFOLLOW | O_CLOEXEC, 0600);
			if (k >= 4) {
				snprintf(name, sizeof(name), "%d.%llu", stream,
					 (unsigned long long)(k - 4));
				unlinkat(g->dirfd, name, 0);
			}
		}
		/* A full disk loses output, never the exec: the count still moves on. */
		w = g->fd[i] >= 0 ? write(g->fd[i], p, take) : -1;
		(void)w;
		g->written[i] += take;
		p += take;
		n -= take;
	}
	return 0;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A new exec directory: its id in id, its fd, or -1 with e set. */
static int make_dir(const struct agent_cfg *cfg, char id[AGENT_ID_LEN + 1], struct err *e)
{
	unsigned char r[12];
	char path[AP_PATH_MAX + 64];
	int n = count_entries(cfg->dir), fd;

	if (n < 0)
		return err_set(e, ERR_FAIL, "agent: '%s': %s", cfg->dir, strerror(errno)), -1;
	if (n - 2 >= AGENT_DETACHED_MAX)
		return err_set(e, ERR_LIMIT, "too many detached execs (%d)", AGENT_DETACHED_MAX), -1;
	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return err_set(e, ERR_FAIL, "agent has no randomness"), -1;
	memcpy(id, "ex_", 3);
	hex_encode(id + 3, r, 12);
	snprintf(path, sizeof(path), "%s/%s", cfg->dir, id);
	if (mkdir(path, 0700) ||
	    (fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return err_set(e, ERR_FAIL, "agent: '%s': %s", path, strerror(errno)), -1;
	return fd;
}

void detached_start(struct conn *c, const struct ap_msg *m)
{
	unsigned char b[AP_HDR + 256];
	char id[AGENT_ID_LEN + 1];
	struct segs g = { .fd = { -1, -1 }, .seg = c->cfg->detach_cap / 4 };
	struct run_sink s = { seg_output, &g, -1 };
	struct status st = { .state = ST_RUNNING, .sup = getpid() };
	struct err e = { .msg = "" };
	struct ap_enc w;
	int fds[2], sigfd, rc;
	pid_t pid;

	if ((g.dirfd = make_dir(c->cfg, id, &e)) < 0)
		return conn_error(c, ERR_FAIL, e.msg);
	if ((sigfd = run_sigfd()) < 0 || (rc = run_start(m, &pid, fds, &e))) {
		conn_error(c, sigfd < 0 ? ERR_FAIL : rc, sigfd < 0 ? "agent: signalfd" : e.msg);
		goto out;
	}
	st.start_ms = agentwire_now_ms();
	if (status_write(g.dirfd, &st))
		st.sup = 0;                /* readers will see it lost; it still runs */
	agentproto_enc_init(&w, b, sizeof(b), AP_T_STARTED, c->stream);
	agentproto_put_num(&w, AP_F_PID, (uint64_t)pid);
	agentproto_put_str(&w, AP_F_ID, id);
	if (agentwire_send(c->fd, &w, AGENT_IO_MS, NULL)) {
		/* the worker went away: the exec runs on, as detached ones do */
	}
	close(c->fd);
	c->fd = -1;
	run_supervise(pid, fds, sigfd, (long long)m->num[AP_F_TIMEOUT], &s, &st.r);
	for (int i = 0; i < 2; i++)
		if (g.fd[i] >= 0)
			close(g.fd[i]);
	st.state = ST_EXITED;
	if (status_write(g.dirfd, &st)) {
		/* nobody to tell: readers will see it lost */
	}
out:
	if (sigfd >= 0)
		close(sigfd);
	close(g.dirfd);
}

/* Stream i's kept output: [*oldest, *total). */
static void seg_range(int dirfd, int stream, uint64_t seg, uint64_t *oldest, uint64_t *total)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	uint64_t lo = UINT64_MAX, hi = 0;
	struct stat st;
	char name[48];

	*oldest = *total = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);                  /* the dup shares the offset of the last scan */
	while ((de = readdir(d))) {
		char *end;
		unsigned long long k;

		if (de->d_name[0] != '0' + stream || de->d_name[1] != '.')
			continue;
		k = strtoull(de->d_name + 2, &end, 10);
		if (*end || k > UINT64_MAX / seg - 1)
			continue;
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	closedir(d);
	if (lo == UINT64_MAX)
		return;
	snprintf(name, sizeof(name), "%d.%llu", stream, (unsigned long long)hi);
	*oldest = lo * seg;
	*total = hi * seg + (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) ? 0 :
			     (uint64_t)st.st_size);
}

/* Sends stream's bytes [from, from + max) as frames of type; stops at what is there. */
static int seg_send(struct conn *c, int dirfd, int stream, uint64_t seg, uint64_t from,
		    uint64_t max)
{
	char b[AP_DATA_MAX], name[48];

	while (max) {
		uint64_t k = from / seg, in = from % seg;
		size_t want = max < sizeof(b) ? (size_t)max : sizeof(b);
		ssize_t n;
		int fd;

		snprintf(name, sizeof(name), "%d.%llu", stream, (unsigned long long)k);
		if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return 0;          /* dropped meanwhile, or not written yet */
		if (want > seg - in)
			want = (size_t)(seg - in);
		n = pread(fd, b, want, (off_t)in);
		close(fd);
		if (n <= 0)
			return 0;
		if (agentwire_send_raw(c->fd, stream == 1 ? AP_T_STDOUT : AP_T_STDERR, c->stream,
				       b, (size_t)n, AGENT_IO_MS, NULL))
			return -1;
		from += (uint64_t)n;
		max -= (uint64_t)n;
	}
	return 0;
}

/* The exec's directory from a request's ID, or -1 after answering the error. */
static int open_exec(struct conn *c, const struct ap_msg *m, struct status *st)
{
	char path[AP_PATH_MAX + 64], msg[128];
	int fd;

	snprintf(msg, sizeof(msg), "no such exec: %.40s", m->str[AP_F_ID]);
	if (!id_valid(m->str[AP_F_ID]))
		return conn_error(c, ERR_NOTFOUND, msg), -1;
	snprintf(path, sizeof(path), "%s/%s", c->cfg->dir, m->str[AP_F_ID]);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return conn_error(c, ERR_NOTFOUND, msg), -1;
	if (status_read(fd, st)) {
		close(fd);
		return conn_error(c, ERR_NOTFOUND, msg), -1;
	}
	return fd;
}

void detached_read(struct conn *c, const struct ap_msg *m)
{
	unsigned char b[AP_HDR + 256];
	uint64_t seg = c->cfg->detach_cap / 4, oldest[2], total[2], from[2], max;
	struct status st;
	struct ap_enc w;
	int fd;

	if ((fd = open_exec(c, m, &st)) < 0)
		return;
	max = m->num[AP_F_MAX] < 16u << 20 ? m->num[AP_F_MAX] : 16u << 20;
	for (int i = 0; i < 2; i++) {
		uint64_t want = m->num[i ? AP_F_OFF_ERR : AP_F_OFF_OUT];

		/* Status first: once it says exited, all the output is in the files. */
		seg_range(fd, i + 1, seg, &oldest[i], &total[i]);
		from[i] = want < oldest[i] ? oldest[i] : want > total[i] ? total[i] : want;
	}
	agentproto_enc_init(&w, b, sizeof(b), AP_T_DSTATUS, c->stream);
	agentproto_put_num(&w, AP_F_STATE, (uint64_t)st.state);
	agent_put_result(&w, &st.r);
	agentproto_put_num(&w, AP_F_OFF_OUT, from[0]);
	agentproto_put_num(&w, AP_F_OFF_ERR, from[1]);
	agentproto_put_num(&w, AP_F_TOTAL_OUT, total[0]);
	agentproto_put_num(&w, AP_F_TOTAL_ERR, total[1]);
	/* No more than the totals just counted: a running command writes on meanwhile, and
	 * the worker refuses bytes past the totals it was told. */
	if (!agentwire_send(c->fd, &w, AGENT_IO_MS, NULL) &&
	    !seg_send(c, fd, 1, seg, from[0], total[0] - from[0] < max ? total[0] - from[0] : max) &&
	    !seg_send(c, fd, 2, seg, from[1], total[1] - from[1] < max ? total[1] - from[1] : max)) {
		agentproto_enc_init(&w, b, sizeof(b), AP_T_END, c->stream);
		if (agentwire_send(c->fd, &w, AGENT_IO_MS, NULL)) {
			/* the worker is gone */
		}
	}
	close(fd);
}

void detached_kill(struct conn *c, const struct ap_msg *m)
{
	unsigned char b[AP_HDR];
	union sigval v = { .sival_int = (int)m->num[AP_F_SIGNAL] };
	struct status st;
	struct ap_enc w;
	int fd, sig = v.sival_int;

	if (sig != SIGTERM && sig != SIGKILL && sig != SIGINT && sig != SIGHUP)
		return conn_error(c, ERR_INVALID, "signal must be TERM, KILL, INT or HUP");
	if ((fd = open_exec(c, m, &st)) < 0)
		return;
	close(fd);
	/* The supervisor does the killing (it alone knows the tree and the grace period). */
	if (st.state == ST_RUNNING && sigqueue(st.sup, SIGUSR1, v))
		return conn_error(c, ERR_FAIL, "the exec's supervisor is gone");
	agentproto_enc_init(&w, b, sizeof(b), AP_T_END, c->stream);
	if (agentwire_send(c->fd, &w, AGENT_IO_MS, NULL)) {
		/* the worker is gone; the kill happened */
	}
}
