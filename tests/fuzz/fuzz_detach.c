/* fuzz_detach.c: detached exec's readers of untrusted text: the query string of
 * GET …/execs/{execId} (the input's first line) and the state the container prints (the
 * rest). Invariants: an offset parsed is below 10^18; the state's byte ranges are ordered
 * (first <= total) and its duration within bounds. */
#include "fuzz.h"
#include "sandboxd/detach.h"
#include "sandboxd/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	char *nl = strchr(text, '\n');
	struct detach_state st;
	uint64_t v;

	if (nl)
		*nl = 0;
	if (detach_query_offset(text, "stdoutOffset", &v) == 0)
		FUZZ_CHECK(v < 1000000000000000000ULL);
	if (detach_query_offset(text, "stderrOffset", &v) == 0)
		FUZZ_CHECK(v < 1000000000000000000ULL);
	detach_parse_state(nl ? nl + 1 : text + strlen(text), &st);
	for (int i = 0; i < 2; i++)
		FUZZ_CHECK(st.first[i] <= st.total[i]);
	FUZZ_CHECK(st.duration_ms >= 0 && st.duration_ms < (1LL << 40));
	FUZZ_CHECK(st.ended == 0 || st.ended == 1);
	free(text);
	return 0;
}
