/* fuzz_num.c: num_parse, which reads numbers out of URL path segments (a token id) and the
 * environment, against a reference written from num.h with 128-bit arithmetic.
 *
 * Input: a bounds byte (low nibble: min, high nibble: max, each from the table below), then
 * the string (a C string: an embedded NUL ends it). Invariants: a value is accepted exactly
 * when the string is an optional '-' (only when min < 0) and one or more ASCII digits whose
 * value lies in [min, max], and it is that value; a refused string leaves *out untouched. */
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/common/banned.h"

static const int64_t bound[16] = {
	INT64_MIN, INT64_MIN + 1, -1000000, -5, -1, 0, 1, 5,
	10, 1024, 65536, 4294967295LL, 1000000000000LL, INT64_MAX - 1, INT64_MAX, 7,
};

/* 0 and the value, or -1. Digits past 2^80 only keep it out of range. */
static int reference(const char *s, int64_t min, int64_t max, int64_t *out)
{
	__int128 v = 0, cap = (__int128)1 << 80;
	int neg = 0;

	if (*s == '-' && min < 0) {
		neg = 1;
		s++;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > cap)
			v = cap;
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t min, max, got = 42, want = 0;
	char *s;
	int rc, ref;

	if (size < 1)
		return 0;
	min = bound[data[0] & 15];
	max = bound[data[0] >> 4];
	s = fuzz_cstr(data + 1, size - 1);
	rc = num_parse(s, min, max, &got);
	ref = reference(s, min, max, &want);
	if (ref == 0) {
		FUZZ_CHECK(rc == 0 && got == want);
	} else {
		FUZZ_CHECK(rc == ERR_INVALID && got == 42);
	}
	free(s);
	return 0;
}
