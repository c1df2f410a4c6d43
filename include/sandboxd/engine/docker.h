/* docker.h: the Docker Engine API client (libcurl), API version pinned to v1.41: the
 * Docker implementation of the engine interface (box.h: docker_engine_ops). Only the
 * engine layer's docker*.c and box.c use it, and tests of Docker itself (tests/docker,
 * tests/unit/test_docker.c); everything else goes through box.h (`make lint` checks it).
 *
 * One curl handle per process, reused for every call (connections are kept alive between
 * calls; exec start ends its connection, since Docker hijacks it). Not thread-safe: a worker
 * is single-threaded. The engine is reached on a unix socket (the default) or over TCP,
 * with TLS client certificates when the settings name them; settings come in through
 * docker_init, never from the environment.
 *
 * Every call takes a timeout in milliseconds (0 means DOCKER_TIMEOUT_MS) covering the
 * whole call, connection included. Every failure fills struct err with what was done and
 * why, Docker's own words when it sent them: "docker create container: No such image:
 * x:y (404)". Codes: ERR_NOTFOUND (404: no such container, exec, image or path),
 * ERR_EXISTS (409: name in use, container not running, ...), ERR_INVALID (400: Docker
 * refused the request's parameters, or an id that is not an id), ERR_TOOBIG (a response
 * larger than its bound), ERR_NOMEM, ERR_FAIL (the engine did not answer, timed out,
 * answered 5xx or something that is not what the API promises). No call ever returns a
 * bare success on a failed transfer.
 */
#ifndef SANDBOXD_DOCKER_H
#define SANDBOXD_DOCKER_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/engine/box.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/proto/dstream.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/tar.h"

#define DOCKER_API "/v1.41"
#define DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"
#define DOCKER_TIMEOUT_MS 30000L
#define DOCKER_ID_MAX 128            /* container and exec ids (64 hex) and names */
#define DOCKER_RESPONSE_MAX (1u << 20) /* JSON answers: inspect, list */

/* The engine interface over the calls below (docker_box.c): the table box.c selects for
 * every engine, all of them Docker engines today. */
extern const struct engine_ops docker_engine_ops;

/* Where the engine is. host: "unix:///path" (default when NULL or ""), "tcp://host:port"
 * or "https://host:port". With ca_file, cert_file and key_file set (all three, PEM), the
 * connection is TLS with a client certificate and the server verified against ca_file;
 * tcp:// then means TLS too (as DOCKER_TLS_VERIFY does for the docker CLI). */
struct docker_conf {
	const char *host;
	const char *ca_file;
	const char *cert_file;
	const char *key_file;
};

/* Copies the settings (the strings need not outlive the call) for every later call.
 * ERR_INVALID for an unsupported host or an incomplete TLS triple. Calling it again
 * replaces them. Without it, calls go to DOCKER_DEFAULT_HOST. */
int docker_init(const struct docker_conf *conf, struct err *e) __attribute__((warn_unused_result));
/* Every later call goes to the engine c (copied), until the next docker_use; NULL: back
 * to docker_init's. For a process that serves sandboxes of several engines (engine.h
 * chooses; a worker serves one request at a time). ERR_INVALID as docker_init. */
int docker_use(const struct docker_conf *c, struct err *e) __attribute__((warn_unused_result));
/* Every later call fails with ERR_DOCKER and why (an engine that cannot be reached as
 * asked: no call goes to another), until the next docker_use. */
void docker_refuse(const char *why);
/* The host calls go to now. */
const char *docker_current_host(void);
/* Frees the handle and the settings (at exit; safe to call twice). */
void docker_cleanup(void);

/* GET /_ping with a 3 s timeout. 0 when the engine answers OK, else ERR_FAIL with why
 * ("docker unavailable: ..."). host NULL means the configured one; a host other than the
 * configured one is reached without TLS settings. */
int docker_ping(const char *host, struct err *e) __attribute__((warn_unused_result));

/* GET /info: what keeps a sandbox's root from being the host's, into out (at least 8
 * bytes): "userns" (SecurityOptions holds name=userns: dockerd --userns-remap), "runsc"
 * (the default runtime is gVisor's), or "" (neither: root inside would be root outside). */
int docker_info_isolation(char *out, size_t len, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* The same from an /info answer already read (json: NUL-terminated): 0, or ERR_FAIL when
 * it is not a JSON object. */
int docker_info_parse_isolation(const char *json, char *out, size_t len)
	__attribute__((warn_unused_result));

/* The runtimes the engine has (GET /info, docker_runtime.c). listed: the answer has a
 * Runtimes object (Docker since 1.12; an engine without one can run nothing but its
 * default); has: that object names want (NULL or "": not asked); deflt: its DefaultRuntime
 * ("" when it does not say). */
#define DOCKER_RUNTIME_MAX 63
struct docker_runtimes {
	int listed;
	int has;
	char deflt[DOCKER_RUNTIME_MAX + 1];
};
int docker_info_runtimes(const char *want, struct docker_runtimes *out, long timeout_ms,
			 struct err *e) __attribute__((warn_unused_result));
/* The same from an /info answer already read (json: NUL-terminated): 0, or ERR_FAIL when
 * it is not a JSON object (out then all zero). */
int docker_info_parse_runtimes(const char *json, const char *want, struct docker_runtimes *out)
	__attribute__((warn_unused_result));

/* ---- containers ---- */

/* A container as sandboxes want it. NULL-terminated string lists; NULL means none. */
struct docker_create {
	const char *image;                /* required */
	const char *name;                 /* optional container name */
	const char *const *labels;        /* "key=value" pairs */
	const char *const *env;           /* "NAME=value" */
	const char *const *cmd;           /* NULL: the image's CMD (sleep infinity) */
	const char *user;                 /* NULL: "61000:61000"; every exec's too */
	/* /workspace: NULL or "" the image's directory in the container's writable layer
	 * (where storage_size counts it), an absolute path a bind mount of that host
	 * directory, anything else a named volume. */
	const char *workspace;
	/* Labels of a /workspace volume the engine creates ("key=value"; NULL: none), so that
	 * one left behind by a container removed without it can be found and removed. */
	const char *const *volume_labels;
	const char *network;              /* NetworkMode; NULL: "bridge" */
	const char *const *extra_hosts;   /* e.g. "sandboxd.internal:host-gateway" */
	/* CapDrop: NULL is ["ALL"], right for an unprivileged user (under no-new-privileges a
	 * capability in its bounding set can never become effective). A root that the engine
	 * keeps from the host's (boxuser.h) gets Docker's default set less what it names. */
	const char *const *cap_drop;
	/* Capabilities added back after CapDrop. NULL (the right value for sandboxes): none;
	 * adding any only widens what a root process could do. */
	const char *const *cap_add;
	int64_t memory;                   /* bytes, also MemorySwap (no swap); 0: no limit */
	int64_t nano_cpus;                /* 1e9 per CPU; 0: no limit */
	int64_t pids_limit;               /* 0: no limit */
	/* StorageOpt size, bytes of writable layer: only overlay2 on XFS with pquota takes it
	 * (docker_storage_refused tells its refusal apart); 0: none asked. */
	int64_t storage_size;
	/* A host file bind-mounted read-only at ro_bind_target (both absolute; NULL: none):
	 * the sandbox's agent. */
	const char *ro_bind_source, *ro_bind_target;
	/* An input for the first process, written once before the start (docker_stdin_put)
	 * and closed after it (OpenStdin, StdinOnce); 0: none (/dev/null). */
	int open_stdin;
	/* HostConfig.Runtime, one the engine lists (docker_info_runtimes): a gVisor sandbox's
	 * (isolation.h). NULL: the engine's default. */
	const char *runtime;
	/* HostConfig.UsernsMode "host": outside a userns-remap engine's remapping. For a gVisor
	 * sandbox only, whose root is the sentry's and never the host's: runsc cannot make its
	 * mounts inside a remapped user namespace (decision 0084). */
	int userns_host;
};

/* POST /containers/create with the hardening always on: CapDrop (ALL unless cap_drop), SecurityOpt
 * no-new-privileges, Init true, LogConfig none, no privileged mode, the user, the limits.
 * Writes the new id (64 hex, NUL-terminated) into id_out[DOCKER_ID_MAX + 1]. */
int docker_container_create(const struct docker_create *c, char *id_out, long timeout_ms,
			    struct err *e) __attribute__((warn_unused_result));
/* 1 when a create failed only because the engine's storage cannot limit a container's
 * size (StorageOpt size on anything but overlay2 over XFS with pquota), judged from e. */
int docker_storage_refused(const struct err *e) __attribute__((warn_unused_result));
/* POST /containers/{id}/start. Starting a running container is not an error. A start that
 * fails leaves the container: the caller removes it. */
int docker_container_start(const char *id, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* Writes data to the input of container id (made with open_stdin), before its start: the
 * attach the docker CLI makes (POST …/attach?stream=1&stdin=1, upgraded) on a connection
 * of its own, the bytes, and the connection closed. The engine holds them until the first
 * process runs and reads them, then closes its input (StdinOnce). About a millisecond,
 * where an archive PUT costs tens (the engine re-executes itself to extract). */
int docker_stdin_put(const char *id, const void *data, size_t len, long timeout_ms,
		     struct err *e) __attribute__((warn_unused_result));

/* GET /containers/{id}/json?size=1: the bytes its writable layer holds (SizeRw), which
 * the engine walks the layer to count: seconds for a large tree, so the reaper asks it
 * seldom (SANDBOXD_DISK_CHECK_INTERVAL). */
int docker_container_size(const char *id, int64_t *size_rw, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* GET /containers/{id}/json: the State part, and the address (box.h's box_state: its IPv4
 * address on its one network as the engine reports it, never what the container says). */
int docker_container_inspect(const char *id, struct box_state *out,
			     long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* DELETE /containers/{id}?force=1&v=1 (kills it, removes its anonymous volumes). A
 * container that is already gone: ERR_NOTFOUND. */
/* The container's IPv4 address on network, as the engine reports it (never what the
 * container says), into ip (at least 16 bytes). ERR_NOTFOUND when it has none there. */
int docker_container_ip(const char *id, const char *network, char *ip, size_t ip_len,
			long timeout_ms, struct err *e) __attribute__((warn_unused_result));
int docker_container_remove(const char *id, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* A running container's memory (bytes; swap the same: none) and CPUs (billionths). */
int docker_container_update(const char *id, int64_t memory, int64_t nano_cpus, long timeout_ms,
			    struct err *e) __attribute__((warn_unused_result));

/* Called for each container listed: its id, the value of the label value_label (or, when
 * that is NULL, of the label the list was filtered by; "" when the container lacks it;
 * never NULL) and its state ("running", "exited", ...). Non-zero stops the list and is
 * returned. */
typedef int (*docker_list_fn)(void *arg, const char *id, const char *label_value,
			      const char *state);
/* GET /containers/json?all=1 filtered by the label "key" (any value) or "key=value". */
int docker_container_list(const char *label, const char *value_label, docker_list_fn fn,
			  void *arg, long timeout_ms,
			  struct err *e) __attribute__((warn_unused_result));

/* GET /volumes filtered as docker_container_list does; id is the volume's name, state "". */
int docker_volume_list(const char *label, const char *value_label, docker_list_fn fn,
		       void *arg, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));
/* DELETE /volumes/{name}: ERR_EXISTS (409) while a container uses it, ERR_NOTFOUND when it
 * is gone. */
int docker_volume_remove(const char *name, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* ---- exec ---- */

/* The time limit of one short engine call (create, start, inspect, stat, a short exec). */
#define DOCKER_CALL_MS 30000L

struct docker_exec_opts {
	const char *const *cmd;   /* required, argv */
	const char *const *env;   /* "NAME=value"; NULL: none */
	const char *workdir;      /* NULL: the container's */
	const char *user;         /* NULL: the container's (docker_create.user) */
	/* Attach stdin to the start call's connection. The service never writes to it, so
	 * the command reads EOF exactly when that connection ends (the caller stopped
	 * waiting, cancelled, or died): a way to notice from inside the container. */
	int attach_stdin;
};
/* POST /containers/{id}/exec (stdout and stderr attached, stdin as o says, no TTY). */
int docker_exec_create(const char *container, const struct docker_exec_opts *o,
		       char *id_out, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* The caller's side of an exec start: where output goes and when to stop waiting. */
struct docker_exec_io {
	dstream_fn sink;          /* required: each piece of stdout (1) and stderr (2) */
	void *sink_arg;
	uint32_t max_frame;       /* 0: DSTREAM_MAX_FRAME */
	/* Polled at least once a second while the exec runs; non-zero cancels the call. */
	int (*cancel)(void *arg);
	void *cancel_arg;
	/* Out: */
	int timed_out;            /* the call's timeout passed */
	int cancelled;            /* cancel said so */
	uint64_t bytes[3];        /* payload bytes per stream (1 stdout, 2 stderr) */
};
/* POST /exec/{id}/start, streaming the multiplexed answer through a dstream into io->sink
 * until the engine closes it (the command and every process holding its output ended).
 * On timeout or cancel: ERR_FAIL with io->timed_out or io->cancelled set, and the
 * connection closed; there is no exec kill, so the command goes on running unless it was
 * created with attach_stdin and ends itself on its stdin's EOF (or the caller kills it,
 * e.g. with a second exec). A sink's non-zero return stops the call and is returned. */
int docker_exec_start(const char *exec_id, struct docker_exec_io *io, long timeout_ms,
		      struct err *e) __attribute__((warn_unused_result));

/* POST /exec/{id}/start detached: the command runs on; its output goes nowhere (the
 * command redirects it). */
int docker_exec_start_detached(const char *exec_id, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

struct docker_exec_state {
	int running;
	int exit_code;            /* -1 while running */
	int64_t pid;              /* in the host's pid namespace */
};
/* GET /exec/{id}/json. After exec start has returned, exit_code is the command's truth
 * (126: the runtime could not run it, not found included; 124: timeout(1);
 * 128+n: signal n). */
int docker_exec_inspect(const char *exec_id, struct docker_exec_state *out, long timeout_ms,
			struct err *e) __attribute__((warn_unused_result));

/* ---- images ---- */

/* The request path that pulls image ("name", "name:tag", "host:port/name:tag",
 * "name@sha256:…") into path: /images/create?fromImage=<name>&tag=<tag or digest>, both
 * percent-encoded. The tag is always given ("latest" when the name has none): without one
 * Docker pulls every tag of the name. ERR_INVALID for an empty or malformed name. */
int docker_image_pull_path(const char *image, struct buf *path, struct err *e)
	__attribute__((warn_unused_result));

/* POST /images/create: pulls image, waiting for the end of Docker's progress stream
 * within timeout_ms. Docker reports a failed pull inside a 200 stream as
 * {"error": …}: that message, or the HTTP error's, is e's text, without any prefix. */
int docker_image_pull(const char *image, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* GET /images/{image}/json: the image's size in bytes and the value of its label (label
 * NULL: none asked) into value[0..value_len) ("" when it has no such label). ERR_NOTFOUND
 * when the engine has no such image, ERR_INVALID for a malformed name. */
int docker_image_inspect(const char *image, const char *label, int64_t *size, char *value,
			 size_t value_len, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* ---- archive ---- */

/* PUT /containers/{id}/archive?path=dir&noOverwriteDirNonDir=1: unpacks the tar archive
 * (tar_write_file) into the directory dir, which must exist: ERR_NOTFOUND otherwise,
 * ERR_INVALID when dir is not a directory, ERR_EXISTS when an entry would replace a
 * directory with a file (or a file with a directory); nothing is written then. */
int docker_archive_put(const char *container, const char *dir, const void *tar, size_t len,
		       long timeout_ms, struct err *e) __attribute__((warn_unused_result));

/* docker_archive_put with the archive in pieces (box.h), sent in order without being
 * copied into one buffer (a header, a file's bytes, the end blocks). */
int docker_archive_put_parts(const char *container, const char *dir,
			     const struct box_part *parts, size_t nparts, long timeout_ms,
			     struct err *e) __attribute__((warn_unused_result));

/* GET /containers/{id}/archive?path=path into out (bounded by out->max: ERR_TOOBIG). */
int docker_archive_get(const char *container, const char *path, struct buf *out,
		       long timeout_ms, struct err *e) __attribute__((warn_unused_result));

/* GET /containers/{id}/archive?path=path streamed into a tar reader: the one regular file
 * at path, at most max_size bytes, in out (out->data is the caller's: tar_file_release).
 * The transfer stops as soon as the reader refuses: ERR_TOOBIG (out->size says how large),
 * ERR_INVALID for a directory or another non-file (*type, when type is not NULL, says
 * which: TAR_DIR...), ERR_NOTFOUND for a missing path. */
int docker_archive_read_file(const char *container, const char *path, size_t max_size,
			     struct tar_file *out, char *type, long timeout_ms, struct err *e)
	__attribute__((warn_unused_result));

/* GET /containers/{id}/archive?path=path fed to r, which the caller made (tar_reader_init,
 * a sink if it wants the bytes as they come), finishes and releases. 0 when the whole
 * answer went through r; the reader's code when it refused; ERR_NOTFOUND for a missing
 * path. */
int docker_archive_read(const char *container, const char *path, struct tar_reader *r,
			long timeout_ms, struct err *e) __attribute__((warn_unused_result));

/* HEAD /containers/{id}/archive?path=path: the X-Docker-Container-Path-Stat header into
 * out (box.h; mode is Go's os.FileMode: is_dir and is_symlink are read off its bits 31 and
 * 27). ERR_NOTFOUND when path does not exist. */
int docker_archive_stat(const char *container, const char *path, struct box_path_stat *out,
			long timeout_ms, struct err *e) __attribute__((warn_unused_result));

#endif
