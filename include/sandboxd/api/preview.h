/* api_preview.h: the preview routes (api_previews.c, SPEC.md §4 "Previews"): made, listed
 * and deleted under …/sandboxes/{id}/previews, and the check nginx's auth_request makes for
 * every request to a preview's host. Only the route table includes it. */
#ifndef SANDBOXD_API_PREVIEW_H
#define SANDBOXD_API_PREVIEW_H
#include "sandboxd/http/http.h"

/* The check's path; nginx's preview server block asks it (never a client: the handler
 * answers 404 unless nginx's internal location set SANDBOXD_PREVIEW_HOST). */
#define API_PREVIEW_CHECK "/_sandboxd/preview-check"

int api_preview_create(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_preview_list(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_preview_delete(struct req *r, struct err *e) __attribute__((warn_unused_result));
int api_preview_check(struct req *r, struct err *e) __attribute__((warn_unused_result));

#endif
