/* openapi.h: docs/openapi.yaml as JSON, compiled in (deploy/embed-openapi.py makes
 * openapi_doc.c at build time), for GET /api/v3/openapi.json (api_openapi.c). */
#ifndef SANDBOXD_API_OPENAPI_H
#define SANDBOXD_API_OPENAPI_H
#include <stddef.h>

extern const unsigned char openapi_json[];
extern const size_t openapi_json_len;
/* A strong ETag of the bytes, quotes included. */
extern const char openapi_etag[];

/* 1 when the If-None-Match value list (NULL: none) names etag, W/ or not, or is "*";
 * else 0. The list is the client's bytes (tests/fuzz/fuzz_etag.c). */
int openapi_etag_listed(const char *list, const char *etag) __attribute__((warn_unused_result));
#endif
