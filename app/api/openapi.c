/* api_openapi.c: GET /api/v3/openapi.json, the OpenAPI document of this build (openapi.h):
 * public, as /healthz is, so that tools read it before they hold a token. The bytes never
 * change while the binary runs: a strong ETag, so that a client that keeps its copy asks
 * again with If-None-Match and gets a 304. Cache-Control stays every answer's no-store
 * (http_head): shared caches keep nothing, and an upgrade is seen at once. */
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/openapi.h"
#include "sandboxd/common/banned.h"

/* If-None-Match: "*", or a list of tags of which one is ours (W/ counts: a weak comparison,
 * as RFC 9110 asks for If-None-Match). */
static int not_modified(const char *inm)
{
	size_t n = strlen(openapi_etag);

	if (!inm)
		return 0;
	if (strcmp(inm, "*") == 0)
		return 1;
	for (const char *p = inm; (p = strstr(p, openapi_etag)) != NULL; p += n) {
		const char *end = p + n;

		if (*end == 0 || *end == ',' || *end == ' ' || *end == '\t')
			return 1;
	}
	return 0;
}

int api_openapi(struct req *r, struct err *e)
{
	http_header(r, "ETag", openapi_etag);
	if (not_modified(http_param(r, "HTTP_IF_NONE_MATCH"))) {
		http_empty(r, 304);
		return 0;
	}
	buf_clear(&r->out);
	if (buf_append(&r->out, openapi_json, openapi_json_len))
		return err_set(e, ERR_NOMEM, "out of memory");
	http_body(r, 200, "application/json");
	return 0;
}
