/* fuzz_detach.c: detached exec's readers of untrusted text: the query string of
 * GET …/execs/{execId} (the input's first line) and the state the container prints (the
 * rest, read both as one exec's state and as the blocks of three). Invariants: an offset
 * parsed is below 10^18; each state's byte ranges are ordered (first <= total), its duration
 * within bounds, its flags 0 or 1. */
#include "fuzz.h"
#include "sandboxd/proto/detach.h"
#include "sandboxd/common/banned.h"

static void check_state(const struct detach_state *st)
{
	for (int i = 0; i < 2; i++)
		FUZZ_CHECK(st->first[i] <= st->total[i]);
	FUZZ_CHECK(st->duration_ms >= 0 && st->duration_ms < (1LL << 40));
	FUZZ_CHECK(st->ended == 0 || st->ended == 1);
	FUZZ_CHECK(st->killed == 0 || st->killed == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ids[] = { "ex_000000000000000000000001", "a", "" };
	char *text = fuzz_cstr(data, size);
	char *nl = strchr(text, '\n');
	struct detach_state st, sts[3];
	int found[3];
	char *copy;
	uint64_t v;

	if (nl)
		*nl = 0;
	if (detach_query_offset(text, "stdoutOffset", &v) == 0)
		FUZZ_CHECK(v < 1000000000000000000ULL);
	if (detach_query_offset(text, "stderrOffset", &v) == 0)
		FUZZ_CHECK(v < 1000000000000000000ULL);
	copy = strdup(nl ? nl + 1 : text + strlen(text));
	FUZZ_CHECK(copy != NULL);
	detach_parse_state(nl ? nl + 1 : text + strlen(text), &st);
	check_state(&st);
	detach_parse_states(copy, ids, 3, sts, found);
	for (int i = 0; i < 3; i++) {
		FUZZ_CHECK(found[i] == 0 || found[i] == 1);
		check_state(&sts[i]);
	}
	free(copy);
	free(text);
	return 0;
}
