/* exec.h: the exec service (SPEC.md §4 "Exec", "Detached exec"), without HTTP. A handler
 * turns a request into a struct exec_spec (exec_spec_parse), and runs it attached
 * (exec_run: output to a sink as it comes, the tree ended past the limit or when the
 * caller stops waiting) or detached (exec_detach_start, then exec_detach_read from any
 * worker on any host). What runs in the container is app/sandbox/sh/exec.sh or detach.sh; this is
 * where a second backend (an agent inside the sandbox) plugs in behind the same calls.
 *
 * Errors: 0, or an ERR_* code with e's message naming the problem: ERR_INVALID for the
 * caller's input (400), ERR_NOTFOUND / ERR_NOTDIR for a working directory that is missing
 * or not a directory, ERR_CANCELLED when the caller stopped waiting, ERR_DOCKER and
 * ERR_FAIL from the engine, ERR_DB, ERR_NOMEM. */
#ifndef SANDBOXD_EXEC_H
#define SANDBOXD_EXEC_H
#include <stdint.h>
#include <json-c/json.h>
#include "sandboxd/proto/capture.h"
#include "sandboxd/core/db.h"
#include "sandboxd/proto/dstream.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/pool.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/sandbox/secrets.h"

#define EXEC_DEFAULT_MS 600000
#define EXEC_MAX_MS 3600000
#define EXEC_GRACE_S 5             /* SIGTERM, then SIGKILL this much later */
#define EXEC_CMD_MAX (1 << 20)
#define EXEC_CWD_MAX 4096
#define EXEC_ENV_MAX_VARS 100
#define EXEC_ENV_VALUE_MAX 32768
#define EXEC_ID_LEN 27             /* "ex_" + 24 hex */

struct exec_spec {
	const char *cmd;           /* run as bash -c */
	const char *cwd;           /* as the caller gave it, or NULL */
	const char *workdir;       /* absolute: cwd under /workspace/repo, or that */
	const char **env;          /* NAME=value, NULL-terminated: the sandbox's, then the caller's */
	int64_t timeout_ms;
	int detach;
	/* Attached runs: through the sandbox's agent (SANDBOXD_AGENT), reached at its address
	 * on network (the sandbox's own: sandbox_network). The caller sets both; 0: Docker exec. */
	int agent;
	const char *network;
	char hold[64];             /* exec_mark_running: the hold it set, or "" */
	long long slot;            /* its exec_slots row (exec_slots.h), or 0 */
	/* The clone still runs: through the agent, which waits this long for it before the
	 * command starts (0: the clone is done). The working directory is then the agent's to
	 * check, after the wait. */
	int64_t clone_wait_ms;
};

/* Reads cmd, cwd, timeoutMs, detach and env from body into x (strings in pool memory).
 * repo is "owner/name", for the sandbox's environment; sec (NULL: none) the secrets the
 * sandbox asked for, which join its environment before the caller's env. */
int exec_spec_parse(struct pool *p, json_object *body, const struct sandbox *s,
		    const char *repo, const struct secrets_set *sec, struct exec_spec *x,
		    struct err *e) __attribute__((warn_unused_result));

/* A working directory the caller named: ERR_NOTFOUND when it is missing, ERR_NOTDIR when it
 * is not a directory (the engine would only say so inside the output stream). 0 without
 * one. */
int exec_check_workdir(const struct sandbox *s, const struct exec_spec *x, struct err *e)
	__attribute__((warn_unused_result));

/* A running exec counts as activity: the sandbox is held (busy_until) to the end of the
 * exec's limit and grace, and the idle deadline is the idle limit past that; committed at
 * once (any worker may look). x->hold keeps the hold when it is this exec's. */
int exec_mark_running(struct db *db, const struct sandbox *s, struct exec_spec *x,
		      int idle_timeout, struct err *e) __attribute__((warn_unused_result));
/* An attached exec that ended gives its hold back (when no longer exec holds longer), so
 * that the next call counts the idle limit from now. */
void exec_mark_done(struct db *db, const struct sandbox *s, const struct exec_spec *x);

/* The sandbox's own token (*out), read from its clone's git config and checked against the
 * database (cached per worker), for masking; *out NULL when the config holds none of its
 * own (the user may rewrite it). Fails when it cannot tell: output that could not be masked
 * must not be shown. */
int exec_token(struct db *db, const struct sandbox *s, const char **out, struct err *e)
	__attribute__((warn_unused_result));
/* The same, the config read through the agent when x->agent (x may be NULL), else (or when
 * that fails) through Docker exec. */
int exec_token_for(struct db *db, const struct sandbox *s, const struct exec_spec *x,
		   const char **out, struct err *e) __attribute__((warn_unused_result));

/* c set up with the default caps, the token's forms and the secrets' values registered
 * (token and sec may be NULL). On failure c holds nothing. */
int exec_capture_init(struct capture *c, const char *token, const struct secrets_set *sec,
		      struct err *e) __attribute__((warn_unused_result));

/* Where an attached run's output goes, and how it learns that its caller stopped waiting
 * (polled at least once a second; non-zero ends the run: ERR_CANCELLED). */
struct exec_hooks {
	/* Called once the engine took the exec, before it starts (NULL: none): where a
	 * streamed answer begins. Non-zero: ERR_CANCELLED, nothing ran. */
	int (*started)(void *arg);
	void *started_arg;
	dstream_fn sink;
	void *sink_arg;
	int (*cancel)(void *arg);
	void *cancel_arg;
	/* Called once the agent started the command (NULL: none), with the agent's connection:
	 * 0 when the caller handed the rest of the run to someone else (the holder), after
	 * which exec_run returns at once with out->handed set; non-zero: the run goes on here. */
	int (*handover)(void *arg, int agent_fd);
	void *handover_arg;
	int handover_after_ms;     /* agent_client.h: a run that ends within it stays here */
	int handover_at_output;    /* and output first ends that wait (a stream) */
};

struct exec_result {
	int handed;                /* the rest of the run is the holder's (hooks' handover) */
	int exit_code;             /* 124 past the limit */
	int timed_out;
	long long duration_ms;
	const char *backend;       /* "agent" or "docker": what ran it (for the audit row) */
	char agent_error[256];     /* why the agent did not take it; "" otherwise */
	int agent_code;            /* its code: ERR_LIMIT when the agent was busy */
	/* x->clone_wait_ms and the agent could not take it: nothing ran, and the caller waits
	 * for the clone itself before it runs x again without the wait (Docker exec cannot). */
	int clone_pending;
};

/* Whether x must run through s's agent and nowhere else: the agent is on and s has one
 * (decision 0086). */
int exec_agent_only(const struct sandbox *s, const struct exec_spec *x)
	__attribute__((warn_unused_result));
/* The refusal when s's agent did not take an exec (code and why from the agent client):
 * 429 "agent busy: ..." (ERR_LIMIT) or 502 "the sandbox's agent cannot be reached: ...". */
int exec_agent_refusal(const struct sandbox *s, int code, const char *why, struct err *e)
	__attribute__((warn_unused_result));

/* Runs x attached in s's container. When the call returns, the command has ended, or its
 * tree is being ended (cancelled: the container side reads EOF and does it). With x->agent,
 * through the sandbox's agent; when it cannot be reached or refuses before the command
 * started (no address, connection refused, no answer within SBAGENT_CONNECT_MS, a failed
 * handshake, garbage, busy): exec_agent_refusal's 429 or 502, never Docker exec, unless s
 * has no agent key (made before the agent: then Docker exec, out->agent_error saying why,
 * as with the agent off). Once the
 * agent started the command, its failure is the call's (ERR_FAIL, "the sandbox's agent
 * ..."): the command is never run twice. With x->clone_wait_ms the agent waits for the
 * clone first; where Docker exec would have to run it, out->clone_pending instead. */
int exec_run(const struct sandbox *s, const struct exec_spec *x, const struct exec_hooks *h,
	     struct exec_result *out, struct err *e) __attribute__((warn_unused_result));

/* The attached answer (SPEC.md §4 "Exec"): the exit, each stream's text (capture_finish),
 * the flags and counts. NULL on failure (e says why). */
json_object *exec_answer(const struct exec_result *res, struct capture *cap, struct err *e);
/* The last line of a streamed answer: exitCode, timedOut, durationMs. */
json_object *exec_stream_result(const struct exec_result *res);
/* exit_code, duration_ms and timed_out into an audit row's details. */
void exec_audit_result(json_object *details, const struct exec_result *res);

/* Starts x detached; id gets its exec id. With x->agent, through the sandbox's agent when
 * it can be reached (else Docker exec, out->agent_error saying why); once it was asked, its
 * answer is the call's. out gets only the backend and agent_error. */
int exec_detach_start(const struct sandbox *s, const struct exec_spec *x,
		      char id[EXEC_ID_LEN + 1], struct exec_result *out, struct err *e)
	__attribute__((warn_unused_result));

/* 1 when id has the shape of an exec id. */
int exec_id_valid(const char *id) __attribute__((warn_unused_result));

/* What GET …/execs/{execId} answers: the output of each stream written since the offsets
 * asked for (at most 1 MiB each), masked and decoded, and where to ask next. */
struct exec_output {
	int ended, exit_code, killed;
	long long duration_ms;
	struct buf text[2];        /* stdout, stderr; the caller releases them */
	uint64_t next[2];
	const char *backend;       /* "agent" or "docker": what kept it */
	char agent_error[256];     /* why the agent did not answer for it; "" otherwise */
};
/* want: the offsets asked for. With network (the sandbox network; NULL: Docker only), the
 * agent is asked first, then Docker. ERR_NOTFOUND: no such exec; ERR_INVALID: an offset
 * past the output (e names it). */
int exec_detach_read(struct db *db, const struct sandbox *s, const char *network,
		     const char *id, const struct secrets_set *sec, const uint64_t want[2],
		     struct exec_output *out, struct err *e) __attribute__((warn_unused_result));

/* A detached exec's state without its output (exec_procs.c, for the list). */
struct exec_state {
	int found;                 /* 0: the backend does not know it */
	int ended, exit_code, timed_out, killed;
	long long duration_ms;
};
/* The states of n detached execs of s that backend ("agent" or "docker", as their rows
 * say) holds, into out[i]; network: the sandbox network, for the agent's address. A 502
 * when the agent does not answer for one. */
int exec_detach_states(const struct sandbox *s, const char *network, const char *backend,
		       const char *const *ids, size_t n, struct exec_state *out, struct err *e)
	__attribute__((warn_unused_result));
/* Ends detached exec id's tree with sig (SIGTERM, SIGKILL, SIGINT or SIGHUP; any but KILL
 * followed by KILL 5 s later) through backend; returns once it was sent. The exec then
 * reads killed. 404 when the agent has no such exec, 502 when it does not answer. */
int exec_detach_kill(const struct sandbox *s, const char *network, const char *backend,
		     const char *id, int sig, struct err *e) __attribute__((warn_unused_result));

#endif
