/* clock.h: the monotonic clock in milliseconds, for deadlines and durations (never the wall
 * clock, which may jump). */
#ifndef SANDBOXD_CLOCK_H
#define SANDBOXD_CLOCK_H
#include <stdint.h>
#include <time.h>

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t clock_ms(void);
/* Milliseconds of the CLOCK_MONOTONIC reading t. */
int64_t clock_ms_of(const struct timespec *t);
/* Milliseconds since t0 (a CLOCK_MONOTONIC reading). */
int64_t clock_ms_since(const struct timespec *t0);
/* Microseconds since t0, for durations that metrics record. */
int64_t clock_us_since(const struct timespec *t0);

#endif
