/* docker_int.h: internal to the engine layer, for app/engine/docker*.c only; callers use
 * docker.h. What the Docker client's files share: the transfer of docker.c (struct call,
 * perform and its sinks) and the helpers of docker_container.c that execs, images and
 * archives use too (the JSON building, the calls on one object by its id). Being shared,
 * they are seen by the whole library: their names carry dk_ so that none clashes. */
#ifndef SANDBOXD_DOCKER_INT_H
#define SANDBOXD_DOCKER_INT_H
#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"
#include "sandboxd/engine/docker.h"

#define STATHDR_MAX (16 * 1024)
/* curl's buffers for archive bodies: fewer, larger reads and writes than its 16 KiB and
 * 64 KiB defaults (megabytes go through them). */
#define ARCHIVE_BUFSIZE (512L * 1024)

/* Where calls go: the settings of docker_init, or a host given to docker_ping. */
struct target {
	const char *host;
	const char *ca, *cert, *key;
};

/* One request and what came back. */
struct call {
	const char *op;               /* names the call in messages: "create container" */
	const char *method;
	const char *path;             /* after the version prefix, query included */
	const char *ctype;            /* request body type */
	const void *body;
	size_t body_len;
	/* Or a body in pieces, sent as they are (no copy into one buffer). */
	const struct box_part *parts;
	size_t nparts, part, part_off;
	long bufsize;                 /* curl's receive buffer; 0: curl's default */
	long timeout_ms;
	/* A 2xx body goes to sink; non-zero stops the transfer and is returned (the sink has
	 * filled c->e). Other bodies go to errbody. */
	int (*sink)(struct call *c, const char *p, size_t n);
	void *sink_arg;
	int sink_rc;
	struct buf errbody;
	struct buf stathdr;           /* X-Docker-Container-Path-Stat, kept when want_stat */
	int want_stat;
	int (*cancel)(void *arg);
	void *cancel_arg;
	int64_t deadline;
	int timed_out, cancelled;
	long status;
	struct err *e;
};

/* docker.c: the transfer. */
struct target dk_configured(void);
int dk_id_valid(const char *what, const char *id, struct err *e) __attribute__((warn_unused_result));
int dk_target_on(CURL *h, const char *op, const struct target *t, const char *path,
	      struct buf *url, struct err *e) __attribute__((warn_unused_result));
/* docker_refuse's refusal into e (ERR_DOCKER), for a call that does not go through
 * perform; else 0. */
int dk_call_refused(struct err *e) __attribute__((warn_unused_result));
void dk_call_init(struct call *c, const char *op, const char *method, const char *path,
	       long timeout_ms, struct err *e);
void dk_call_body(struct call *c, const char *json);
int dk_perform(struct call *c) __attribute__((warn_unused_result));
int dk_call_json(struct call *c, json_type want, json_object **out)
	__attribute__((warn_unused_result));
/* A sink that appends to the struct buf of c->sink_arg. */
int dk_sink_buf(struct call *c, const char *p, size_t n) __attribute__((warn_unused_result));

/* docker_container.c: the JSON building, and the calls on one object by its id. */
int dk_add_strings(json_object *o, const char *key, const char *const *list)
	__attribute__((warn_unused_result));
int dk_env_valid(const char *what, const char *const *list, int need_eq, struct err *e)
	__attribute__((warn_unused_result));
int dk_post_for_id(const char *kind, const char *path, json_object *body, char *id_out,
		long timeout_ms, struct err *e) __attribute__((warn_unused_result));
/* The objects calls are about (objects[] of docker_container.c gives each the name its ids
 * have in messages, and where they are). */
enum object { DK_CONTAINER, DK_VOLUME, DK_EXEC };
#define DK_OBJECT_PATH_MAX (DOCKER_ID_MAX + 64)
int dk_object_path(char *path, enum object o, const char *id, const char *rest, struct err *e)
	__attribute__((warn_unused_result));
int dk_object_get(enum object o, const char *what, const char *id, const char *rest,
	       long timeout_ms, json_object **out, struct err *e) __attribute__((warn_unused_result));

/* An answer's fields: 0, else ERR_FAIL (absent or of another type; *out untouched). */
static inline int get_int(json_object *o, const char *key, int64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return ERR_FAIL;
	*out = json_object_get_int64(v);
	return 0;
}

static inline int get_bool(json_object *o, const char *key, int *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
		return ERR_FAIL;
	*out = json_object_get_boolean(v);
	return 0;
}

#endif
