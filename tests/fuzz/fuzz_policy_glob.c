/* fuzz_policy_glob.c: policy_glob_match against a plain dynamic-programming matcher written
 * here from policy.h's definition ('*' matches any run, '/' included; every other byte
 * stands for itself). The input is the pattern, a line feed, then the name (both end at a
 * NUL byte, as C strings do). Also: every string matches itself as a pattern. */
#include "fuzz.h"
#include "sandboxd/proto/policy.h"
#include "sandboxd/common/banned.h"

/* m[j]: pattern[0..i) matches name[0..j). O(p * n) time, O(n) memory. */
static int reference(const char *p, const char *s)
{
	size_t pn = strlen(p), sn = strlen(s);
	unsigned char *m = calloc(sn + 1, 1), *next = calloc(sn + 1, 1);
	int r;

	FUZZ_CHECK(m && next);
	m[0] = 1;
	for (size_t i = 0; i < pn; i++) {
		if (p[i] == '*') {
			next[0] = m[0];
			for (size_t j = 1; j <= sn; j++)
				next[j] = m[j] || next[j - 1];
		} else {
			next[0] = 0;
			for (size_t j = 1; j <= sn; j++)
				next[j] = m[j - 1] && s[j - 1] == p[i];
		}
		unsigned char *t = m;
		m = next;
		next = t;
	}
	r = m[sn];
	free(m);
	free(next);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t plen = nl ? (size_t)(nl - data) : size;
	char *pattern = fuzz_cstr(data, plen);
	char *name = nl ? fuzz_cstr(nl + 1, size - plen - 1) : fuzz_cstr("", 0);
	int got = policy_glob_match(pattern, name);

	FUZZ_CHECK(got == 0 || got == 1);
	/* Bounded like the real inputs (policy.h's limits), so that the check stays cheap. */
	if (strlen(pattern) <= POLICY_PATTERN_MAX && strlen(name) <= POLICY_REFNAME_MAX)
		FUZZ_CHECK(got == reference(pattern, name));
	FUZZ_CHECK(policy_glob_match(name, name) == 1);
	FUZZ_CHECK(policy_glob_match(pattern, pattern) == 1);
	free(name);
	free(pattern);
	return 0;
}
