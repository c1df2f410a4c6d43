/* err.h: the one error type. 0 is success; every failure is a negative code, and the
 * function that fails writes a message naming the thing into the caller's struct err. */
#ifndef SANDBOXD_ERR_H
#define SANDBOXD_ERR_H
#include <stddef.h>

enum {
	ERR_OK = 0,
	ERR_FAIL = -1,      /* anything else: internal */
	ERR_NOMEM = -2,
	ERR_INVALID = -3,   /* the caller's input is wrong (400) */
	ERR_NOTFOUND = -4,  /* 404 */
	ERR_TOOBIG = -5,    /* a bound was exceeded (413) */
	ERR_EXISTS = -6,    /* 409 */
	ERR_DB = -7,        /* the database is unreachable (503) */
	ERR_DENIED = -8,    /* 403 */
	ERR_DOCKER = -9,    /* the Docker engine is unreachable (503) */
	ERR_NOTDIR = -10,   /* a path that must be a directory is not one (400) */
	ERR_CANCELLED = -11, /* the caller stopped waiting (its client went away: 499) */
	ERR_LIMIT = -12,    /* a limit of the caller's was reached (429) */
	ERR_NOIMAGE = -13,  /* the Docker engine has no such image */
	ERR_NOSTART = -14,  /* a sandbox's container did not start (503, the message says why) */
	ERR_AUTH = -15,     /* no credential, or a refused one (401 with the challenge) */
	ERR_ANSWER = -16,   /* an answer no code names by itself (410, 422, ...): e->status */
	ERR_METHOD = -17,   /* the path is known, not with this method (405) */
	ERR_HANDED = -18,   /* no error: the holder answers the call now (park.h) */
	ERR_RELAY = -19,    /* the call is another host's (r->relay_to): the dispatcher
			     * relays it there, or answers why it cannot (relay_http.h) */
};

/* What went wrong, and what the client is told: the dispatcher turns a code and its err
 * into the one error response (http_fail). status and key are for the answers a code does
 * not name by itself; err_set clears them. */
struct err {
	char msg[512];
	int status;         /* the HTTP status, when not the code's own (0) */
	const char *key;    /* the answer's key: NULL for "message"; "error" inside a sandbox */
};

/* err_set formats msg into e (if e is not NULL) and returns code, so that
 * `return err_set(e, ERR_INVALID, "field '%s' is required", name);` reads naturally. */
int err_set(struct err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An answer with its HTTP status: returns the code that goes with status (ERR_DENIED for
 * 403, ...; ERR_ANSWER when none does) and keeps status, so that 409 or 413 can be told
 * apart from the code's own. */
int err_http(struct err *e, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for an error raised inside a sandbox (exec, files): {"error": "..."}. */
int err_box(struct err *e, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The message already in e, answered with status as one raised inside a sandbox; returns
 * the code that goes with status. */
int err_boxed(struct err *e, int status);
/* The HTTP status of a code: 400 for ERR_INVALID, ..., 500 for any it does not know. */
int err_status(int code);

#endif
