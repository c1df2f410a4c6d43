/* fuzz_pushreport.c: push_report_failed on whatever bytes the hooks' report holds (its ref
 * names come from the pusher, through git). Invariants: at most max refs; each one points
 * into the text, with 40-digit lowercase hex object ids and a non-empty ref without a space
 * or a newline, and the input has the whole line "accepted <old> <new> <ref>\n" it came from
 * (at the start of the input or after a newline). */
#define _GNU_SOURCE
#include "fuzz.h"
#include "sandboxd/proto/pushreport.h"
#include "sandboxd/common/banned.h"

static int hex40(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct push_ref r[8];
	char *text = malloc(size + 1);
	int n;

	if (!text)
		abort();
	if (size)
		memcpy(text, data, size);
	n = push_report_failed(text, size, r, 8);
	FUZZ_CHECK(n >= 0 && n <= 8);
	for (int i = 0; i < n; i++) {
		FUZZ_CHECK(r[i].ref > text && r[i].ref < text + size);
		FUZZ_CHECK(hex40(r[i].old) && hex40(r[i].new_));
		FUZZ_CHECK(r[i].ref[0] && !strchr(r[i].ref, ' ') && !strchr(r[i].ref, '\n'));
		char line[PUSH_REPORT_MAX > 4096 ? 4096 : PUSH_REPORT_MAX];
		int len = snprintf(line, sizeof(line), "\naccepted %s %s %s\n", r[i].old, r[i].new_,
				   r[i].ref);
		FUZZ_CHECK(len > 0 && (size_t)len < sizeof(line));
		FUZZ_CHECK(memmem(data, size, line + 1, (size_t)len - 1) == data ||
			   memmem(data, size, line, (size_t)len));
	}
	free(text);
	return 0;
}
