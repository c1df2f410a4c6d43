/* bodyrate.h: how fast a request body reaches a worker that waits for it. A push's body
 * streams to one of the few git workers (nginx buffers nothing for receive-pack), so a
 * client that stops sending, or sends a byte now and then, would hold that worker for as
 * long as it likes. Two bounds end such a body: no byte for stall_ms while the worker
 * waits for one (the stall bound), and, once the worker has waited grace_ms in all, fewer
 * than min_rate bytes per second of waiting on average (the rate floor).
 *
 * Only the time the worker spends waiting for the client counts: while git has not yet
 * taken the bytes already read (index-pack busy on a loaded machine), the client is not
 * slow, and that time is neither a stall nor part of the average. Pure: the caller passes
 * the clock (milliseconds of a monotonic clock), so the tests drive time themselves. */
#ifndef SANDBOXD_BODYRATE_H
#define SANDBOXD_BODYRATE_H
#include <stddef.h>
#include <stdint.h>

struct bodyrate {
	int64_t stall_ms, grace_ms;
	uint64_t min_rate;    /* bytes per second; 0: no floor */
	uint64_t bytes;       /* received so far */
	int64_t waited_ms;    /* waits that ended */
	int64_t wait_since;   /* the wait under way began then; -1: not waiting */
};

enum bodyrate_verdict {
	BODYRATE_OK = 0,
	BODYRATE_STALLED,     /* no byte for stall_ms of waiting */
	BODYRATE_SLOW,        /* under min_rate on average, past grace_ms of waiting */
};

/* Bounds in milliseconds and bytes per second; nothing received, not waiting. */
void bodyrate_init(struct bodyrate *b, int64_t stall_ms, int64_t grace_ms, uint64_t min_rate);
/* The worker waits for the client's next bytes from now (nothing when it already does). */
void bodyrate_wait(struct bodyrate *b, int64_t now);
/* n bytes arrived now: the wait under way, if any, ends. */
void bodyrate_got(struct bodyrate *b, int64_t now, size_t n);
/* Whether the body may go on at now. */
enum bodyrate_verdict bodyrate_check(const struct bodyrate *b, int64_t now)
	__attribute__((warn_unused_result));
/* Milliseconds from now until bodyrate_check may change its verdict if nothing arrives
 * (at least 1; INT64_MAX when not waiting): how long a poll may sleep. */
int64_t bodyrate_next_ms(const struct bodyrate *b, int64_t now)
	__attribute__((warn_unused_result));
/* The client's answer for a verdict other than BODYRATE_OK, naming the bound and its
 * setting, into out[n]: "request body too slow: …". Returns out. */
const char *bodyrate_describe(const struct bodyrate *b, enum bodyrate_verdict v, int64_t now,
			      char *out, size_t n);

#endif
