/* fuzz_review.c: the review routes' parsers of client text: review_namespace (the query),
 * review_split_range ({base}...{head}), review_full_ref (DELETE's {ref}).
 *
 * Input: `query\nrange\nref` (missing parts are empty). Invariants: the namespace is 0 or
 * 1, and 1 only when the query holds "namespace=ephemeral"; every refusal is a 422; an
 * accepted range is base "..." head again, base non-empty and free of "...", head
 * non-empty; an accepted ref is "refs/" + ref (after the namespace's prefix when
 * ephemeral) and starts with heads/ or tags/. */
#include <git2.h>
#include "fuzz.h"
#include "sandboxd/git/review.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	git_libgit2_init();
	return 0;
}

static char *part(char **p)
{
	char *s = *p, *nl = strchr(s, '\n');

	if (nl) {
		*nl = 0;
		*p = nl + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_cstr(data, size), *p = buf, *query, *range, *ref;
	char base[64], head[64], full[REVIEW_REF_MAX], want[REVIEW_REF_MAX + 8];
	struct err e = { .msg = "" };
	int eph = -1, rc;

	query = part(&p);
	range = part(&p);
	ref = part(&p);
	rc = review_namespace(query, &eph, &e);
	FUZZ_CHECK(rc == 0 || (rc == ERR_ANSWER && e.status == 422));
	FUZZ_CHECK(eph == 0 || eph == 1);
	if (eph == 1)
		FUZZ_CHECK(strstr(query, "namespace=ephemeral") != NULL);
	if (review_split_range(range, base, sizeof(base), head, sizeof(head), &e) == 0) {
		snprintf(want, sizeof(want), "%s...%s", base, head);
		FUZZ_CHECK(strcmp(want, range) == 0);
		FUZZ_CHECK(base[0] && head[0] && !strstr(base, "..."));
	} else {
		FUZZ_CHECK(e.status == 422);
	}
	if (review_full_ref(ref, eph == 1, full, sizeof(full), &e) == 0) {
		snprintf(want, sizeof(want), "%srefs/%s", eph == 1 ? REVIEW_NS : "", ref);
		FUZZ_CHECK(strcmp(want, full) == 0);
		FUZZ_CHECK(!strncmp(ref, "heads/", 6) || !strncmp(ref, "tags/", 5));
	} else {
		FUZZ_CHECK(e.status == 422);
	}
	free(buf);
	return 0;
}
