/* agent.h: sandboxd-agent's internal modules (README "The agent"). The program runs inside a
 * sandbox as its user; main.c accepts connections and forks one handler per connection
 * (conn.c), which authenticates the worker and serves one request: an exec (run.c, the
 * tree ended through tree.c), a detached exec's output and status (detached.c), or a file
 * operation (fileops.c). Every handler is a child subreaper, so the tree of the exec it
 * supervises stays its descendants whatever they do (setsid, double forks). */
#ifndef SANDBOXD_AGENT_H
#define SANDBOXD_AGENT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sandboxd/common/agentproto.h"
#include "sandboxd/common/err.h"

#define AGENT_IO_MS 30000              /* a peer that does not read or write this long is gone */
#define AGENT_HANDSHAKE_MS 10000
#define AGENT_EXEC_MAX_MS (24LL * 3600 * 1000)
#define AGENT_GRACE_MS 5000            /* SIGTERM, then SIGKILL this much later */
#define AGENT_DRAIN_MS 200             /* output read after a killed tree ended */
#define AGENT_FILE_MAX (8ULL << 30)
#define AGENT_LIST_MAX 10000
#define AGENT_DETACHED_MAX 1024        /* detached execs kept in the directory */
#define AGENT_ID_LEN 27                /* "ex_" + 24 hex */

struct agent_cfg {
	const char *key_path;          /* the per-sandbox key; read for every connection */
	const char *dir;               /* detached execs' output and status */
	uint64_t detach_cap;           /* bytes of output kept per detached stream */
	int max_conns;
};

/* One connection being served. */
struct conn {
	int fd;
	uint32_t stream;               /* the request's */
	const struct agent_cfg *cfg;
	unsigned char *buf;            /* AP_REQ_MAX bytes, for frames read */
};

/* conn.c */
void conn_serve(int fd, const struct agent_cfg *cfg);
/* Sends ERROR {code, msg} on c's stream; the connection is over after it. */
void conn_error(struct conn *c, int code, const char *msg);

/* Where a running exec's output goes, and how its end is told. */
struct run_sink {
	int (*output)(void *arg, int stream, const char *p, size_t n);   /* 1 stdout, 2 stderr */
	void *arg;
	int cancel_fd;                 /* readable (data or EOF): end the tree; -1: none */
};

struct run_result {
	int exit_code, signal, timed_out, killed;
	long long duration_ms;
};

/* run.c: validates and starts the exec m describes (EXEC's fields) as a child of this
 * process; *pid its pid. ERR_INVALID for the request, ERR_NOTFOUND / ERR_NOTDIR /
 * ERR_DENIED for its working directory, ERR_FAIL when it could not start. */
int run_start(const struct ap_msg *m, pid_t *pid, int fds[2], struct err *e)
	__attribute__((warn_unused_result));
/* Supervises the started exec until it ends (its output to s), or past timeout_ms or on
 * cancel until its whole tree is gone. sigfd: a signalfd for SIGCHLD and SIGUSR1 (a kill
 * request, its signal number in ssi_int). */
void run_supervise(pid_t pid, int fds[2], int sigfd, long long timeout_ms,
		   const struct run_sink *s, struct run_result *r);
/* A signalfd for SIGCHLD and SIGUSR1 (blocked first), or -1. */
int run_sigfd(void);

/* tree.c: sends sig to every descendant of this process; answers how many of them are
 * alive (not zombies). sig 0 only counts. */
int tree_signal(int sig);

/* exec.c: an attached exec: STARTED, output frames, EXIT; the connection's end is a
 * cancel. */
void exec_attached(struct conn *c, const struct ap_msg *m);
/* CWAIT: the clone's wait alone, END once it is done (agentproto.h). */
void exec_clone_wait(struct conn *c, const struct ap_msg *m);
/* The result's fields (EXIT's, DSTATUS's) into w. */
void agent_put_result(struct ap_enc *w, const struct run_result *r);

/* detached.c */
void detached_start(struct conn *c, const struct ap_msg *m);
void detached_read(struct conn *c, const struct ap_msg *m);
void detached_kill(struct conn *c, const struct ap_msg *m);

/* fileops.c */
void fileops_read(struct conn *c, const struct ap_msg *m);
void fileops_write(struct conn *c, const struct ap_msg *m);
void fileops_list(struct conn *c, const struct ap_msg *m);
void fileops_remove(struct conn *c, const struct ap_msg *m);

#endif
