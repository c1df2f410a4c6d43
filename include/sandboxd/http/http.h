/* http.h: one FastCGI request and its response, and the request context every handler gets.
 * The context is reset for every request: nothing of one request is seen by the next.
 * Responses are built in memory (bounded) and sent once by http_send. */
#ifndef SANDBOXD_HTTP_H
#define SANDBOXD_HTTP_H
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <json-c/json.h>
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/core/config.h"
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/pool.h"
#include "sandboxd/lib/router.h"
#include "sandboxd/proto/token.h"

/* The largest response body built in memory; streamed responses do not count. */
#define HTTP_OUT_MAX (64u << 20)


struct req_cleanup {
	void (*fn)(void *arg);
	void *arg;
	struct req_cleanup *next;
};

struct req {
	struct FCGX_Request *fcgx;   /* only http.c and worker.c look inside */
	struct pool *pool;
	const struct config *cfg;
	struct db *db;
	struct timespec started;

	const char *method;
	const char *path;            /* raw, without the query string */
	const char *query;
	const char *remote_addr;
	char request_id[72];
	const struct route *routes;  /* the table the request is routed by, and its size */
	size_t nroutes;
	struct route_match match;
	const char *audit_action;    /* the handler's audit verb, where the route's depends on
					the request (git: fetch or push) */

	const char *body;
	size_t body_len;
	json_object *json;           /* the parsed body when the route wants JSON */

	struct caller caller;
	const char *auth_failure;    /* why a credential was refused, for the audit row */

	/* Response. */
	int status;
	struct buf headers;          /* extra "Name: value\r\n" lines */
	struct buf out;
	const char *content_type;    /* a static string; NULL: application/json */
	int responded;
	int streamed;                /* the handler wrote the response itself (git) */
	int git;                     /* a git client: challenges are Basic, not Bearer */
	int basic_realm;             /* a browser's page (/admin): the challenge is Basic too */
	/* MCP: the JSON-RPC id (JSON text) of a lone tools/call message, or of a batch's last
	 * answered one, whose answer the holder may then write (api_mcp.c); NULL otherwise. */
	const char *rpc_id;
	/* With rpc_id, for a batch's last call: the batch's other answers (JSON values joined
	 * by commas), which the holder writes before this call's. NULL for a lone call. */
	const char *batch;
	const char *error;           /* the message of an error response, for the audit row */

	/* Audit: the handler names the repository and adds details as it goes. */
	const char *audit_repo;
	const char *audit_sandbox;
	json_object *audit_details;
	const char *via;             /* the door the request came by: NULL for "rest", "mcp" */
	int audited;                 /* the handler wrote its own audit rows (MCP: one per message) */
	int handed;                  /* the holder answers and audits it (holder.h) */
	int parked;                  /* handed to wait for a clone: its replay is the call (park.h) */
	int replay, replay_gone;     /* this is such a replay; its client left meanwhile */
	/* Several hosts (relay_http.h): the request came from another host's relay (its
	 * remote_addr and request_id are the client's, from the relay's token); a handler's
	 * ERR_RELAY names the host that owns the call in relay_to; relay_out: answered with
	 * the redirect, so the other host writes the row; no_relay: a message of an MCP batch,
	 * which cannot go to another host alone. */
	int relayed;
	const char *relay_to;
	int relay_out;
	int no_relay;
	/* Undo steps for side effects outside the database, run when the request fails or its
	 * transaction does not commit (e.g. a bare repository created on disk). */
	struct req_cleanup *on_abort;
};

/* The request parameter (FastCGI environment) or NULL. */
const char *http_param(struct req *r, const char *name);
/* The percent-decoded path parameter i of the matched route. */
const char *http_path_param(struct req *r, int i);
/* Every FastCGI parameter of the request as NAME=value, NULL-terminated (NULL: none). */
const char *const *http_params(struct req *r);
/* Reads the body up to limit bytes. ERR_TOOBIG past it, ERR_FAIL on a read error. */
int http_read_body(struct req *r, size_t limit, struct err *e) __attribute__((warn_unused_result));

void http_header(struct req *r, const char *name, const char *value);
/* Sets a JSON response; takes ownership of obj. */
void http_json(struct req *r, int status, json_object *obj);
/* {key: "..."} with status: the error shape, with its key ("message" for most routes). */
void http_verror(struct req *r, int status, const char *key, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* {"message": "..."} with status. */
void http_error(struct req *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void http_empty(struct req *r, int status);
/* The answer is what the handler wrote into r->out, of content_type (a static string). */
void http_body(struct req *r, int status, const char *content_type);
/* {key: "..."} with status. */
void http_answer_error(struct req *r, int status, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The dispatcher's one error answer: the status of e (err_http) or of the code, with e's
 * message under e's key; ERR_DB, ERR_DOCKER and internal errors answer with a generic text
 * and log the detail, 401 carries the challenge. Handlers return the code instead. */
void http_fail(struct req *r, int code, const struct err *e);
/* 401 with the WWW-Authenticate challenge. */
void http_unauthorized(struct req *r, const char *message);
/* Registers an undo step; see on_abort. */
int http_on_abort(struct req *r, void (*fn)(void *), void *arg) __attribute__((warn_unused_result));
/* For answers a handler streams itself: n bytes of the raw FastCGI output, and a flush
 * (both ERR_FAIL when the client is gone); up to n bytes of the request body, 0 at its
 * end, negative on a read error. */
int http_write(struct req *r, const void *data, size_t n) __attribute__((warn_unused_result));
int http_flush(struct req *r) __attribute__((warn_unused_result));
long http_read(struct req *r, void *buf, size_t n) __attribute__((warn_unused_result));
/* A request body streamed without waiting on the client (nginx passes a push's body on as
 * it arrives, githttp.c): http_read_nowait gives up to n bytes that have already arrived:
 * their count, 0 at the body's end, HTTP_READ_WAIT when none has (poll http_fcgi_fd for
 * POLLIN, then call http_read_ready), HTTP_READ_GONE when the connection from nginx failed
 * (it closes it when its client goes). http_read_ready, once the connection is readable,
 * reads what arrived and answers the same way (never HTTP_READ_WAIT); it waits only while
 * nginx is in the middle of writing a record, never on the client. */
#define HTTP_READ_GONE (-1L)
#define HTTP_READ_WAIT (-2L)
long http_read_nowait(struct req *r, void *buf, size_t n) __attribute__((warn_unused_result));
long http_read_ready(struct req *r, void *buf, size_t n) __attribute__((warn_unused_result));
/* The whole request body when it has all arrived already (libfcgi's buffer and the
 * connection hold it to its end), read without waiting on the client: 0 with r->body and
 * r->body_len set (the request's pool); ERR_TOOBIG past limit bytes; ERR_FAIL when more is
 * still to come or the connection failed. What was read is consumed whatever the answer. */
int http_read_body_arrived(struct req *r, size_t limit, struct err *e)
	__attribute__((warn_unused_result));
/* The head http_send writes (Status, X-Request-Id, Cache-Control, and but for 204
 * Content-Type, NULL: JSON, and Content-Length len) into out[size]: its length, or -1 when
 * it does not fit. For answers written without libfcgi (the holder). */
int http_head(char *out, size_t size, int status, const char *request_id,
	      const char *content_type, size_t len) __attribute__((warn_unused_result));
/* The FastCGI connection and request id of r (-1 and 0 without one). */
int http_fcgi_fd(struct req *r) __attribute__((warn_unused_result));
unsigned http_fcgi_id(struct req *r) __attribute__((warn_unused_result));
/* Lets go of a request handed over (r->handed): frees libfcgi's state of it and closes this
 * process's copy of the connection without writing a byte or shutting it down. */
void http_release(struct req *r);
/* Writes status line, headers and body to the client. */
int http_send(struct req *r) __attribute__((warn_unused_result));
/* 1 when the connection from nginx has been closed (nginx closes it when its client goes
 * away, fastcgi_ignore_client_abort being off), else 0. Never waits: a poll with no
 * timeout, for long handlers to call while they wait on something else. */
int http_client_gone(struct req *r) __attribute__((warn_unused_result));
/* The status a request gets when its client went away before the answer (nginx's own). */
#define HTTP_CLIENT_CLOSED 499

#endif
