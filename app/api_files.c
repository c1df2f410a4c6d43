/* api_files.c: POST …/sandboxes/{id}/read and …/write. The handlers check the caller and
 * the request and shape the answer; the file work is files.c, as the sandbox's user. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/api.h"
#include "sandboxd/base64.h"
#include "sandboxd/files.h"
#include "sandboxd/json.h"
#include "sandboxd/path.h"
#include "sandboxd/banned.h"

/* A read's answer, {"path": …, "size": N, "content": "<base64>"}, written straight into
 * the response as the bytes arrive: the file is never held apart from its base64, and the
 * base64 never apart from the response. */
struct read_out {
	struct req *r;
	const char *path;
	unsigned char carry[3];  /* bytes waiting for a group of three */
	size_t ncarry;
};

/* The response up to the content's first character, in one allocation of its final size. */
static int read_start(void *arg, uint64_t size, struct err *e)
{
	struct read_out *o = arg;
	struct buf *out = &o->r->out;
	char num[32];
	int rc;

	buf_clear(out);
	snprintf(num, sizeof(num), ",\"size\":%llu,\"content\":\"", (unsigned long long)size);
	if ((rc = buf_puts(out, "{\"path\":")) ||
	    (rc = json_write_string(out, o->path, strlen(o->path))) || (rc = buf_puts(out, num)) ||
	    (rc = buf_reserve(out, base64_encoded_size((size_t)size) + 3)))
		return err_set(e, rc, "out of memory");
	json_add_int(o->r->audit_details, "size", (int64_t)size);
	return 0;
}

/* The reservation holds the whole text: files_read never passes the size it announced. */
static int read_bytes(void *arg, const char *data, size_t n, struct err *e)
{
	struct read_out *o = arg;
	struct buf *out = &o->r->out;
	const unsigned char *p = (const unsigned char *)data;

	while (o->ncarry > 0 && o->ncarry < 3 && n > 0) {
		o->carry[o->ncarry++] = *p++;
		n--;
	}
	if (o->ncarry == 3) {
		base64_encode(o->carry, 3, out->data + out->len);
		buf_advance(out, 4);
		o->ncarry = 0;
	}
	size_t whole = n / 3 * 3;
	base64_encode(p, whole, out->data + out->len);
	buf_advance(out, whole / 3 * 4);
	memcpy(o->carry, p + whole, n - whole);
	o->ncarry = n - whole;
	return 0;
}

/* The path field, normalised; 0, or answered (400) when it is not a path. */
static const char *path_field(struct req *r, const char **path)
{
	struct err e = { "" };
	char *abs = NULL;

	if (json_field_string(r->json, "path", 1, PATH_IN_MAX, path, &e) < 0 ||
	    !(abs = path_normalize(r->pool, *path, &e)))
		api_sandbox_error(r, 400, "%s", e.msg);
	return abs;
}

int api_sandbox_read(struct req *r)
{
	const char *path, *abs;
	struct repo repo;
	struct sandbox s;
	struct read_out ro = { .r = r };
	struct files_sink sink = { read_start, read_bytes, &ro };
	struct err e = { "" };
	int rc, is_dir;

	if (api_sandbox_access(r, &repo, &s, 1) || !(abs = path_field(r, &path)) ||
	    api_sandbox_ready(r, &s))
		return 0;
	json_add_str(r->audit_details, "path", abs);
	ro.path = path;
	rc = files_read(&s, abs, r->cfg->file_limit, &sink, &is_dir, &e);
	if (!rc && ro.ncarry) {
		base64_encode(ro.carry, ro.ncarry, r->out.data + r->out.len);
		buf_advance(&r->out, 4);
	}
	if (!rc && (rc = buf_puts(&r->out, "\"}\n")))
		err_set(&e, rc, "out of memory");
	if (!rc && !(rc = sandbox_touch(r, &s, &e))) {
		r->status = 200;
		r->responded = 1;
		return 0;
	}
	buf_clear(&r->out);
	switch (rc) {
	case ERR_NOTFOUND: api_sandbox_error(r, 404, "no such file: %s", path); break;
	case ERR_TOOBIG: api_sandbox_error(r, 413, "file too large"); break;
	case ERR_INVALID:
		api_sandbox_error(r, 400, "%s is not a regular file%s", path,
				  is_dir ? " (a directory)" : "");
		break;
	case ERR_DENIED: api_sandbox_error(r, 403, "cannot read %s: permission denied", path); break;
	case ERR_EXISTS: api_sandbox_error(r, 409, "%s changed while it was read; try again", path); break;
	default: http_fail(r, rc, &e);
	}
	return 0;
}

/* The content field, decoded into *data (malloc'd, the caller frees it). 0, or answered. */
static int content_field(struct req *r, unsigned char **data, size_t *len)
{
	json_object *content;

	/* By hand, not json_field_string: no strlen over megabytes (a NUL in it is not base64
	 * and fails the decoding). */
	if (!json_object_object_get_ex(r->json, "content", &content) ||
	    json_object_is_type(content, json_type_null)) {
		api_sandbox_error(r, 400, "field 'content' is required");
		return 1;
	}
	if (!json_object_is_type(content, json_type_string)) {
		api_sandbox_error(r, 400, "field 'content' must be a string");
		return 1;
	}
	size_t clen = (size_t)json_object_get_string_len(content);
	if (clen / 4 * 3 > r->cfg->file_limit + 2) {
		api_sandbox_error(r, 413, "file too large");
		return 1;
	}
	/* Its own allocation, freed at the end, rather than the request's pool. */
	if (!(*data = malloc(clen / 4 * 3 + 3))) {
		struct err e;
		http_fail(r, err_set(&e, ERR_NOMEM, "out of memory"), &e);
		return 1;
	}
	if (base64_decode(json_object_get_string(content), clen, *data, len)) {
		api_sandbox_error(r, 400, "field 'content' must be base64");
		return 1;
	}
	if (*len > r->cfg->file_limit) {
		api_sandbox_error(r, 413, "file too large");
		return 1;
	}
	return 0;
}

int api_sandbox_write(struct req *r)
{
	const char *path, *abs;
	int64_t mode = 0644;
	struct repo repo;
	struct sandbox s;
	struct err e = { "" };
	unsigned char *data = NULL;
	size_t len = 0;
	int rc;

	if (api_sandbox_access(r, &repo, &s, 1) || auth_need_user_write(r) ||
	    !(abs = path_field(r, &path)))
		return 0;
	if (json_field_int(r->json, "mode", 0, 0, 07777, &mode, &e) < 0 || strcmp(abs, "/") == 0) {
		api_sandbox_error(r, 400, "%s", e.msg[0] ? e.msg : "field 'path' must name a file");
		return 0;
	}
	if (content_field(r, &data, &len) || api_sandbox_ready(r, &s))
		goto out;
	json_add_str(r->audit_details, "path", abs);
	json_add_int(r->audit_details, "size", (int64_t)len);
	rc = files_write(&s, abs, (unsigned)mode, data, len, &e);
	if (!rc && !(rc = sandbox_touch(r, &s, &e))) {
		json_object *o = json_object_new_object();
		json_add_bool(o, "ok", 1);
		json_add_str(o, "path", path);
		json_add_int(o, "size", (int64_t)len);
		http_json(r, 200, o);
		goto out;
	}
	switch (rc) {
	case ERR_EXISTS: api_sandbox_error(r, 400, "%s is a directory", path); break;
	case ERR_NOTDIR: api_sandbox_error(r, 400, "%s: a parent is not a directory", path); break;
	case ERR_DENIED: api_sandbox_error(r, 403, "cannot write %s: permission denied", path); break;
	case ERR_INVALID: api_sandbox_error(r, 400, "cannot write %s: %s", path, e.msg); break;
	default: http_fail(r, rc, &e);
	}
out:
	free(data);
	return 0;
}
