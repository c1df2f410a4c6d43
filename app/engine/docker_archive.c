/* docker_archive.c: files in a container through the archive API: a tar written into a
 * directory (in parts, sent as they are), read whole, read through a tar reader (one
 * file: docker_archive_read_file), and a path's stat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/engine/docker_int.h"
#include "sandboxd/common/banned.h"

static int archive_path(struct buf *path, const char *container, const char *p, struct err *e)
{
	char *q;
	int rc;

	if ((rc = dk_id_valid("container", container, e)))
		return rc;
	if (!p || p[0] != '/' || strlen(p) > TAR_NAME_MAX)
		return err_set(e, ERR_INVALID, "archive path must be absolute, at most %d bytes",
			       TAR_NAME_MAX);
	if (!(q = curl_easy_escape(NULL, p, 0)))
		return err_set(e, ERR_NOMEM, "out of memory");
	rc = buf_printf(path, "/containers/%s/archive?path=%s", container, q);
	curl_free(q);
	return rc ? err_set(e, ERR_NOMEM, "out of memory") : 0;
}

int docker_archive_put_parts(const char *container, const char *dir,
			     const struct box_part *parts, size_t nparts, long timeout_ms,
			     struct err *e)
{
	struct buf path;
	struct call c;
	int rc;

	buf_init(&path, 3 * TAR_NAME_MAX + 256);
	if ((rc = archive_path(&path, container, dir, e)))
		goto out;
	/* Never let a file of the archive replace a directory (or the other way round). */
	if (buf_puts(&path, "&noOverwriteDirNonDir=1")) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	dk_call_init(&c, "write archive", "PUT", path.data, timeout_ms, e);
	c.ctype = "application/x-tar";
	c.parts = parts;
	c.nparts = nparts;
	rc = dk_perform(&c);
	if (rc == ERR_EXISTS)
		rc = err_set(e, ERR_EXISTS, "docker write archive: a directory is in the way");
	else if (rc == ERR_NOTDIR)
		rc = err_set(e, ERR_INVALID, "docker write archive: %s is not a directory", dir);
out:
	buf_release(&path);
	return rc;
}

int docker_archive_put(const char *container, const char *dir, const void *tar, size_t len,
		       long timeout_ms, struct err *e)
{
	struct box_part part = { .data = tar, .len = len };

	return docker_archive_put_parts(container, dir, &part, 1, timeout_ms, e);
}

/* GET /containers/{id}/archive?path=…, the archive's bytes to sink. */
static int archive_get_to(const char *container, const char *path, const char *op,
			  int (*sink)(struct call *, const char *, size_t), void *arg, long bufsize,
			  long timeout_ms, struct err *e)
{
	struct buf p;
	struct call c;
	int rc;

	buf_init(&p, 3 * TAR_NAME_MAX + 256);
	if ((rc = archive_path(&p, container, path, e)))
		goto out;
	dk_call_init(&c, op, "GET", p.data, timeout_ms, e);
	c.sink = sink;
	c.sink_arg = arg;
	c.bufsize = bufsize;
	rc = dk_perform(&c);
out:
	buf_release(&p);
	return rc;
}

int docker_archive_get(const char *container, const char *path, struct buf *out,
		       long timeout_ms, struct err *e)
{
	return archive_get_to(container, path, "read archive", dk_sink_buf, out, 0, timeout_ms, e);
}

static int sink_tar(struct call *c, const char *p, size_t n)
{
	return tar_reader_feed(c->sink_arg, p, n, c->e);
}

int docker_archive_read(const char *container, const char *path, struct tar_reader *r,
			long timeout_ms, struct err *e)
{
	return archive_get_to(container, path, "read file", sink_tar, r, ARCHIVE_BUFSIZE,
			      timeout_ms, e);
}

int docker_archive_read_file(const char *container, const char *path, size_t max_size,
			     struct tar_file *out, char *type, long timeout_ms, struct err *e)
{
	struct tar_reader *r = tar_reader_new(max_size);

	out->data = NULL;
	out->size = 0;
	if (!r)
		return err_set(e, ERR_NOMEM, "out of memory");
	return tar_reader_close(r, docker_archive_read(container, path, r, timeout_ms, e), out,
				type, e);
}

int docker_archive_stat(const char *container, const char *path, struct box_path_stat *out,
			long timeout_ms, struct err *e)
{
	json_object *o = NULL, *v;
	unsigned char *dec = NULL;
	size_t declen = 0;
	struct buf p;
	struct call c;
	int64_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	buf_init(&p, 3 * TAR_NAME_MAX + 256);
	dk_call_init(&c, "stat path", "HEAD", NULL, timeout_ms, e);
	buf_init(&c.stathdr, STATHDR_MAX);
	if ((rc = archive_path(&p, container, path, e)))
		goto out;
	c.path = p.data;
	c.want_stat = 1;
	if ((rc = dk_perform(&c)))
		goto out;
	if (!c.stathdr.len || !(dec = malloc(c.stathdr.len / 4 * 3 + 1)) ||
	    base64_decode(c.stathdr.data, c.stathdr.len, dec, &declen)) {
		rc = err_set(e, ERR_FAIL, "docker stat path: no readable X-Docker-Container-Path-Stat");
		goto out;
	}
	dec[declen] = 0;
	if (!(o = json_tokener_parse((const char *)dec)) || !json_object_is_type(o, json_type_object) ||
	    get_int(o, "size", &out->size) || get_int(o, "mode", &n)) {
		rc = err_set(e, ERR_FAIL, "docker stat path: malformed X-Docker-Container-Path-Stat");
		goto out;
	}
	out->mode = (uint32_t)n;
	out->is_dir = (out->mode >> 31) & 1;      /* os.ModeDir */
	out->is_symlink = (out->mode >> 27) & 1;  /* os.ModeSymlink */
	if (json_object_object_get_ex(o, "name", &v) && json_object_is_type(v, json_type_string))
		snprintf(out->name, sizeof(out->name), "%s", json_object_get_string(v));
	if (json_object_object_get_ex(o, "linkTarget", &v) && json_object_is_type(v, json_type_string))
		snprintf(out->link_target, sizeof(out->link_target), "%s", json_object_get_string(v));
out:
	buf_release(&c.stathdr);
	json_object_put(o);
	free(dec);
	buf_release(&p);
	return rc;
}
