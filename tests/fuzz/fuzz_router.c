/* fuzz_router.c: router_match against the real table (api_routes) and router_decode_segment.
 * The input is "METHOD PATH": the method up to the first space, the path after it (the whole
 * input is the path, with GET, when there is no space). Invariants: 200 names a route of the
 * method whose parameters are NUL-terminated, non-empty and free of '/'; 405 lists methods;
 * a decoded segment is never longer than its source and holds no '/' or NUL. */
#include "fuzz.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/lib/router.h"
#include "sandboxd/common/banned.h"

static void decode(const uint8_t *data, size_t size)
{
	char *seg = fuzz_dup(data, size);
	size_t outsz = size ? 1 + data[0] % ROUTER_PARAM_MAX : 1;
	char *out = malloc(outsz);

	FUZZ_CHECK(out);
	if (router_decode_segment(seg, size, out, outsz) == 0) {
		size_t n = strlen(out);

		FUZZ_CHECK(n < outsz && n <= size);
		FUZZ_CHECK(!strchr(out, '/') || memchr(seg, '/', size));
	}
	free(out);
	free(seg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sp = memchr(data, ' ', size);
	char *method, *path;
	struct route_match m;
	int status;

	if (sp) {
		method = fuzz_cstr(data, (size_t)(sp - data));
		path = fuzz_cstr(sp + 1, size - (size_t)(sp - data) - 1);
	} else {
		method = fuzz_cstr("GET", 3);
		path = fuzz_cstr(data, size);
	}
	status = router_match(api_routes, api_routes_count, method, path, &m);
	FUZZ_CHECK(status == 0 || status == ERR_NOTFOUND || status == ERR_METHOD);
	FUZZ_CHECK(strlen(m.allow) < sizeof(m.allow));
	if (status == 0) {
		FUZZ_CHECK(m.route >= api_routes && m.route < api_routes + api_routes_count);
		FUZZ_CHECK(strcmp(m.route->method, "*") == 0 || strcmp(m.route->method, method) == 0);
		FUZZ_CHECK(m.nparams >= 0 && m.nparams <= ROUTER_MAX_PARAMS);
		for (int i = 0; i < m.nparams; i++) {
			size_t n = strnlen(m.params[i], ROUTER_PARAM_MAX);
			FUZZ_CHECK(n > 0 && n < ROUTER_PARAM_MAX);
			FUZZ_CHECK(!strchr(m.params[i], '/'));
		}
	} else {
		FUZZ_CHECK(m.route == NULL);
		FUZZ_CHECK(status == ERR_NOTFOUND ? m.allow[0] == 0 : m.allow[0] != 0);
	}
	free(path);
	free(method);
	decode(data, size);
	return 0;
}
