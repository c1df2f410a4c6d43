/* fuzz_policy_json.c: policy_parse_json on the text the push hook gets in its environment
 * (a C string), then policy_check of a few ref names against what it parsed. Invariants:
 * success gives at most POLICY_MAX policies, each with a pattern of 1..POLICY_PATTERN_MAX
 * bytes without control characters and known, non-empty ops; failure gives the empty list
 * and a message; reasons are NUL-terminated in buffers of any size. */
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/policy.h"
#include "sandboxd/common/banned.h"

static const char *const refs[] = {
	"refs/heads/main", "refs/tags/v1.0", "refs/namespaces/ephemeral/refs/heads/x",
	"refs/heads/", "", "*",
};

static void check(const struct policy_list *list, const char *ref, size_t reasonsz)
{
	static const enum policy_update updates[] = { POLICY_CREATE, POLICY_DELETE,
						      POLICY_FAST_FORWARD, POLICY_NON_FAST_FORWARD };
	char *reason = malloc(reasonsz ? reasonsz : 1);

	FUZZ_CHECK(reason);
	for (size_t u = 0; u < 4; u++) {
		int r;

		memset(reason, 'x', reasonsz);
		r = policy_check(list, ref, updates[u], reason, reasonsz);
		FUZZ_CHECK(r == 0 || r == 1);
		if (reasonsz) {
			FUZZ_CHECK(memchr(reason, 0, reasonsz));
			FUZZ_CHECK(r == 1 ? reason[0] != 0 || reasonsz == 1 : reason[0] == 0);
		}
		/* Creations and fast-forwards pass unless no-push decides. */
		if (r && (updates[u] == POLICY_CREATE || updates[u] == POLICY_FAST_FORWARD))
			FUZZ_CHECK(policy_decide(list, ref, NULL) & POLICY_NO_PUSH);
	}
	free(reason);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	struct policy_list list;
	struct err e;
	int rc;

	e.msg[0] = 0;
	memset(&list, 0xa5, sizeof(list));
	rc = policy_parse_json(text, &list, &e);
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID || rc == ERR_TOOBIG || rc == ERR_NOMEM);
		FUZZ_CHECK(list.n == 0 && e.msg[0]);
		free(text);
		return 0;
	}
	FUZZ_CHECK(list.n <= POLICY_MAX);
	for (size_t i = 0; i < list.n; i++) {
		size_t n = strnlen(list.v[i].pattern, sizeof(list.v[i].pattern));

		FUZZ_CHECK(n >= 1 && n <= POLICY_PATTERN_MAX);
		for (size_t k = 0; k < n; k++)
			FUZZ_CHECK((unsigned char)list.v[i].pattern[k] >= 0x20 &&
				   list.v[i].pattern[k] != 0x7f);
		FUZZ_CHECK(list.v[i].ops && !(list.v[i].ops & ~3u));
		/* A policy's own pattern, taken as a ref name, is decided by it or an earlier one. */
		const char *by = NULL;
		policy_decide(&list, list.v[i].pattern, &by);
		FUZZ_CHECK(by && by <= list.v[i].pattern);
	}
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		check(&list, refs[i], size ? data[0] % 80 : 0);
	check(&list, refs[0], POLICY_REASON_MAX);
	/* A name past POLICY_REFNAME_MAX fails closed (unless nothing is restricted). */
	char *longref = malloc(POLICY_REFNAME_MAX + 2);
	FUZZ_CHECK(longref);
	memset(longref, 'a', POLICY_REFNAME_MAX + 1);
	longref[POLICY_REFNAME_MAX + 1] = 0;
	FUZZ_CHECK(policy_decide(&list, longref, NULL) == (list.n ? (unsigned)POLICY_NO_PUSH : 0));
	check(&list, longref, POLICY_REASON_MAX);
	free(longref);
	free(text);
	return 0;
}
