/* fuzz_scanstream.c: the secret scanner over a stream (scanstream.h). The first two bytes
 * choose the window's step and the chunk size; the rest is the stream, fed in chunks.
 * Invariant: the answer (found, rule, line) is scan_buffer's on the whole stream, however
 * it was cut. */
#include "fuzz.h"
#include "sandboxd/proto/scanstream.h"
#include "sandboxd/common/banned.h"

static struct scanstream s;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scan_hit want, got;
	size_t step, chunk;
	unsigned char *blob;
	int found;

	if (size < 2)
		return 0;
	step = 1 + (size_t)data[0] * 16;
	chunk = 1 + (size_t)data[1] * 3;
	data += 2;
	size -= 2;
	blob = (unsigned char *)fuzz_dup(data, size);
	found = scan_buffer(size ? blob : NULL, size, &want);
	scanstream_init(&s, step);
	for (size_t i = 0; i < size; i += chunk) {
		/* Each chunk in its own buffer of its exact size (ASan sees a read past it). */
		size_t n = size - i < chunk ? size - i : chunk;
		unsigned char *c = (unsigned char *)fuzz_dup(data + i, n);
		int stop = scanstream_feed(&s, c, n);

		free(c);
		if (stop)
			break;
	}
	FUZZ_CHECK(scanstream_end(&s, &got) == found);
	FUZZ_CHECK(got.rule == want.rule && got.line == want.line);
	free(blob);
	return 0;
}
