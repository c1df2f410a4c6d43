/* api_openapi.c: GET /api/v3/openapi.json, the OpenAPI document of this build (openapi.h):
 * public, as /healthz is, so that tools read it before they hold a token. The bytes never
 * change while the binary runs: a strong ETag, so that a client that keeps its copy asks
 * again with If-None-Match and gets a 304. Cache-Control stays every answer's no-store
 * (http_head): shared caches keep nothing, and an upgrade is seen at once. */
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/openapi.h"
#include "sandboxd/common/banned.h"

int openapi_etag_listed(const char *list, const char *etag)
{
	size_t n = strlen(etag);
	const char *p = list;

	if (!list)
		return 0;
	for (;;) {
		const char *start, *end;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p)
			return 0;
		for (start = p; *p && *p != ','; p++)
			;
		for (end = p; end > start && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		if (end - start == 1 && *start == '*')
			return 1;
		/* W/ counts: If-None-Match compares weakly (RFC 9110 13.1.2). */
		if (end - start > 2 && start[0] == 'W' && start[1] == '/')
			start += 2;
		if ((size_t)(end - start) == n && memcmp(start, etag, n) == 0)
			return 1;
	}
}

int api_openapi(struct req *r, struct err *e)
{
	http_header(r, "ETag", openapi_etag);
	if (openapi_etag_listed(http_param(r, "HTTP_IF_NONE_MATCH"), openapi_etag)) {
		http_empty(r, 304);
		return 0;
	}
	buf_clear(&r->out);
	if (buf_append(&r->out, openapi_json, openapi_json_len))
		return err_set(e, ERR_NOMEM, "out of memory");
	http_body(r, 200, "application/json");
	return 0;
}
