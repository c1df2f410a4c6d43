/* fuzz_etag.c: openapi_etag_listed, which reads a client's If-None-Match header for
 * GET /api/v3/openapi.json (api/openapi.c).
 *
 * Input: the header's value (a C string: an embedded NUL ends it). Invariants: a list that
 * names the tag holds it or a '*'; the same list with ", <tag>" after it always names it;
 * the build's own ETag is matched the same way as a fixed one. */
#include "fuzz.h"
#include "sandboxd/api/openapi.h"
#include "sandboxd/common/banned.h"

static const char tag[] = "\"0123456789abcdef0123456789abcdef\"";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	size_t n = strlen(s);
	char *more = malloc(n + sizeof(tag) + 2);

	if (!more)
		abort();
	if (openapi_etag_listed(s, tag))
		FUZZ_CHECK(strstr(s, tag) || strchr(s, '*'));
	if (openapi_etag_listed(s, openapi_etag))
		FUZZ_CHECK(strstr(s, openapi_etag) || strchr(s, '*'));
	memcpy(more, s, n);
	memcpy(more + n, ", ", 2);
	memcpy(more + n + 2, tag, sizeof(tag));
	FUZZ_CHECK(openapi_etag_listed(more, tag) == 1);
	free(more);
	free(s);
	return 0;
}
