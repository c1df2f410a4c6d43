/* api_files_raw.c: PUT and GET …/sandboxes/{id}/files/{path} (SPEC §4 "Files, raw"): a
 * file's bytes as the body, both ways, streamed. nginx reads a PUT's body whole before the
 * worker starts (nginx/local.conf, nginx/sandboxd.conf: a slow client never holds a worker); the worker then passes
 * it on into the sandbox in pieces (files_write, from a source over the request body) and
 * a GET's bytes out as files_read gives them, so a file is never held in memory whole. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/sandbox.h"
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/sandbox/files.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/lib/path.h"
#include "sandboxd/lib/query.h"
#include "sandboxd/lib/router.h"
#include "sandboxd/common/banned.h"

/* The route's literal part; the file's path is what follows its last '/'. */
#define FILES_PATTERN "/api/v3/repos/{owner}/{repo}" API_SANDBOXES "/{id}/files"

const char *api_files_raw_rest(const char *path)
{
	/* As many '/' as the pattern has, then the rest: the pattern's parameters are single
	 * segments, so the count finds the end of the literal part wherever the names are. */
	int slashes = 0;

	for (const char *p = FILES_PATTERN; *p; p++)
		slashes += *p == '/';
	for (const char *p = path; *p; p++)
		if (*p == '/' && slashes-- == 0)
			return p + 1;
	return NULL;
}

int api_files_raw_match(const char *path, struct route_match *m)
{
	static const struct route prefix = { "*", FILES_PATTERN, NULL, NULL, 0, NULL };
	const char *rest = api_files_raw_rest(path);
	char head[ROUTER_PARAM_MAX * 4];
	struct route_match mine;
	size_t n;

	if (!rest || !*rest || (n = (size_t)(rest - 1 - path)) >= sizeof(head))
		return 0;
	memcpy(head, path, n);
	head[n] = 0;
	if (router_match(&prefix, 1, "GET", head, m ? m : &mine))
		return 0;
	return 1;
}

/* The file's path from the URL: percent-decoded ('/' and %2F both separate), relative to
 * PATH_BASE unless it starts with %2F; *given is it as decoded, *abs normalised. */
static int url_path(struct req *r, const char **given, const char **abs, struct err *e)
{
	const char *rest = api_files_raw_rest(r->path);
	size_t n = rest ? strlen(rest) : 0;
	char *out = pool_alloc(r->pool, PATH_IN_MAX + 1);

	if (!out)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (!rest || n == 0)
		return err_box(e, 400, "the URL names no file");
	if (n > 3 * PATH_IN_MAX || router_decode(rest, n, out, PATH_IN_MAX + 1, 1))
		return err_box(e, 400, "the file's path in the URL is not a path (bad %%-escape, "
			       "a NUL, or longer than %d bytes)", PATH_IN_MAX);
	*given = out;
	if (!(*abs = path_normalize(r->pool, out, e)))
		return err_boxed(e, 400);
	if (strcmp(*abs, "/") == 0)
		return err_box(e, 400, "the path must name a file");
	json_add_str(r->audit_details, "file", *abs);
	return 0;
}

/* The mode query: octal with a leading 0 (0755), else decimal (493); 0644 without one. */
static int mode_query(struct req *r, unsigned *mode, struct err *e)
{
	char v[16];
	int64_t m = 0;
	int found = query_param(r->query, "mode", v, sizeof(v)), bad = found < 0;

	*mode = 0644;
	if (found == 0)
		return 0;
	if (!bad && v[0] == '0') {
		bad = strspn(v, "01234567") != strlen(v);
		for (const char *p = v; !bad && *p && m <= 07777; p++)
			m = m * 8 + (*p - '0');
	} else if (!bad) {
		bad = num_parse(v, 0, 07777, &m) != 0;
	}
	if (bad || m > 07777)
		return err_box(e, 400, "query 'mode' must be a file mode: octal with a leading 0 "
			       "(0755) or decimal (493), at most 07777");
	*mode = (unsigned)m;
	return 0;
}

/* The length nginx passes (it has the whole body): required, and within the limit. */
static int body_length(struct req *r, uint64_t *len, struct err *e)
{
	const char *cl = http_param(r, "CONTENT_LENGTH");
	int64_t v;

	if (!cl || !*cl)
		return err_box(e, 411, "Content-Length is required");
	if (num_parse(cl, 0, INT64_MAX, &v))
		return err_box(e, 400, "Content-Length is not a length");
	if ((uint64_t)v > r->cfg->file_raw_limit)
		return err_box(e, 413, "file too large");
	*len = (uint64_t)v;
	return 0;
}

/* A files source over the request body. */
static long body_read(void *arg, void *p, size_t n)
{
	return http_read(arg, p, n);
}

int api_sandbox_file_put(struct req *r, struct err *e)
{
	const char *given, *abs;
	struct files_via via = { .network = NULL };
	struct files_source src = { .read = body_read, .arg = r };
	struct repo repo;
	struct sandbox s;
	struct boxuser bu;
	struct err ignored = { .msg = "" };
	unsigned mode;
	int rc;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) || (rc = auth_user_write(&r->caller, e)) ||
	    (rc = url_path(r, &given, &abs, e)) || (rc = mode_query(r, &mode, e)) ||
	    (rc = body_length(r, &src.size, e)) ||
	    (rc = api_sandbox_ready_body(r, &s, (size_t)src.size, e)))
		return rc;
	json_add_int(r->audit_details, "size", (int64_t)src.size);
	/* The staging owner (boxuser.h); only the agent can serve while the engine is away. */
	if (boxuser_get(r->cfg, &bu, &ignored))
		log_debug("file put: %s", ignored.msg);
	via.network = api_files_agent_network(r, &s);
	rc = files_write(&s, &via, abs, mode, bu.uid, &src, e);
	api_files_via_audit(r, &via);
	if (rc || (rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e)))
		return api_files_write_failed(rc, given, e);
	json_object *o = json_object_new_object();
	json_add_str(o, "path", given);
	json_add_int(o, "size", (int64_t)src.size);
	http_json(r, 201, o);
	return 0;
}

/* The answer's head once the size is known, then the bytes as they come. */
static int get_start(void *arg, uint64_t size, struct err *e)
{
	struct req *r = arg;
	char head[512];
	int n = http_head(head, sizeof(head) - 2, 200, r->request_id,
			  "application/octet-stream", (size_t)size);

	if (n < 0)
		return err_set(e, ERR_FAIL, "the answer's head does not fit");
	memcpy(head + n, "\r\n", 2);
	json_add_int(r->audit_details, "size", (int64_t)size);
	r->status = 200;
	r->responded = 1;
	r->streamed = 1;
	if (http_write(r, head, (size_t)n + 2))
		return err_set(e, ERR_CANCELLED, "the client closed the connection");
	return 0;
}

static int get_bytes(void *arg, const char *p, size_t n, struct err *e)
{
	if (http_write(arg, p, n))
		return err_set(e, ERR_CANCELLED, "the client closed the connection");
	return 0;
}

int api_sandbox_file_get(struct req *r, struct err *e)
{
	const char *given, *abs;
	struct files_via via = { .network = NULL };
	struct files_sink sink = { get_start, get_bytes, r };
	struct repo repo;
	struct sandbox s;
	int rc, is_dir = 0;

	if ((rc = api_sandbox_access(r, &repo, &s, 1, e)) || (rc = url_path(r, &given, &abs, e)) ||
	    (rc = api_sandbox_ready(r, &s, e)))
		return rc;
	via.network = api_files_agent_network(r, &s);
	rc = files_read(&s, &via, abs, r->cfg->file_raw_limit, &sink, &is_dir, e);
	api_files_via_audit(r, &via);
	if (r->streamed) {
		/* Begun: a failure now cuts the body short of its length, which the client
		 * sees; the audit row says why. */
		if (!rc && http_flush(r))
			rc = err_set(e, ERR_CANCELLED, "the client closed the connection");
		if (!rc && sandbox_touch(r->db, r->cfg->idle_timeout, &s, e))
			log_warn("sandbox %s: the idle deadline: %s", s.id, e->msg);
		return rc;
	}
	if (!rc)
		rc = sandbox_touch(r->db, r->cfg->idle_timeout, &s, e);
	return api_files_read_failed(rc, given, is_dir, e);
}
