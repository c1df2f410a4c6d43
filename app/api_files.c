/* api_files.c: reading and writing files in a sandbox through Docker's archive API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sandboxd/api.h"
#include "sandboxd/base64.h"
#include "sandboxd/docker.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/path.h"
#include "sandboxd/tar.h"
#include "sandboxd/banned.h"

#define CALL_MS 60000L
#define PATH_MAX_LEN 4096

/* A read's answer, {"path": …, "size": N, "content": "<base64>"}, written straight into
 * the response as the archive arrives: the file is never held apart from its base64, and
 * the base64 never apart from the response. */
struct read_out {
	struct req *r;
	const char *path;
	unsigned char carry[3];  /* bytes waiting for a group of three */
	size_t ncarry;
	int started;
};

/* The response up to the content's first character, in one allocation of its final size. */
static int read_start(struct read_out *o, uint64_t size, struct err *e)
{
	struct buf *out = &o->r->out;
	char num[32];
	int rc;

	buf_clear(out);
	snprintf(num, sizeof(num), ",\"size\":%llu,\"content\":\"", (unsigned long long)size);
	if ((rc = buf_puts(out, "{\"path\":")) || (rc = json_write_string(out, o->path, strlen(o->path))) ||
	    (rc = buf_puts(out, num)) ||
	    (rc = buf_reserve(out, base64_encoded_size((size_t)size) + 3)))
		return err_set(e, rc, "out of memory");
	o->started = 1;
	return 0;
}

static int read_sink(void *arg, const struct tar_reader *tr, const char *data, size_t n,
		     struct err *e)
{
	struct read_out *o = arg;
	struct buf *out = &o->r->out;
	const unsigned char *p = (const unsigned char *)data;
	size_t whole;
	int rc;

	if (!o->started && (rc = read_start(o, tr->file.size, e)))
		return rc;
	while (o->ncarry > 0 && o->ncarry < 3 && n > 0) {
		o->carry[o->ncarry++] = *p++;
		n--;
	}
	if (o->ncarry == 3) {
		base64_encode(o->carry, 3, out->data + out->len);
		buf_advance(out, 4);
		o->ncarry = 0;
	}
	whole = n / 3 * 3;
	/* The reservation holds the whole text: the tar reader never passes the size. */
	base64_encode(p, whole, out->data + out->len);
	buf_advance(out, whole / 3 * 4);
	memcpy(o->carry, p + whole, n - whole);
	o->ncarry = n - whole;
	return 0;
}

int api_sandbox_read(struct req *r)
{
	const char *path;
	struct repo repo;
	struct sandbox s;
	struct tar_reader *tr = NULL;
	struct tar_file f;
	struct read_out ro;
	struct err e = { "" };
	int rc;

	if (api_sandbox_access(r, &repo, &s, 1))
		return 0;
	if ((rc = json_field_string(r->json, "path", 1, PATH_MAX_LEN, &path, &e)) < 0) {
		api_sandbox_error(r, 400, "%s", e.msg);
		return 0;
	}
	char *abs = path_normalize(r->pool, path, &e);
	if (!abs) {
		api_sandbox_error(r, 400, "%s", e.msg);
		return 0;
	}
	if (api_sandbox_ready(r, &s))
		return 0;
	json_add_str(r->audit_details, "path", abs);
	if (!(tr = pool_alloc(r->pool, sizeof(*tr))))
		return err_set(&e, ERR_NOMEM, "out of memory"), http_fail(r, ERR_NOMEM, &e);
	memset(&ro, 0, sizeof(ro));
	ro.r = r;
	ro.path = path;
	tar_reader_init(tr, r->cfg->file_limit);
	tr->sink = read_sink;
	tr->sink_arg = &ro;
	rc = docker_archive_read(s.container_id, abs, tr, CALL_MS, &e);
	if (!rc)
		rc = tar_reader_finish(tr, &f, &e);
	if (!rc && !ro.started)
		rc = read_start(&ro, 0, &e);
	if (!rc && ro.ncarry) {
		base64_encode(ro.carry, ro.ncarry, r->out.data + r->out.len);
		buf_advance(&r->out, 4);
	}
	if (!rc && (rc = buf_puts(&r->out, "\"}\n")))
		err_set(&e, rc, "out of memory");
	char type = tr->type;
	tar_reader_release(tr);
	if (rc) {
		buf_clear(&r->out);
		if (rc == ERR_NOTFOUND)
			api_sandbox_error(r, 404, "no such file: %s", path);
		else if (rc == ERR_TOOBIG)
			api_sandbox_error(r, 413, "file too large");
		else if (rc == ERR_INVALID)
			api_sandbox_error(r, 400, "%s is not a regular file%s", path,
					  type == TAR_DIR ? " (a directory)" : "");
		else
			http_fail(r, rc, &e);
		return 0;
	}
	json_add_int(r->audit_details, "size", (int64_t)f.size);
	if ((rc = sandbox_touch(r, &s, &e)))
		return http_fail(r, rc, &e);
	r->status = 200;
	r->responded = 1;
	return 0;
}

/* The deepest directory that exists above abs (stat by stat, up from abs's parent) into
 * dir. 0; 1 when the handler answered (a parent is not a directory, or an error). */
static int existing_parent(struct req *r, const struct sandbox *s, const char *abs,
			   const char *path, char *dir)
{
	struct docker_path_stat st;
	struct err e = { "" };
	char *slash;
	int rc;

	memcpy(dir, abs, strlen(abs) + 1);
	for (;;) {
		slash = strrchr(dir, '/');
		if (slash == dir) {
			dir[1] = 0;
			return 0;
		}
		*slash = 0;
		rc = docker_archive_stat(s->container_id, dir, &st, CALL_MS, &e);
		if (rc == 0 && st.is_dir)
			return 0;
		if (rc == 0) {
			api_sandbox_error(r, 400, "%s: a parent is not a directory", path);
			return 1;
		}
		if (rc != ERR_NOTFOUND)
			return http_fail(r, rc, &e) + 1;
	}
}

/* PUTs the file at dir, naming abs below it (with entries for the directories between).
 * 0, or the code of docker_archive_put_parts. */
static int put_file(const struct sandbox *s, const char *dir, const char *abs, unsigned mode,
		    const unsigned char *data, size_t len, struct err *e)
{
	const char *rel = abs + strlen(dir) + (strcmp(dir, "/") ? 1 : 0);
	struct buf head, tail;
	int rc;

	buf_init(&head, tar_write_size(rel, 0) + 1024);
	buf_init(&tail, 2 * TAR_BLOCK + TAR_BLOCK);
	rc = tar_write_head(&head, rel, mode, (int64_t)time(NULL), len, e);
	if (!rc)
		rc = tar_write_tail(&tail, len, e);
	if (!rc) {
		struct docker_part parts[] = { { head.data, head.len }, { data, len },
					       { tail.data, tail.len } };
		rc = docker_archive_put_parts(s->container_id, dir, parts, 3, CALL_MS, e);
	}
	buf_release(&head);
	buf_release(&tail);
	return rc;
}

int api_sandbox_write(struct req *r)
{
	const char *path;
	json_object *content;
	int64_t mode = 0644;
	struct repo repo;
	struct sandbox s;
	struct err e = { "" };
	unsigned char *data = NULL;
	int rc;

	if (api_sandbox_access(r, &repo, &s, 1) || auth_need_user_write(r))
		return 0;
	if ((rc = json_field_string(r->json, "path", 1, PATH_MAX_LEN, &path, &e)) < 0 ||
	    (rc = json_field_int(r->json, "mode", 0, 0, 07777, &mode, &e)) < 0) {
		api_sandbox_error(r, 400, "%s", e.msg);
		return 0;
	}
	/* The content by hand, not json_field_string: no strlen over megabytes (a NUL in it is
	 * not base64 and fails the decoding). */
	if (!json_object_object_get_ex(r->json, "content", &content) ||
	    json_object_is_type(content, json_type_null)) {
		api_sandbox_error(r, 400, "field 'content' is required");
		return 0;
	}
	if (!json_object_is_type(content, json_type_string)) {
		api_sandbox_error(r, 400, "field 'content' must be a string");
		return 0;
	}
	char *abs = path_normalize(r->pool, path, &e);
	if (!abs || strcmp(abs, "/") == 0) {
		api_sandbox_error(r, 400, "%s", abs ? "field 'path' must name a file" : e.msg);
		return 0;
	}
	size_t clen = (size_t)json_object_get_string_len(content), len = 0;
	if (clen / 4 * 3 > r->cfg->file_limit + 2) {
		api_sandbox_error(r, 413, "file too large");
		return 0;
	}
	/* Its own allocation, freed at the end, rather than the request's pool. */
	if (!(data = malloc(clen / 4 * 3 + 3)))
		return err_set(&e, ERR_NOMEM, "out of memory"), http_fail(r, ERR_NOMEM, &e);
	if (base64_decode(json_object_get_string(content), clen, data, &len)) {
		api_sandbox_error(r, 400, "field 'content' must be base64");
		goto out;
	}
	if (len > r->cfg->file_limit) {
		api_sandbox_error(r, 413, "file too large");
		goto out;
	}
	if (api_sandbox_ready(r, &s))
		goto out;
	json_add_str(r->audit_details, "path", abs);
	json_add_int(r->audit_details, "size", (int64_t)len);
	/* PUT at the parent, naming only the file: Docker would give an existing directory the
	 * archive entry's owner and mode. The parent usually exists; when it does not (404),
	 * PUT at the deepest directory that does, with entries for those below it. */
	char *dir = pool_strdup(r->pool, abs);
	if (!dir) {
		http_fail(r, err_set(&e, ERR_NOMEM, "out of memory"), &e);
		goto out;
	}
	*strrchr(dir, '/') = 0;
	if (!dir[0]) {
		dir[0] = '/';
		dir[1] = 0;
	}
	rc = put_file(&s, dir, abs, (unsigned)mode, data, len, &e);
	if (rc == ERR_NOTFOUND) {
		if (existing_parent(r, &s, abs, path, dir))
			goto out;
		rc = put_file(&s, dir, abs, (unsigned)mode, data, len, &e);
	}
	if (rc == ERR_EXISTS) {
		api_sandbox_error(r, 400, "%s is a directory", path);
		goto out;
	}
	if (rc == ERR_INVALID && strstr(e.msg, "is not a directory")) {
		api_sandbox_error(r, 400, "%s: a parent is not a directory", path);
		goto out;
	}
	if (rc == ERR_INVALID || rc == ERR_NOTFOUND) {
		api_sandbox_error(r, 400, "cannot write %s: %s", path, e.msg);
		goto out;
	}
	if (rc || (rc = sandbox_touch(r, &s, &e))) {
		http_fail(r, rc, &e);
		goto out;
	}
	json_object *o = json_object_new_object();
	json_add_bool(o, "ok", 1);
	json_add_str(o, "path", path);
	json_add_int(o, "size", (int64_t)len);
	http_json(r, 200, o);
out:
	free(data);
	return 0;
}
