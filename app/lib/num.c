/* num.c: bounded decimal parsing. */
#include "sandboxd/lib/num.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

int num_parse(const char *s, int64_t min, int64_t max, int64_t *out)
{
	int neg = 0;
	uint64_t v = 0, lim;

	if (!s || !*s)
		return ERR_INVALID;
	if (*s == '-') {
		if (min >= 0)
			return ERR_INVALID;
		neg = 1;
		s++;
		if (!*s)
			return ERR_INVALID;
	}
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return ERR_INVALID;
		if (v > (lim - (uint64_t)(*s - '0')) / 10)
			return ERR_INVALID;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	int64_t r = neg ? (int64_t)(0 - v) : (int64_t)v;
	if (r < min || r > max)
		return ERR_INVALID;
	*out = r;
	return 0;
}
