/* fuzz_scan.c: scan_buffer on a pushed blob. Invariants: a hit names one of the rule
 * families and a line within the blob; the answer is the same without hit; a line feed
 * added at the end changes nothing (the end of a blob bounds a secret as a
 * non-alphanumeric character does, and a line break alone opens no key). Binary input is
 * scanned like any other: no invariant exempts it. */
#include "fuzz.h"
#include "sandboxd/proto/scan.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *blob = (unsigned char *)fuzz_dup(data, size);
	struct scan_hit hit = { (const char *)1, 12345 };
	size_t lines = 1;
	int found = scan_buffer(size ? blob : NULL, size, &hit), known = 0;

	for (size_t i = 0; i < size; i++)
		lines += blob[i] == '\n';
	FUZZ_CHECK(found == 0 || found == 1);
	if (!found) {
		FUZZ_CHECK(hit.rule == NULL && hit.line == 0);
	} else {
		for (size_t k = 0; scan_rule_name(k); k++)
			known |= hit.rule == scan_rule_name(k);
		FUZZ_CHECK(known);
		FUZZ_CHECK(hit.line >= 1 && hit.line <= lines);
	}
	FUZZ_CHECK(scan_buffer(size ? blob : NULL, size, NULL) == found);
	unsigned char *more = malloc(size + 1);
	struct scan_hit hit2;

	FUZZ_CHECK(more);
	if (size)
		memcpy(more, data, size);
	more[size] = '\n';
	FUZZ_CHECK(scan_buffer(more, size + 1, &hit2) == found);
	FUZZ_CHECK(hit2.rule == hit.rule && hit2.line == hit.line);
	free(more);
	free(blob);
	return 0;
}
