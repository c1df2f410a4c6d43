/* bodyrate.c: the stall bound and the rate floor of a streamed request body. */
#include <inttypes.h>
#include <stdio.h>
#include "sandboxd/http/bodyrate.h"
#include "sandboxd/common/banned.h"

void bodyrate_init(struct bodyrate *b, int64_t stall_ms, int64_t grace_ms, uint64_t min_rate)
{
	*b = (struct bodyrate){ .stall_ms = stall_ms, .grace_ms = grace_ms,
				.min_rate = min_rate, .wait_since = -1 };
}

void bodyrate_wait(struct bodyrate *b, int64_t now)
{
	if (b->wait_since < 0)
		b->wait_since = now;
}

void bodyrate_got(struct bodyrate *b, int64_t now, size_t n)
{
	if (b->wait_since >= 0 && now > b->wait_since)
		b->waited_ms += now - b->wait_since;
	b->wait_since = -1;
	b->bytes += n;
}

/* All the time spent waiting for the client, the wait under way included. */
static int64_t waited(const struct bodyrate *b, int64_t now)
{
	return b->waited_ms + (b->wait_since >= 0 && now > b->wait_since ? now - b->wait_since : 0);
}

/* The waiting time past which bytes are under the floor: rate * w > bytes * 1000. */
static int64_t floor_at(const struct bodyrate *b)
{
	int64_t at = (int64_t)(b->bytes * 1000 / b->min_rate) + 1;

	return at > b->grace_ms ? at : b->grace_ms;
}

enum bodyrate_verdict bodyrate_check(const struct bodyrate *b, int64_t now)
{
	if (b->wait_since >= 0 && now - b->wait_since >= b->stall_ms)
		return BODYRATE_STALLED;
	/* Checked while waiting only: bytes that just arrived always get to go on. */
	if (b->wait_since >= 0 && b->min_rate && waited(b, now) >= floor_at(b))
		return BODYRATE_SLOW;
	return BODYRATE_OK;
}

int64_t bodyrate_next_ms(const struct bodyrate *b, int64_t now)
{
	int64_t next;

	if (b->wait_since < 0)
		return INT64_MAX;
	next = b->wait_since + b->stall_ms - now;
	if (b->min_rate && floor_at(b) - waited(b, now) < next)
		next = floor_at(b) - waited(b, now);
	return next < 1 ? 1 : next;
}

const char *bodyrate_describe(const struct bodyrate *b, enum bodyrate_verdict v, int64_t now,
			      char *out, size_t n)
{
	if (v == BODYRATE_STALLED)
		snprintf(out, n, "request body too slow: no byte for %" PRId64 " s "
			 "(SANDBOXD_GIT_BODY_STALL)", b->stall_ms / 1000);
	else
		snprintf(out, n, "request body too slow: %" PRIu64 " bytes in %" PRId64 " s, under "
			 "%" PRIu64 " bytes/s on average (SANDBOXD_GIT_BODY_MIN_RATE)", b->bytes,
			 waited(b, now) / 1000, b->min_rate);
	return out;
}
