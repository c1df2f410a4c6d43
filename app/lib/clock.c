/* clock.c: the monotonic clock in milliseconds (clock.h). */
#include "sandboxd/lib/clock.h"
#include "sandboxd/common/banned.h"

int64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return clock_ms_of(&ts);
}

int64_t clock_ms_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000 + t->tv_nsec / 1000000;
}

int64_t clock_ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

int64_t clock_us_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - t0->tv_sec) * 1000000 + (now.tv_nsec - t0->tv_nsec) / 1000;
}
