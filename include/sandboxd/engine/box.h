/* box.h: the engine interface: every call the service makes of the engine its sandboxes
 * run on, in the engine's own terms (a box is one sandbox's container, or whatever the
 * engine runs it in). Docker is its first and only implementation (docker_box.c over
 * docker.h); docs/scaling.md maps each operation onto Kubernetes, the next one
 * (decision 0080). Nothing but app/engine/docker*.c and box.c (which names the kinds)
 * uses docker.h: `make lint` (deploy/check-layers.sh) refuses it.
 *
 * An implementation is a `struct engine_ops`, one table per kind of engine. A process
 * calls one engine at a time: engine.h's engine_use picks the engine of the sandbox at
 * hand, selects its kind's table (box_select) and points it at the engine (the table's
 * use); every box_* call below then goes there, until the next engine_use. A worker is single-threaded, so
 * this is process state, not a handle passed around.
 *
 * Every call returns 0 or an ERR_* code with struct err filled, the engine's own words
 * when it sent them, and takes a timeout in milliseconds covering the whole call (0: the
 * kind's default). Codes common to all: ERR_NOTFOUND (no such box, path or image),
 * ERR_EXISTS (a conflict: in use, not running), ERR_INVALID (the engine refused the
 * arguments), ERR_TOOBIG, ERR_NOMEM, ERR_DOCKER (the engine cannot be reached as
 * registered, or engine_use refused it: the message says why), ERR_FAIL (anything else:
 * no answer, a timeout, an answer that is not what the engine promises).
 *
 * Operations marked "without the agent" serve sandboxes whose agent is off or does not
 * answer (app/sandbox/exec.c, files.c): with the agent, commands and files go to it. */
#ifndef SANDBOXD_BOX_H
#define SANDBOXD_BOX_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/dstream.h"
#include "sandboxd/proto/tar.h"

/* A buffer for a box's id: at most 128 characters and the NUL (Docker's are 64 hex). */
#define BOX_ID_MAX 129
/* The time limit of one short engine call (create, start, state, stat, a short command). */
#define BOX_CALL_MS 30000L

/* Where an engine is: its URL and, for TLS with a client certificate, three PEM files
 * (all three or none; NULL or "": none). What each kind takes: its implementation. */
struct box_target {
	const char *url;
	const char *ca_file;
	const char *cert_file;
	const char *key_file;
};

/* A box as sandboxes want it. NULL-terminated string lists; NULL means none. Whatever is
 * asked here, the engine always adds its hardening: no new privileges, its default
 * seccomp profile, an init as the first process, no privileged mode, no log kept. */
struct box_spec {
	const char *image;                /* required */
	const char *const *labels;        /* "key=value": what box_list filters by */
	const char *const *env;           /* "NAME=value" */
	const char *const *cmd;           /* NULL: the image's command */
	const char *user;                 /* "uid:gid"; every command in the box runs as it */
	/* Capabilities dropped: NULL is all of them (boxuser.h says when another list). */
	const char *const *cap_drop;
	const char *const *cap_add;       /* added back after; NULL (the right value): none */
	const char *network;              /* the egress mode's network; NULL: the default */
	/* A host name that resolves inside the box to this host's address on the engine's
	 * network (sandboxd.internal: git); NULL: none. */
	const char *gateway_name;
	int64_t memory;                   /* bytes, swap none; 0: no limit */
	int64_t nano_cpus;                /* 1e9 per CPU; 0: no limit */
	int64_t pids_limit;               /* 0: no limit */
	int64_t disk;                     /* bytes the box may write; 0: none asked */
	/* A host file the box sees read-only at ro_bind_target (both absolute; NULL: none):
	 * the sandbox's agent. */
	const char *ro_bind_source, *ro_bind_target;
	/* The first process reads an input written once before the start (box_input) and
	 * closed after it; 0: none. */
	int open_stdin;
	/* The engine's runtime to run it under (one box_runtimes lists; NULL: its default),
	 * and whether it stays out of the engine's user remapping (gVisor: decision 0084). */
	const char *runtime;
	int userns_host;
};

/* The runtimes an engine has. listed: it says which (an engine that does not can run
 * nothing but its default); has: they name the one asked about (NULL or "": not asked);
 * deflt: its default ("" when it does not say). */
#define BOX_RUNTIME_MAX 63
struct box_runtimes {
	int listed;
	int has;
	char deflt[BOX_RUNTIME_MAX + 1];
};

/* A box as the engine sees it. */
struct box_state {
	char status[16];       /* "created", "running", "exited", ... */
	int running;
	int oom_killed;
	int exit_code;
	int64_t pid;
	/* Its IPv4 address as the engine reports it (never what the box says) when it is on
	 * one network exactly; else "". */
	char ip[16];
};

/* Called for each box (or leftover) listed: its id, the value of the label value_label
 * ("" when it lacks it; never NULL) and its state ("running", "exited", ...; "" for a
 * leftover). Non-zero stops the list and is returned. */
typedef int (*box_list_fn)(void *arg, const char *id, const char *label_value,
			   const char *state);

/* One piece of an upload: data[0..len), or, with data NULL, len bytes that read puts into
 * p as asked for (up to n: their count; 0 or negative before len came ends the upload, and
 * the call fails: the reader keeps why). */
struct box_part {
	const void *data;
	size_t len;
	long (*read)(void *arg, void *p, size_t n);
	void *arg;
};

/* A path in a box. */
struct box_path_stat {
	char name[256];
	int64_t size;
	uint32_t mode;            /* the engine's mode bits (Docker: Go's os.FileMode) */
	int is_dir;
	int is_symlink;
	char link_target[TAR_NAME_MAX + 1];
};

/* A command in a box, without the agent: one call, however many the engine needs (Docker:
 * exec create, start, inspect). */
struct box_exec {
	const char *const *argv;  /* required */
	const char *const *env;   /* "NAME=value"; NULL: none */
	const char *workdir;      /* NULL: the box's */
	/* The command's input is tied to the call: the service never writes to it, so the
	 * command reads EOF exactly when the call ends (the caller stopped waiting, cancelled
	 * or died): how the box side learns it. 0: no input. */
	int stdin_tied;
	/* box_exec only (box_exec_detached sends the output nowhere: the command redirects
	 * it): each piece of stdout (1) and stderr (2), required; non-zero stops the call and
	 * is returned. */
	dstream_fn sink;
	void *sink_arg;
	/* Polled at least once a second while the command runs; non-zero cancels the call. */
	int (*cancel)(void *arg);
	void *cancel_arg;
	/* Called once the engine took the command, before it starts (NULL: none); non-zero
	 * cancels the call before anything ran. */
	int (*started)(void *arg);
	void *started_arg;
	/* Out: */
	int exit_code;            /* the command's (126 could not run, 128+n signal n) */
	int timed_out;            /* the call's timeout passed: ERR_FAIL */
	int cancelled;            /* cancel or started said so: ERR_FAIL or ERR_CANCELLED */
};

/* One kind of engine. Every member is required. */
struct engine_ops {
	const char *kind;         /* "docker" */

	/* Where calls go: engine.c's alone (everything else calls engine.h), through
	 * box_selected(). init: the process's own engine (the settings'), copied; ERR_INVALID
	 * for settings the kind cannot take; again replaces it. use: later calls go to t
	 * (copied), NULL: to init's; ERR_INVALID as init. refuse: later calls fail with
	 * ERR_DOCKER and why, until the next use. current: the URL calls go to now (what a
	 * per-engine cache is keyed by). cleanup: frees what the kind holds (at exit; safe
	 * twice). */
	int (*init)(const struct box_target *own, struct err *e);
	int (*use)(const struct box_target *t, struct err *e);
	void (*refuse)(const char *why);
	const char *(*current)(void);
	void (*cleanup)(void);

	/* The engine. */
	int (*ping)(const char *url, struct err *e);
	int (*isolation)(char *out, size_t len, long timeout_ms, struct err *e);
	int (*runtimes)(const char *want, struct box_runtimes *out, long timeout_ms,
			struct err *e);

	/* Boxes. */
	int (*create)(const struct box_spec *s, char id[BOX_ID_MAX], int *disk_enforced,
		      long timeout_ms, struct err *e);
	int (*input)(const char *id, const void *data, size_t len, long timeout_ms,
		     struct err *e);
	int (*start)(const char *id, long timeout_ms, struct err *e);
	int (*state)(const char *id, struct box_state *out, long timeout_ms, struct err *e);
	int (*address)(const char *id, const char *network, char *ip, size_t ip_len,
		       long timeout_ms, struct err *e);
	int (*resize)(const char *id, int64_t memory, int64_t nano_cpus, long timeout_ms,
		      struct err *e);
	int (*disk_used)(const char *id, int64_t *bytes, long timeout_ms, struct err *e);
	int (*remove)(const char *id, long timeout_ms, struct err *e);
	int (*list)(const char *label, const char *value_label, box_list_fn fn, void *arg,
		    long timeout_ms, struct err *e);
	int (*leftovers)(const char *label, const char *value_label, box_list_fn fn,
			 void *arg, long timeout_ms, struct err *e);
	int (*leftover_remove)(const char *name, long timeout_ms, struct err *e);

	/* Files and commands without the agent. */
	int (*file_put)(const char *id, const char *dir, const struct box_part *parts,
			size_t nparts, long timeout_ms, struct err *e);
	int (*path_stat)(const char *id, const char *path, struct box_path_stat *out,
			 long timeout_ms, struct err *e);
	int (*exec)(const char *id, struct box_exec *x, long timeout_ms, struct err *e);
	int (*exec_detached)(const char *id, const struct box_exec *x, long timeout_ms,
			     struct err *e);

	/* Images. */
	int (*image_info)(const char *image, const char *label, int64_t *size, char *value,
			  size_t value_len, long timeout_ms, struct err *e);
	int (*image_pull)(const char *image, long timeout_ms, struct err *e);
};

/* The table of a kind of engine ("docker"); NULL for a kind this build does not know.
 * Every engine is "docker" today: docker_engines has no kind column (decision 0080). */
const struct engine_ops *box_kind(const char *kind);
/* Every later box_* call of this process goes to ops (never NULL), until the next
 * box_select: engine.c's, when it picks an engine; a unit test's, for a fake. The
 * process starts with Docker's. */
void box_select(const struct engine_ops *ops);
/* The table calls go to now. */
const struct engine_ops *box_selected(void);

/* ---- the engine ---- */

/* Whether the engine answers (3 s): 0, else ERR_DOCKER or ERR_FAIL with why, "docker
 * unavailable: ...". url NULL: the engine calls go to now; another URL than that one is
 * reached without its TLS files. */
int box_ping(const char *url, struct err *e) __attribute__((warn_unused_result));
/* What keeps root inside a box from being the host's, into out (at least 8 bytes):
 * "userns" (a user namespace), "runsc" (gVisor), or "" (neither). The engine's answer,
 * never a setting (decision 0032). */
int box_isolation(char *out, size_t len, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* ---- boxes ---- */

/* Makes (does not start) a box as s says, its id into id. ERR_NOIMAGE when the engine
 * lacks the image. *disk_enforced (never NULL), set whatever the outcome: 1 when s->disk
 * is a limit the engine enforces (or would have, for a create that failed otherwise), 0
 * when none was asked or the engine's storage cannot limit a box: it is then made
 * without, with a warning in the log, and the reaper measures it (box_disk_used). */
/* The selected engine's runtimes (want: the one asked about). */
int box_runtimes(const char *want, struct box_runtimes *out, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
int box_create(const struct box_spec *s, char id[BOX_ID_MAX], int *disk_enforced,
	       long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* data to the input of box id (made with open_stdin), before its start: the engine holds
 * it until the first process reads it. About a millisecond (a file_put costs tens). */
int box_input(const char *id, const void *data, size_t len, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* Starts box id; starting a running one is not an error. A start that fails leaves the
 * box: the caller removes it. */
int box_start(const char *id, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* Box id's state and address. */
int box_state(const char *id, struct box_state *out, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* Box id's IPv4 address on network, as the engine reports it, into ip (at least 16
 * bytes). ERR_NOTFOUND when it has none there. */
int box_address(const char *id, const char *network, char *ip, size_t ip_len,
		long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* A running box's memory (bytes; swap none) and CPUs (billionths), live. */
int box_resize(const char *id, int64_t memory, int64_t nano_cpus, long timeout_ms,
	       struct err *e) __attribute__((warn_unused_result));
/* The bytes box id has written (its writable layer), which the engine may have to walk a
 * tree to count: seconds for a large one. */
int box_disk_used(const char *id, int64_t *bytes, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* Kills and removes box id and what the engine made for it alone. ERR_NOTFOUND when it is
 * already gone. */
int box_remove(const char *id, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* Every box, running or not, with the label "key" (any value) or "key=value", to fn. */
int box_list(const char *label, const char *value_label, box_list_fn fn, void *arg,
	     long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* What the engine keeps besides boxes, selected as box_list does (Docker: volumes), to fn
 * with its name as id. */
int box_leftovers(const char *label, const char *value_label, box_list_fn fn, void *arg,
		  long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* Removes one of them: ERR_EXISTS while a box uses it, ERR_NOTFOUND when it is gone. */
int box_leftover_remove(const char *name, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* ---- files and commands without the agent ---- */

/* Unpacks the tar archive made of parts, in order and without a copy, into the directory
 * dir of box id, which must exist: ERR_NOTFOUND otherwise, ERR_INVALID when dir is not a
 * directory, ERR_EXISTS when an entry would replace a directory with a file (or the
 * other way round); nothing is written then. */
int box_file_put(const char *id, const char *dir, const struct box_part *parts,
		 size_t nparts, long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* The same with the archive in one buffer. */
int box_file_put_buf(const char *id, const char *dir, const void *tar, size_t len,
		     long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* What path is in box id; ERR_NOTFOUND when it does not exist. */
int box_path_stat(const char *id, const char *path, struct box_path_stat *out,
		  long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* Runs x->argv in box id as its user, its output to x->sink, until it and every process
 * holding its output ended: 0 with x->exit_code. Past timeout_ms, ERR_FAIL with
 * x->timed_out; cancelled (x->cancel), ERR_FAIL with x->cancelled; x->started refusing,
 * ERR_CANCELLED with x->cancelled. The engine cannot kill it then: it runs on unless it
 * ends itself on its input's EOF (x->stdin_tied) or the caller ends it with another
 * command. A sink's non-zero return stops the call and is returned. */
int box_exec(const char *id, struct box_exec *x, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* Starts x->argv (with x->env, x->workdir) in box id and returns: it runs on, its output
 * going nowhere (the command redirects it). */
int box_exec_detached(const char *id, const struct box_exec *x, long timeout_ms,
		      struct err *e) __attribute__((warn_unused_result));

/* ---- images ---- */

/* Image's size in bytes and the value of its label (label NULL: none asked) into
 * value[0..value_len) ("" without it). ERR_NOTFOUND when the engine has no such image,
 * ERR_INVALID for a malformed name. */
int box_image_info(const char *image, const char *label, int64_t *size, char *value,
		   size_t value_len, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* Pulls image onto the engine; a failure's text is the registry's reason, unprefixed. */
int box_image_pull(const char *image, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

#endif
