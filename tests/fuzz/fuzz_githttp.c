/* fuzz_githttp.c: githttp_match on a request's path and query string. The input is the
 * path, then '?' and the query (no '?': no query, which is NULL). Invariants: a match needs
 * "/owner/name.git/"; owner and name are NUL-terminated within their arrays and hold no '/';
 * a service implies its method, and a push is receive-pack. */
#include "fuzz.h"
#include "sandboxd/http/githttp.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *q = memchr(data, '?', size);
	size_t plen = q ? (size_t)(q - data) : size;
	char *path = fuzz_cstr(data, plen);
	char *query = q ? fuzz_cstr(q + 1, size - plen - 1) : NULL;
	struct git_route g;

	memset(&g, 0xa5, sizeof(g));
	if (githttp_match(path, query, &g)) {
		FUZZ_CHECK(path[0] == '/' && strstr(path, ".git/"));
		FUZZ_CHECK(strnlen(g.owner, sizeof(g.owner)) < sizeof(g.owner));
		FUZZ_CHECK(strnlen(g.name, sizeof(g.name)) < sizeof(g.name));
		FUZZ_CHECK(!strchr(g.owner, '/') && !strchr(g.name, '/'));
		switch (g.service) {
		case GIT_NONE:
			FUZZ_CHECK(!g.push);
			break;
		case GIT_INFO_REFS:
			FUZZ_CHECK(g.method && strcmp(g.method, "GET") == 0);
			FUZZ_CHECK(query);
			break;
		case GIT_UPLOAD_PACK:
			FUZZ_CHECK(g.method && strcmp(g.method, "POST") == 0 && !g.push);
			break;
		case GIT_RECEIVE_PACK:
			FUZZ_CHECK(g.method && strcmp(g.method, "POST") == 0 && g.push);
			break;
		default:
			FUZZ_CHECK(!"unknown service");
		}
	} else {
		FUZZ_CHECK(g.service == GIT_NONE && !g.push && g.method == NULL);
	}
	free(query);
	free(path);
	return 0;
}
