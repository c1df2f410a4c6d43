/* held.h: one exec the holder keeps (holder.h): the agent's frames in, the answer out. */
#ifndef SANDBOXD_HELD_H
#define SANDBOXD_HELD_H
#include <json-c/json.h>
#include "sandboxd/common/agentproto.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/proto/capture.h"
#include "sandboxd/core/db.h"
#include "sandboxd/sandbox/exec.h"
#include "sandboxd/http/exec_stream.h"
#include "sandboxd/holder/handover.h"

/* Output queued past this stops the reading of the agent until nginx took it. */
#define HELD_OUT_HIGH ((size_t)1 << 20)

/* What an epoll event is about: one of an exec's two connections, one of a parked call's
 * three (parked.h), or the holder's own. */
enum { HELD_NGINX, HELD_AGENT, HELD_CONN, HELD_LISTEN, HELD_PARKED };
struct parked;
struct held_tag {
	int kind;
	int fd;                       /* HELD_CONN: the hand-over connection; HELD_PARKED: which */
	struct held *x;               /* HELD_NGINX, HELD_AGENT */
	struct parked *p;             /* HELD_PARKED */
};

struct held {
	struct handover ho;
	struct db *db;
	int fcgi, agent;              /* -1 once closed */
	struct capture cap;
	struct exec_stream xs;        /* streamed answers */
	unsigned char hdr[AP_HDR];    /* the agent's frame being read */
	size_t hdr_got, body_got;
	struct ap_hdr h;
	unsigned char *body;
	struct buf out;               /* FastCGI records for nginx, from out_off */
	size_t out_off;
	long long deadline_ms;        /* the service's own, past the limit and the grace */
	int answered;                 /* the whole answer is in out (or no one reads it) */
	int starting;                 /* handed before STARTED: the agent waits for the clone */
	int status;                   /* the audit row's */
	struct exec_result res;
	int ran;                      /* res holds the command's end */
	int audited;
	int dropped;                  /* the holder let it go (its memory goes after the turn) */
	json_object *audit;           /* what the end adds to the row's details */
	/* Called with each of its descriptors before it is closed (the holder takes it out of
	 * its epoll); NULL: none. */
	void (*forget)(void *arg, int fd);
	void *forget_arg;
	struct held *prev, *next;     /* the holder's list */
	struct held_tag tag[2];       /* epoll's data for nginx's and the agent's */
};

/* Takes ho and the two connections (nginx's, the agent's) into a new x, which uses db (the
 * holder's connection) for its row and the sandbox's state. */
int held_open(struct held *x, struct handover *ho, const int fds[2], struct db *db,
	      struct err *e)
	__attribute__((warn_unused_result));
/* Reads what the agent sent; the end (or a broken agent) answers. */
void held_agent_readable(struct held *x);
/* nginx closed the connection: the client left. */
void held_client_gone(struct held *x);
/* Writes what nginx can take: 1 when all of the answer is written, 0 when more is to
 * come, -1 when the client is gone. */
int held_write(struct held *x) __attribute__((warn_unused_result));
/* The deadline and the keep-alive line, at now (CLOCK_MONOTONIC ms). */
void held_tick(struct held *x, long long now);
/* Once answered: the audit row (before the answer goes, as a worker commits it before it
 * answers, so that a client that has its answer finds its row) and the counts. */
void held_audit(struct held *x);
/* The end: the audit row if not yet written, everything freed (x itself is the caller's). */
void held_close(struct held *x);
/* Sends what out holds from *off on fd (nginx's, non-blocking): 1 once all of it is out
 * (out is then emptied), 0 when fd takes no more now, -1 when the connection failed. The
 * holder's one way of writing to nginx, for held execs and parked calls alike. */
int held_send_out(int fd, struct buf *out, size_t *off) __attribute__((warn_unused_result));
/* O_NONBLOCK on fd, as the holder's loop needs on every connection it is handed. */
void held_nonblocking(int fd);
/* Whether the agent's connection should be read now (not while nginx lags behind). */
int held_wants_agent(const struct held *x) __attribute__((warn_unused_result));

#endif
