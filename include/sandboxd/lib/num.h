/* num.h: bounded decimal parsing; the whole string must be digits, never atoi. */
#ifndef SANDBOXD_NUM_H
#define SANDBOXD_NUM_H
#include <stdint.h>

/* Parses s as a decimal integer in [min, max]. Returns 0, or ERR_INVALID when s is empty,
 * has anything but digits (an optional leading '-' only when min < 0), or is out of range. */
int num_parse(const char *s, int64_t min, int64_t max, int64_t *out)
	__attribute__((warn_unused_result));

#endif
