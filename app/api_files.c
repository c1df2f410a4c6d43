/* api_files.c: reading and writing files in a sandbox through Docker's archive API. */
#include <stdio.h>
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

int api_sandbox_read(struct req *r)
{
	const char *path;
	struct repo repo;
	struct sandbox s;
	struct tar_file f;
	struct err e = { "" };
	char type = 0;
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
	memset(&f, 0, sizeof(f));
	rc = docker_archive_read_file(s.container_id, abs, r->cfg->file_limit, &f, &type, CALL_MS,
				      &e);
	if (rc == ERR_NOTFOUND) {
		api_sandbox_error(r, 404, "no such file: %s", path);
		return 0;
	}
	if (rc == ERR_TOOBIG) {
		api_sandbox_error(r, 413, "file too large");
		return 0;
	}
	if (rc == ERR_INVALID) {
		api_sandbox_error(r, 400, "%s is not a regular file%s", path,
				  type == TAR_DIR ? " (a directory)" : "");
		return 0;
	}
	if (rc)
		return http_fail(r, rc, &e);
	char *b64 = pool_alloc(r->pool, base64_encoded_size((size_t)f.size));
	if (!b64) {
		tar_file_release(&f);
		return err_set(&e, ERR_NOMEM, "out of memory"), http_fail(r, ERR_NOMEM, &e);
	}
	base64_encode((const unsigned char *)f.data, (size_t)f.size, b64);
	json_object *o = json_object_new_object();
	json_add_str(o, "path", path);
	json_add_int(o, "size", (int64_t)f.size);
	json_add_str(o, "content", b64);
	json_add_int(r->audit_details, "size", (int64_t)f.size);
	tar_file_release(&f);
	if ((rc = sandbox_touch(r, &s, &e))) {
		json_object_put(o);
		return http_fail(r, rc, &e);
	}
	http_json(r, 200, o);
	return 0;
}

int api_sandbox_write(struct req *r)
{
	const char *path, *content;
	int64_t mode = 0644;
	struct repo repo;
	struct sandbox s;
	struct err e = { "" };
	struct buf tar;
	int rc;

	if (api_sandbox_access(r, &repo, &s, 1) || auth_need_user_write(r))
		return 0;
	if ((rc = json_field_string(r->json, "path", 1, PATH_MAX_LEN, &path, &e)) < 0 ||
	    (rc = json_field_string(r->json, "content", 1, (size_t)64 << 20, &content, &e)) < 0 ||
	    (rc = json_field_int(r->json, "mode", 0, 0, 07777, &mode, &e)) < 0) {
		api_sandbox_error(r, 400, "%s", e.msg);
		return 0;
	}
	char *abs = path_normalize(r->pool, path, &e);
	if (!abs || strcmp(abs, "/") == 0) {
		api_sandbox_error(r, 400, "%s", abs ? "field 'path' must name a file" : e.msg);
		return 0;
	}
	size_t clen = strlen(content), len = 0;
	if (clen / 4 * 3 > r->cfg->file_limit + 2) {
		api_sandbox_error(r, 413, "file too large");
		return 0;
	}
	unsigned char *data = pool_alloc(r->pool, clen / 4 * 3 + 3);
	if (!data)
		return err_set(&e, ERR_NOMEM, "out of memory"), http_fail(r, ERR_NOMEM, &e);
	if (base64_decode(content, clen, data, &len)) {
		api_sandbox_error(r, 400, "field 'content' must be base64");
		return 0;
	}
	if (len > r->cfg->file_limit) {
		api_sandbox_error(r, 413, "file too large");
		return 0;
	}
	if (api_sandbox_ready(r, &s))
		return 0;
	json_add_str(r->audit_details, "path", abs);
	json_add_int(r->audit_details, "size", (int64_t)len);
	/* PUT at the deepest directory that exists and name only what is below it: Docker
	 * would give an existing directory the archive entry's owner and mode. */
	char *dir = pool_strdup(r->pool, abs), *slash;
	struct docker_path_stat st;
	for (;;) {
		slash = strrchr(dir, '/');
		if (slash == dir) {
			dir[1] = 0;
			break;
		}
		*slash = 0;
		rc = docker_archive_stat(s.container_id, dir, &st, CALL_MS, &e);
		if (rc == 0 && st.is_dir)
			break;
		if (rc == 0) {
			api_sandbox_error(r, 400, "%s: a parent is not a directory", path);
			return 0;
		}
		if (rc != ERR_NOTFOUND)
			return http_fail(r, rc, &e);
	}
	rc = docker_archive_stat(s.container_id, abs, &st, CALL_MS, &e);
	if (rc == 0 && st.is_dir) {
		api_sandbox_error(r, 400, "%s is a directory", path);
		return 0;
	}
	const char *rel = abs + strlen(dir) + (strcmp(dir, "/") ? 1 : 1);
	buf_init(&tar, tar_write_size(rel, len) + 1024);
	rc = tar_write_file(&tar, rel, (unsigned)mode, (int64_t)time(NULL), data, len, &e);
	if (!rc)
		rc = docker_archive_put(s.container_id, dir, tar.data, tar.len, CALL_MS, &e);
	buf_release(&tar);
	if (rc == ERR_INVALID || rc == ERR_NOTFOUND) {
		api_sandbox_error(r, 400, "cannot write %s: %s", path, e.msg);
		return 0;
	}
	if (rc || (rc = sandbox_touch(r, &s, &e)))
		return http_fail(r, rc, &e);
	json_object *o = json_object_new_object();
	json_add_bool(o, "ok", 1);
	json_add_str(o, "path", path);
	json_add_int(o, "size", (int64_t)len);
	http_json(r, 200, o);
	return 0;
}
