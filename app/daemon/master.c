/* master.c: prefork supervision. All signals are handled synchronously with sigtimedwait,
 * so there is no signal-handler state to reason about. */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcgiapp.h>
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/holder/holder.h"
#include "sandboxd/daemon/master.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/daemon/reaper.h"
#include "sandboxd/daemon/worker.h"
#include "sandboxd/common/banned.h"

#define BACKOFF_MAX_MS 30000
#define YOUNG_MS 2000   /* a worker that dies younger than this is crashing, not finishing */

struct slot {
	pid_t pid;          /* 0: empty */
	long started_ms;
	long restart_at_ms; /* when an empty slot may be filled again */
	long backoff_ms;
	int mslot;          /* its process's metrics slot (metrics.h) */
};

struct retiree {
	pid_t pid;
	int mslot;
	struct retiree *next;
};

static int open_socket(const struct config *cfg, const char *path)
{
	mode_t mode = cfg->socket_group[0] ? 0660 : 0666;
	int fd;

	/* A socket file left by a previous run would make bind fail. */
	if (unlink(path) && errno != ENOENT) {
		log_error("cannot remove stale socket %s: %s", path, strerror(errno));
		return -1;
	}
	fd = FCGX_OpenSocket(path, 1024);
	if (fd < 0) {
		log_error("cannot listen on %s", path);
		return -1;
	}
	if (cfg->socket_group[0]) {
		struct group *g = getgrnam(cfg->socket_group);
		if (!g || chown(path, (uid_t)-1, g->gr_gid)) {
			log_error("cannot give %s to group %s", path, cfg->socket_group);
			close(fd);
			return -1;
		}
	}
	if (chmod(path, mode)) {
		log_error("cannot chmod %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The holder's socket: SOCK_SEQPACKET, so that a hand-over is one record, its descriptors
 * with it; only the service's user may connect. Opened here, before the forks: hand-overs
 * wait in its backlog while a holder restarts. */
static int open_holder_socket(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path) || (unlink(path) && errno != ENOENT)) {
		log_error("cannot use %s for the holder", path);
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || chmod(path, 0600) || listen(fd, 1024)) {
		log_error("cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

enum role { API_WORKER, GIT_WORKER, HOLDER, REAPER };

/* A worker on its socket, or the reaper (which needs none), counting into metrics slot
 * mslot. */
static pid_t spawn(const struct config *cfg, const int fds[3], const sigset_t *oldmask,
		   enum role role, int mslot)
{
	pid_t pid = fork();

	if (pid == 0) {
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		metrics_slot_use(mslot);
		if (role == REAPER || role == HOLDER) {
			close(fds[0]);
			close(fds[1]);
			if (role == HOLDER)
				_exit(holder_run(cfg, fds[2]));
			if (fds[2] >= 0)
				close(fds[2]);
			_exit(reaper_run(cfg));
		}
		if (fds[2] >= 0)
			close(fds[2]);
		/* Named apart, so that ps, pgrep and the tests tell the two pools apart. */
		if (role == GIT_WORKER)
			prctl(PR_SET_NAME, "sandboxd-git");
		close(fds[role == API_WORKER ? 1 : 0]);
		_exit(worker_run(cfg, fds[role == API_WORKER ? 0 : 1]));
	}
	if (pid < 0)
		log_error("fork failed: %s", strerror(errno));
	return pid;
}

/* Every process but spare (0: none). */
static void signal_all(struct slot *slots, int n, struct retiree *old, int sig, pid_t spare)
{
	for (int i = 0; i < n; i++)
		if (slots[i].pid > 0 && slots[i].pid != spare) {
			kill(slots[i].pid, sig);
			metrics_slot_draining(slots[i].mslot);
		}
	for (; old; old = old->next)
		kill(old->pid, sig);
}

/* Records the death of pid; returns 1 if it was one of ours. */
static int reap(struct slot *slots, int n, struct retiree **old, pid_t pid, int status,
		int draining)
{
	long now = (long)clock_ms();

	for (struct retiree **p = old; *p; p = &(*p)->next) {
		if ((*p)->pid == pid) {
			struct retiree *dead = *p;
			*p = dead->next;
			metrics_slot_fold(dead->mslot);
			free(dead);
			return 1;
		}
	}
	for (int i = 0; i < n; i++) {
		if (slots[i].pid != pid)
			continue;
		slots[i].pid = 0;
		/* Reaped, so nothing writes its slot any more: its counts go to the retired slot
		 * before fill_slots can hand the slot to the next process. */
		metrics_slot_fold(slots[i].mslot);
		slots[i].mslot = 0;
		if (draining)
			return 1;
		if (now - slots[i].started_ms < YOUNG_MS)
			slots[i].backoff_ms = slots[i].backoff_ms
				? (slots[i].backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
									   : slots[i].backoff_ms * 2)
				: 100;
		else
			slots[i].backoff_ms = 0;
		slots[i].restart_at_ms = now + slots[i].backoff_ms;
		if (WIFSIGNALED(status))
			log_warn("worker %d killed by signal %d; restarting in %ld ms", (int)pid,
				 WTERMSIG(status), slots[i].backoff_ms);
		else
			log_warn("worker %d exited with %d; restarting in %ld ms", (int)pid,
				 WEXITSTATUS(status), slots[i].backoff_ms);
		return 1;
	}
	return 0;
}

static int alive(struct slot *slots, int n, struct retiree *old)
{
	int count = old != NULL;

	for (int i = 0; i < n; i++)
		count += slots[i].pid > 0;
	return count;
}

/* What the master keeps between turns of its loop. */
struct master {
	const struct config *cfg;
	sigset_t set, oldmask;      /* the signals it waits for; the mask workers get back */
	int fds[3];                 /* the API, the git and the holder's sockets (-1: none) */
	/* Slots: the API workers, the git workers, and last the reaper's, supervised alike.
	 * git has workers of its own: a sandbox's clone, or a push run by an exec, comes back
	 * through nginx while the exec holds an API worker; with one pool, as many such execs
	 * as workers would wait on each other until their time limits. */
	struct slot *slots;
	int n;
	struct retiree *old;        /* replaced workers still finishing their request */
	int draining;
	long last_term;
};

/* The sockets, the slots and the pid file; 0, or -1 (logged). */
static int master_open(struct master *m)
{
	const struct config *cfg = m->cfg;

	if (FCGX_Init() || (m->fds[0] = open_socket(cfg, cfg->socket_path)) < 0 ||
	    (m->fds[1] = open_socket(cfg, cfg->git_socket_path)) < 0 ||
	    (cfg->holder && (m->fds[2] = open_holder_socket(cfg->holder_socket)) < 0))
		return -1;
	if (!(m->slots = calloc((size_t)m->n, sizeof(*m->slots))))
		return -1;
	/* Before the first fork, so that every process shares it. Twice the processes: a
	 * SIGHUP starts a new process in each slot while the old ones finish; the extra slot
	 * is the retired one. Without it the service runs, /metrics answers 503. */
	struct err e = { .msg = "" };
	if (metrics_region_map(2 * m->n + 1, &e))
		log_error("%s: running without metrics", e.msg);
	if (boxuser_share())
		log_warn("the engine's user mode is kept per process: no shared page");
	if (cfg->pid_file[0]) {
		FILE *f = fopen(cfg->pid_file, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
			log_error("cannot write %s", cfg->pid_file);
			return -1;
		}
	}
	return 0;
}

/* Slot i's process: the API workers, the git workers, the holder (when on), the reaper. */
static enum role role_of(const struct master *m, int i)
{
	if (i == m->n - 1)
		return REAPER;
	if (i >= m->cfg->workers + m->cfg->git_workers)
		return HOLDER;
	return i < m->cfg->workers ? API_WORKER : GIT_WORKER;
}

/* Stopping, the holder goes last: while a worker lives it may still hand an exec over.
 * The holder's pid to spare, or 0 once no worker is left. */
static pid_t spare_holder(const struct master *m)
{
	pid_t holder = 0;
	int workers = m->old != NULL;

	for (int i = 0; i < m->n; i++) {
		if (m->slots[i].pid <= 0)
			continue;
		if (role_of(m, i) == HOLDER)
			holder = m->slots[i].pid;
		else if (role_of(m, i) == API_WORKER)
			workers = 1;
	}
	return workers ? holder : 0;
}

/* Fills the empty slots whose time has come; returns how long until the next one's. */
static long fill_slots(struct master *m, long now)
{
	long wait_ms = 1000;

	for (int i = 0; i < m->n; i++) {
		struct slot *s = &m->slots[i];

		if (s->pid == 0 && s->restart_at_ms <= now) {
			enum role role = role_of(m, i);
			s->mslot = metrics_slot_take(role == REAPER ? METRICS_POOL_REAPER
						     : role == HOLDER ? METRICS_POOL_HOLDER
						     : role == GIT_WORKER ? METRICS_POOL_GIT
						     : METRICS_POOL_API);
			s->pid = spawn(m->cfg, m->fds, &m->oldmask, role, s->mslot);
			s->started_ms = now;
			if (s->pid < 0) {
				s->pid = 0;
				metrics_slot_fold(s->mslot);
				s->mslot = 0;
				s->restart_at_ms = now + 1000;
			}
		}
		if (s->pid == 0 && s->restart_at_ms - now < wait_ms)
			wait_ms = s->restart_at_ms - now;
	}
	return wait_ms;
}

/* SIGHUP: every worker is asked to finish and its slot filled anew at once. */
static void replace_all(struct master *m)
{
	log_info("replacing workers");
	for (int i = 0; i < m->n; i++) {
		struct slot *s = &m->slots[i];

		if (s->pid <= 0)
			continue;
		struct retiree *t = malloc(sizeof(*t));
		if (!t)
			continue;
		t->pid = s->pid;
		t->mslot = s->mslot;
		metrics_slot_draining(s->mslot);
		t->next = m->old;
		m->old = t;
		kill(t->pid, SIGTERM);
		s->pid = 0;
		s->mslot = 0;
		s->restart_at_ms = 0;
		s->backoff_ms = 0;
	}
}

/* Waits up to wait_ms for a signal and acts on it. */
static void wait_signal(struct master *m, long wait_ms)
{
	struct timespec timeout;
	siginfo_t info;
	int sig, status;
	pid_t pid;

	if (wait_ms < 1)
		wait_ms = 1;
	timeout.tv_sec = wait_ms / 1000;
	timeout.tv_nsec = (wait_ms % 1000) * 1000000;
	sig = sigtimedwait(&m->set, &info, &timeout);
	if (sig == SIGCHLD || sig < 0) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			reap(m->slots, m->n, &m->old, pid, status, m->draining);
	} else if (sig == SIGTERM || sig == SIGINT) {
		if (!m->draining)
			log_info("draining: waiting for requests in flight");
		m->draining = 1;
		signal_all(m->slots, m->n, m->old, SIGTERM, spare_holder(m));
		m->last_term = (long)clock_ms();
	} else if (sig == SIGHUP && !m->draining) {
		replace_all(m);
	}
}

int master_run(const struct config *cfg)
{
	struct master m = { .cfg = cfg, .fds = { -1, -1, -1 },
			    .n = cfg->workers + cfg->git_workers + (cfg->holder ? 1 : 0) + 1 };
	int rc = 1;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&m.set);
	sigaddset(&m.set, SIGCHLD);
	sigaddset(&m.set, SIGTERM);
	sigaddset(&m.set, SIGINT);
	sigaddset(&m.set, SIGHUP);
	sigprocmask(SIG_BLOCK, &m.set, &m.oldmask);
	if (master_open(&m))
		goto out;
	log_info("listening on %s with %d workers, on %s with %d git workers, %s and a reaper",
		 cfg->socket_path, cfg->workers, cfg->git_socket_path, cfg->git_workers,
		 cfg->holder ? "the holder on its socket" : "no holder");

	for (;;) {
		long now = (long)clock_ms(), wait_ms = 1000;

		if (!m.draining) {
			wait_ms = fill_slots(&m, now);
		} else {
			if (!alive(m.slots, m.n, m.old))
				break;
			/* A worker can miss the first SIGTERM in the instant before it blocks in
			 * accept; repeating it is harmless and closes that window. */
			if (now - m.last_term >= 1000) {
				signal_all(m.slots, m.n, m.old, SIGTERM, spare_holder(&m));
				m.last_term = now;
			}
		}
		wait_signal(&m, wait_ms);
	}
	unlink(cfg->socket_path);
	unlink(cfg->git_socket_path);
	if (cfg->holder)
		unlink(cfg->holder_socket);
	if (cfg->pid_file[0])
		unlink(cfg->pid_file);
	log_info("stopped");
	rc = 0;
out:
	/* On a failed start the socket files stay, as they always have: the next start
	 * removes a stale one before it binds. */
	if (m.fds[0] >= 0)
		close(m.fds[0]);
	if (m.fds[1] >= 0)
		close(m.fds[1]);
	if (m.fds[2] >= 0)
		close(m.fds[2]);
	free(m.slots);
	return rc;
}
