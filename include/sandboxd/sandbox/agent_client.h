/* agent_client.h: the worker's side of sandboxd-agent (agentproto.h): connect to the agent
 * of one sandbox at its address on the sandbox network (as Docker's inspect reports it:
 * never a path or a name the container controls), prove the per-sandbox key and check the
 * agent's proof, then one request per connection. Nothing the agent sends is trusted:
 * every frame is bounded (AP_MSG_MAX) and decoded by agentproto, stream ids and sizes are
 * checked, error texts are cleaned to printable ASCII, error codes kept within ERR_*.
 * Output goes to the caller raw: capping, masking and U+FFFD stay the caller's (capture.h).
 *
 * Errors: 0, or an ERR_* code with e naming the problem: ERR_DENIED for a key refused
 * either way ("agent refused the connection: ..." / "agent failed to authenticate"),
 * ERR_FAIL for a connection that failed, closed or broke the protocol, ERR_CANCELLED when
 * the caller's cancel asked to stop, and whatever code the agent answered a request with
 * (ERR_NOTFOUND, ERR_NOTDIR, ERR_EXISTS for a directory, ERR_INVALID, ERR_DENIED,
 * ERR_TOOBIG, ERR_LIMIT), its words in e prefixed "agent: ". */
#ifndef SANDBOXD_AGENT_CLIENT_H
#define SANDBOXD_AGENT_CLIENT_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/agentproto.h"
#include "sandboxd/proto/dstream.h"
#include "sandboxd/common/err.h"
#include "sandboxd/sandbox/files.h"

#define AGENT_CLIENT_ID_MAX 64

/* One authenticated connection; agent_close releases it (safe on one never opened). */
struct agent_conn {
	int fd;                        /* -1 when closed */
	uint32_t stream;
	int io_ms;                     /* the longest wait for any one frame outside an exec */
	unsigned char *buf;            /* AP_HDR + AP_MSG_MAX bytes */
};

/* Connects to host (a numeric IPv4 address) at port within timeout_ms, and authenticates
 * both ways with key[0..key_len). c is closed on failure. */
int agent_connect(struct agent_conn *c, const char *host, int port, const unsigned char *key,
		  size_t key_len, int timeout_ms, struct err *e) __attribute__((warn_unused_result));
void agent_close(struct agent_conn *c);

/* An exec: cmd (bash -c) or argv (NULL-terminated), exactly env (NAME=value,
 * NULL-terminated; nothing else is inherited), cwd (absolute) or NULL, the limit. */
struct agent_exec_req {
	const char *cmd;
	const char *const *argv;
	const char *cwd;
	const char *const *env;
	int64_t timeout_ms;
	const struct ap_rlimit *rlimits;
	size_t n_rlimits;
	/* Non-NULL: the clone's state file, which the agent waits for (clone_wait_ms) before it
	 * starts the command (agentproto.h, EXEC's CLONE_WAIT). */
	const char *clone_state;
	int64_t clone_wait_ms;
};

/* The stream of a connection's one request (1 is the handshake's). */
#define AGENT_CLIENT_STREAM 2

struct agent_exec_hooks {
	int (*started)(void *arg);     /* non-zero: ERR_CANCELLED, the tree is ended */
	void *started_arg;
	dstream_fn sink;               /* DSTREAM_STDOUT / DSTREAM_STDERR bytes as they come */
	void *sink_arg;
	int (*cancel)(void *arg);      /* polled at least once a second */
	void *cancel_arg;
	/* After started (or, for an exec that waits for the clone, once it is sent, before
	 * STARTED): 0 when the caller handed the connection on (agent_exec returns at once,
	 * out->handed set); NULL or non-zero: agent_exec reads the run to its end. */
	int (*handover)(void *arg, int fd);
	void *handover_arg;
	/* How long, once STARTED, the run may take to be whole on the connection (peeked,
	 * never read) before the handover is called: a command that ends at once is read to
	 * its end here instead (0: hand over at once). With handover_at_output, output that
	 * comes first ends the wait: a stream's bytes must not wait for the run's end. */
	int handover_after_ms;
	int handover_at_output;
};

/* How an exec ended: exit_code is 128 + signal when a signal ended it. */
struct agent_exit {
	int exit_code, signal, timed_out, killed;
	int handed;                    /* the hooks' handover took the connection */
	long long duration_ms;
};

/* Runs r attached; returns once the agent reports its end (its tree ended past the limit).
 * A cancel closes the connection, which makes the agent end the tree. */
int agent_exec(struct agent_conn *c, const struct agent_exec_req *r,
	       const struct agent_exec_hooks *h, struct agent_exit *out, struct err *e)
	__attribute__((warn_unused_result));

/* An EXIT (or DSTATUS) frame's fields into x, each brought into its range. */
void agent_exit_take(const struct ap_msg *m, struct agent_exit *x);

/* Starts r detached; id gets the agent's exec id. */
int agent_detach_start(struct agent_conn *c, const struct agent_exec_req *r,
		       char id[AGENT_CLIENT_ID_MAX], struct err *e)
	__attribute__((warn_unused_result));

struct agent_dstatus {
	int running, lost;             /* lost: its supervisor died without a result */
	struct agent_exit x;
	uint64_t from[2];              /* where the bytes handed to the sink start */
	uint64_t next[2];              /* where to ask next */
	uint64_t total[2];             /* bytes written so far */
};
/* Output since want[0] (stdout) and want[1] (stderr), at most max bytes of each, to sink
 * (none for an offset past the output: from and next are then the total); ERR_NOTFOUND for
 * no such exec. */
int agent_detach_read(struct agent_conn *c, const char *id, const uint64_t want[2],
		      uint64_t max, dstream_fn sink, void *arg, struct agent_dstatus *out,
		      struct err *e) __attribute__((warn_unused_result));
/* sig: SIGTERM, SIGKILL, SIGINT or SIGHUP; any but KILL is followed by KILL 5 s later. */
int agent_detach_kill(struct agent_conn *c, const char *id, int sig, struct err *e)
	__attribute__((warn_unused_result));

/* Sends CWAIT: the agent waits up to wait_ms for the clone's state file (state) to say
 * how the clone ended, and answers then (agentproto.h). Only the sending: the reader of
 * the answer is the holder, which parks a call on it. */
int agent_clone_wait_send(struct agent_conn *c, const char *state, int64_t wait_ms,
			  struct err *e) __attribute__((warn_unused_result));

/* Reads the file at path (absolute; a final symbolic link is refused) of at most limit
 * bytes into sink. */
int agent_file_read(struct agent_conn *c, const char *path, uint64_t limit,
		    const struct files_sink *sink, struct err *e)
	__attribute__((warn_unused_result));
/* Writes src's bytes at path with mode, creating its parents; the file appears whole
 * (written beside it, renamed into place) or not at all. A source that ends short:
 * ERR_INVALID "the body ended before its length" (the connection is then unusable). */
int agent_file_write(struct agent_conn *c, const char *path, unsigned mode,
		     struct files_source *src, struct err *e)
	__attribute__((warn_unused_result));
/* One listed entry: its absolute path, type (1 file, 2 dir, 3 symlink, 4 other), size,
 * mode, mtime. Non-zero stops the listing with that code. */
struct agent_entry {
	const char *path;
	int type;
	uint64_t size;
	unsigned mode;
	int64_t mtime;
};
typedef int (*agent_entry_fn)(void *arg, const struct agent_entry *ent);
/* Lists path (a directory) to depth 1..8, at most 10,000 entries (*truncated past them). */
int agent_file_list(struct agent_conn *c, const char *path, int depth, agent_entry_fn fn,
		    void *arg, int *truncated, struct err *e) __attribute__((warn_unused_result));
/* Removes path (a directory only with recursive); ERR_EXISTS for a directory not empty. */
int agent_file_remove(struct agent_conn *c, const char *path, int recursive, struct err *e)
	__attribute__((warn_unused_result));

#endif
