/* fuzz_valscan.c: the hand-over lines (valscan_decode) and the search (valscan_find) on
 * arbitrary bytes. Whatever the lines, decoding never reads past them and leaves a set that
 * frees cleanly; a set made of a part of the input always finds it in the input, on a line
 * that exists; a fixed value is found exactly when the bytes hold it or one of its forms. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "sandboxd/proto/valscan.h"
#include "sandboxd/common/banned.h"

#define FIXED "s3cr3t-v"

static size_t lines(const char *s, size_t n)
{
	size_t k = 1;

	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_dup(data, size);
	struct valscan v;
	struct scan_hit hit;
	struct err e;
	int f;

	valscan_init(&v);
	if (valscan_decode(&v, text, size, &e) == 0)
		FUZZ_CHECK(v.nsecrets <= VALSCAN_SECRETS_MAX);
	f = valscan_find(&v, text, size, &hit);
	FUZZ_CHECK(!f || (hit.rule && hit.line >= 1 && hit.line <= lines(text, size)));
	valscan_free(&v);

	/* A part of the input (from its middle, up to 64 bytes) as the value. */
	if (size >= VALSCAN_VALUE_MIN) {
		size_t at = size / 3, n = size - at < 64 ? size - at : 64;

		if (n >= VALSCAN_VALUE_MIN) {
			valscan_init(&v);
			FUZZ_CHECK(valscan_add(&v, "PART", text + at, n, &e) == 0);
			FUZZ_CHECK(valscan_find(&v, text, size, &hit) == 1);
			FUZZ_CHECK(hit.line >= 1 && hit.line <= lines(text, at) + lines(text + at, n) - 1);
			valscan_free(&v);
		}
	}
	valscan_init(&v);
	FUZZ_CHECK(valscan_add(&v, "FIXED", FIXED, sizeof(FIXED) - 1, &e) == 0);
	f = valscan_find(&v, text, size, &hit);
	if (memmem(text, size, FIXED, sizeof(FIXED) - 1))
		FUZZ_CHECK(f == 1);
	valscan_free(&v);
	free(text);
	return 0;
}
