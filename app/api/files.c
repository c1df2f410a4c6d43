/* api_files.c: POST …/sandboxes/{id}/read, …/write, …/list and …/remove. The handlers check the caller and
 * the request and shape the answer; the file work is files.c, as the sandbox's user. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/sandbox.h"
#include "sandboxd/lib/base64.h"
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/sandbox/files.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/path.h"
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

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

/* The path field, normalised into *abs; 0, or 400 when it is not a path. */
static int path_field(struct req *r, const char **path, const char **abs, struct err *e)
{
	int rc;

	if ((rc = json_field_string(r->json, "path", 1, PATH_IN_MAX, path, e)) < 0)
		return err_boxed(e, 400);
	if (!(*abs = path_normalize(r->pool, *path, e)))
		return err_boxed(e, 400);
	return 0;
}

const char *api_files_agent_network(const struct req *r, const struct sandbox *s)
{
	return r->cfg->agent ? sandbox_network(r->cfg, s) : NULL;
}

void api_files_via_audit(struct req *r, const struct files_via *via)
{
	json_add_str(r->audit_details, "backend", via->backend);
	if (via->agent_error[0])
		json_add_str(r->audit_details, "agent_error", via->agent_error);
}

int api_files_read_failed(int rc, const char *path, int is_dir, struct err *e)
{
	switch (rc) {
	case ERR_NOTFOUND: return err_box(e, 404, "no such file: %s", path);
	case ERR_TOOBIG: return err_box(e, 413, "file too large");
	case ERR_INVALID:
		return err_box(e, 400, "%s is not a regular file%s", path,
			       is_dir ? " (a directory)" : "");
	case ERR_DENIED: return err_box(e, 403, "cannot read %s: permission denied", path);
	case ERR_EXISTS: return err_box(e, 409, "%s changed while it was read; try again", path);
	default: return rc;
	}
}

int api_sandbox_read(struct req *r, struct err *e)
{
	const char *path, *abs;
	struct repo repo;
	struct sandbox s;
	struct read_out ro = { .r = r };
	struct files_sink sink = { read_start, read_bytes, &ro };
	struct files_via via = { .network = NULL };
	int rc, is_dir = 0;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) ||
	    (rc = path_field(r, &path, &abs, e)) || (rc = api_sandbox_ready(r, &s, e)))
		return rc;
	json_add_str(r->audit_details, "file", abs);
	ro.path = path;
	via.network = api_files_agent_network(r, &s);
	rc = files_read(&s, &via, abs, r->cfg->file_limit, &sink, &is_dir, e);
	api_files_via_audit(r, &via);
	if (!rc && ro.ncarry) {
		base64_encode(ro.carry, ro.ncarry, r->out.data + r->out.len);
		buf_advance(&r->out, 4);
	}
	if (!rc && (rc = buf_puts(&r->out, "\"}\n")))
		err_set(e, rc, "out of memory");
	if (!rc && !(rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e))) {
		r->status = 200;
		r->responded = 1;
		return 0;
	}
	buf_clear(&r->out);
	return api_files_read_failed(rc, path, is_dir, e);
}

/* The content field, decoded into *data (malloc'd, the caller frees it). 0, or the
 * answer's code. */
static int content_field(struct req *r, unsigned char **data, size_t *len, struct err *e)
{
	json_object *content;

	/* By hand, not json_field_string: no strlen over megabytes (a NUL in it is not base64
	 * and fails the decoding). */
	if (!json_object_object_get_ex(r->json, "content", &content) ||
	    json_object_is_type(content, json_type_null))
		return err_box(e, 400, "field 'content' is required");
	if (!json_object_is_type(content, json_type_string))
		return err_box(e, 400, "field 'content' must be a string");
	size_t clen = (size_t)json_object_get_string_len(content);
	if (clen / 4 * 3 > r->cfg->file_limit + 2)
		return err_box(e, 413, "file too large");
	/* Its own allocation, freed at the end, rather than the request's pool. */
	if (!(*data = malloc(clen / 4 * 3 + 3)))
		return err_set(e, ERR_NOMEM, "out of memory");
	if (base64_decode(json_object_get_string(content), clen, *data, len))
		return err_box(e, 400, "field 'content' must be base64");
	if (*len > r->cfg->file_limit)
		return err_box(e, 413, "file too large");
	return 0;
}

int api_files_write_failed(int rc, const char *path, struct err *e)
{
	char why[sizeof(e->msg)];

	memcpy(why, e->msg, sizeof(why)); /* e's own text goes into e's new one */
	switch (rc) {
	case ERR_EXISTS: return err_box(e, 400, "%s is a directory", path);
	case ERR_NOTDIR: return err_box(e, 400, "%s: a parent is not a directory", path);
	case ERR_DENIED: return err_box(e, 403, "cannot write %s: permission denied", path);
	case ERR_INVALID: return err_box(e, 400, "cannot write %s: %.400s", path, why);
	default: return rc;
	}
}

int api_sandbox_write(struct req *r, struct err *e)
{
	const char *path, *abs;
	int64_t mode = 0644;
	struct repo repo;
	struct sandbox s;
	unsigned char *data = NULL;
	struct files_via via = { .network = NULL };
	size_t len = 0;
	int rc;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) || (rc = auth_user_write(&r->caller, e)) ||
	    (rc = path_field(r, &path, &abs, e)))
		return rc;
	if (json_field_int(r->json, "mode", 0, 0, 07777, &mode, e) < 0)
		return err_boxed(e, 400);
	if (strcmp(abs, "/") == 0)
		return err_box(e, 400, "field 'path' must name a file");
	if ((rc = content_field(r, &data, &len, e)) || (rc = api_sandbox_ready(r, &s, e)))
		goto out;
	json_add_str(r->audit_details, "file", abs);
	json_add_int(r->audit_details, "size", (int64_t)len);
	/* The user the engine allows (boxuser.h); unknown while the engine is away, when only
	 * the agent (which writes as itself) can serve and the staging owner does not matter. */
	struct boxuser bu;
	struct err ignored = { .msg = "" };
	if (boxuser_get(r->cfg, &bu, &ignored))
		log_debug("file write: %s", ignored.msg);
	struct files_source src = { .data = data, .size = len };
	via.network = api_files_agent_network(r, &s);
	rc = files_write(&s, &via, abs, (unsigned)mode, bu.uid, &src, e);
	api_files_via_audit(r, &via);
	if (rc || (rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e))) {
		rc = api_files_write_failed(rc, path, e);
		goto out;
	}
	json_object *o = json_object_new_object();
	json_add_bool(o, "ok", 1);
	json_add_str(o, "path", path);
	json_add_int(o, "size", (int64_t)len);
	http_json(r, 200, o);
out:
	free(data);
	return rc;
}

/* The most bytes of names and paths one listing answers (10,000 paths of 4 KiB, repaired
 * and escaped, would pass the response's 64 MiB): past it, the rest is cut as past
 * FLIST_MAX entries. Real listings are far below it. */
#define LIST_TEXT_MAX (8u << 20)

/* A listing's answer: its entries as they come (names repaired to UTF-8), sorted by path
 * at the end, so that both backends answer alike. */
struct list_out {
	json_object *entries;
	struct buf text;
	size_t text_bytes;
	int cut;                 /* LIST_TEXT_MAX was reached */
};

static const char *const entry_types[] = { "other", "file", "dir", "symlink", "other" };

/* ent's path or name as valid UTF-8 (each ill-formed byte run a U+FFFD), in o at key. */
static int add_text(struct list_out *l, json_object *o, const char *key, const char *s)
{
	buf_clear(&l->text);
	if (utf8_append_repaired(&l->text, (const unsigned char *)s, strlen(s)) ||
	    buf_append(&l->text, "", 1))
		return ERR_NOMEM;
	json_add_str(o, key, l->text.data);
	l->text_bytes += l->text.len;
	return 0;
}

static int list_entry(void *arg, const struct flist_entry *ent)
{
	struct list_out *l = arg;
	json_object *o;
	time_t secs = (time_t)ent->mtime;
	char when[32] = "1970-01-01T00:00:00Z";
	struct tm tm;

	if (l->cut)
		return 0;
	if (!(o = json_object_new_object()))
		return ERR_NOMEM;
	if (add_text(l, o, "name", ent->name) || add_text(l, o, "path", ent->path)) {
		json_object_put(o);
		return ERR_NOMEM;
	}
	json_add_str(o, "type", entry_types[ent->type >= 1 && ent->type <= 4 ? ent->type : 0]);
	json_add_int(o, "size", ent->size > INT64_MAX ? INT64_MAX : (int64_t)ent->size);
	json_add_int(o, "mode", ent->mode & 07777);
	if (gmtime_r(&secs, &tm) && tm.tm_year >= -1900 && tm.tm_year <= 8099)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_add_str(o, "mtime", when);
	if (l->text_bytes > LIST_TEXT_MAX) {
		l->cut = 1;
		json_object_put(o);
		return 0;
	}
	if (json_object_array_add(l->entries, o)) {
		json_object_put(o);
		return ERR_NOMEM;
	}
	return 0;
}

static int by_path(const void *a, const void *b)
{
	json_object *pa, *pb;

	json_object_object_get_ex(*(json_object *const *)a, "path", &pa);
	json_object_object_get_ex(*(json_object *const *)b, "path", &pb);
	return strcmp(json_object_get_string(pa), json_object_get_string(pb));
}

/* The answer to a files_list or files_remove that failed with rc (verb: "list",
 * "remove"). */
static int list_failed(int rc, const char *verb, const char *path, struct err *e)
{
	char why[sizeof(e->msg)];

	memcpy(why, e->msg, sizeof(why));
	switch (rc) {
	case ERR_NOTFOUND: return err_box(e, 404, "no such file: %s", path);
	case ERR_NOTDIR: return err_box(e, 400, "%s is not a directory", path);
	case ERR_EXISTS: return err_box(e, 400, "cannot remove %s: directory not empty (remove "
					"it with recursive)", path);
	case ERR_DENIED: return err_box(e, 403, "cannot %s %s: permission denied", verb, path);
	case ERR_INVALID: return err_box(e, 400, "cannot %s %s: %.400s", verb, path, why);
	default: return rc;
	}
}

int api_sandbox_list_files(struct req *r, struct err *e)
{
	const char *path, *abs;
	int64_t depth = 1;
	struct repo repo;
	struct sandbox s;
	struct list_out l = { .entries = json_object_new_array() };
	struct files_via via = { .network = NULL };
	int rc, truncated = 0;

	buf_init(&l.text, PATH_OUT_MAX * 3 + 16);
	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) ||
	    (rc = path_field(r, &path, &abs, e)))
		goto out;
	if (json_field_int(r->json, "depth", 0, 1, 8, &depth, e) < 0) {
		rc = err_boxed(e, 400);
		goto out;
	}
	if (!l.entries) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = api_sandbox_ready(r, &s, e)))
		goto out;
	json_add_str(r->audit_details, "file", abs);
	json_add_int(r->audit_details, "depth", depth);
	via.network = api_files_agent_network(r, &s);
	rc = files_list(&s, &via, abs, (int)depth, list_entry, &l, &truncated, e);
	api_files_via_audit(r, &via);
	if (rc || (rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e))) {
		rc = list_failed(rc, "list", path, e);
		goto out;
	}
	json_object_array_sort(l.entries, by_path);
	truncated |= l.cut;
	json_add_int(r->audit_details, "entries", (int64_t)json_object_array_length(l.entries));
	json_add_bool(r->audit_details, "truncated", truncated);
	json_object *o = json_object_new_object();
	json_add_str(o, "path", path);
	json_object_object_add(o, "entries", l.entries);
	l.entries = NULL;
	json_add_bool(o, "truncated", truncated);
	http_json(r, 200, o);
out:
	json_object_put(l.entries);
	buf_release(&l.text);
	return rc;
}

int api_sandbox_remove(struct req *r, struct err *e)
{
	const char *path, *abs;
	struct repo repo;
	struct sandbox s;
	struct files_via via = { .network = NULL };
	int rc, recursive = 0;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) || (rc = auth_user_write(&r->caller, e)) ||
	    (rc = path_field(r, &path, &abs, e)))
		return rc;
	if (json_field_bool(r->json, "recursive", 0, &recursive, e) < 0)
		return err_boxed(e, 400);
	if (strcmp(abs, "/") == 0)
		return err_box(e, 400, "field 'path' must not be /");
	if ((rc = api_sandbox_ready(r, &s, e)))
		return rc;
	json_add_str(r->audit_details, "file", abs);
	json_add_bool(r->audit_details, "recursive", recursive);
	via.network = api_files_agent_network(r, &s);
	rc = files_remove(&s, &via, abs, recursive, e);
	api_files_via_audit(r, &via);
	if (rc || (rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e)))
		return list_failed(rc, "remove", path, e);
	http_empty(r, 204);
	return 0;
}
