/* park.h: a call that would wait for a clone still running, parked with the holder instead
 * of in its worker (README "The holder"). The worker has authorised and checked the call
 * and changed nothing yet; it sends the sandbox's agent a CWAIT (agentproto.h) and hands
 * the holder nginx's connection, the agent's and a memfd with the request's own FastCGI
 * records. When the agent answers (or closes, or the wait's time is up) the holder replays
 * the request to a worker with SANDBOXD_REPLAY set, which looks at the clone once without
 * waiting, and passes that worker's answer on to nginx. The replay is the call: its audit
 * row, its counts, its answer; the holder believes nothing the agent says. */
#ifndef SANDBOXD_PARK_H
#define SANDBOXD_PARK_H
#include <stddef.h>
#include "sandboxd/common/err.h"
#include "sandboxd/http/http.h"
#include "sandboxd/sandbox/sandbox.h"

/* The parameters the holder adds to a replay: the first request's CLOCK_MONOTONIC start
 * in ms (its row's duration counts from there), and whether its client left meanwhile. */
#define PARK_REPLAY "SANDBOXD_REPLAY"
#define PARK_REPLAY_GONE "SANDBOXD_REPLAY_GONE"

/* Whether the holder may answer this request: the holder on, REST or a lone MCP call (a
 * batch's messages are answered together, by their worker), nginx's connection at hand. */
int holder_may(struct req *r) __attribute__((warn_unused_result));

/* Parks r, whose sandbox s clones still, for at most wait_ms. unread: bytes of body still
 * in the connection (a raw PUT's, read here into the records; 0 when r->body holds it).
 * 0: parked, r handed (nothing more is written or audited by this worker); 1: not parked,
 * nothing consumed, the caller waits as before; an ERR_* code with e: the call's answer
 * (the client left while its body was read). */
int park_call(struct req *r, const struct sandbox *s, size_t unread, long wait_ms,
	      struct err *e) __attribute__((warn_unused_result));

/* Reads a replay's parameters into r (dispatch): r->replay and r->replay_gone, and the
 * first request's start into r->started. */
void park_replay_params(struct req *r);

#endif
