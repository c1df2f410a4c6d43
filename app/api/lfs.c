/* api_lfs.c: Git LFS (SPEC.md §4 "Git LFS"): the batch API and the basic transfer, under
 * the git route of a repository, with git's own tokens and rules: read to download, write
 * (and not archived) to upload. Objects are stored by oid in the repository's folder
 * (lfs.h: git-lfs's own layout), so that they go with a rename or a delete. An upload is
 * written beside its place as it arrives, its SHA-256 taken on the way, and renamed into
 * place only when its size and hash are its oid's: no partial or wrong object is ever
 * served. On the way it is scanned for secrets with push protection's rules (scanstream.h,
 * decision 0088): an object holding one is refused as a push holding it is, and never
 * stored. A download is streamed from the file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/http/githttp.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/lfs.h"
#include "sandboxd/proto/policy.h"
#include "sandboxd/proto/scanstream.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/forge/lfs_store.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

#define CHUNK 65536
#define PATH_MAX_LEN 4096
#define HREF_TTL 3600              /* what a batch answer's actions say they last */

/* Where the client reached us: its Host when it is a plain host[:port] (a sandbox reaches
 * the service at its git endpoint, not at the public URL), else the public URL. *public is
 * set when that is the public URL's host. */
static const char *base_url(struct req *r, int *public)
{
	const char *host = http_param(r, "HTTP_HOST"), *pub = r->cfg->public_url;
	const char *auth = strstr(pub, "://");

	*public = 1;
	if (!host || !*host || strlen(host) > 255 ||
	    strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") !=
		    strlen(host))
		return pub;
	if (auth && strncmp(auth + 3, host, strlen(host)) == 0 &&
	    (auth[3 + strlen(host)] == 0 || auth[3 + strlen(host)] == '/'))
		return pool_printf(r->pool, "%.*s", (int)(auth + 3 + strlen(host) - pub), pub);
	*public = 0;
	return pool_printf(r->pool, "http://%s", host);
}

static json_object *action(struct req *r, const struct repo *repo, const char *oid)
{
	const char *authz = http_param(r, "HTTP_AUTHORIZATION");
	json_object *a = json_object_new_object(), *h = json_object_new_object();
	int public;
	const char *base = base_url(r, &public);

	json_add_str(a, "href", pool_printf(r->pool, "%s/%s/%s.git/info/lfs/objects/%s", base,
					    repo->owner, repo->name, oid));
	/* The same credential as the batch request's: the client has it already. Not through
	 * a sandbox's git endpoint: its clone sends its credential with every request there
	 * (http.extraHeader, which git-lfs honours), and a second Authorization header is
	 * refused. */
	if (authz && public)
		json_add_str(h, "Authorization", authz);
	json_object_object_add(a, "header", h);
	json_add_int(a, "expires_in", HREF_TTL);
	return a;
}

/* An upload from a git URL whose ref policies allow no push at all (decision 0088): an
 * object is only of use to a push, and an upload no push can reference is storage for
 * nothing. 0, or 403 naming why. */
static int upload_allowed(struct req *r, struct err *e)
{
	struct policy_list *l;
	const char *base = r->caller.jwt_ephemeral ? "refs/namespaces/ephemeral/refs/" : "refs/";

	if (!r->caller.jwt_policies)
		return 0;
	if (!(l = pool_alloc(r->pool, sizeof(*l))))
		return err_set(e, ERR_NOMEM, "out of memory");
	if (policy_parse_json(r->caller.jwt_policies, l, e))
		return err_set(e, ERR_DENIED, "LFS upload refused: this git URL's ref policies "
			       "cannot be read");
	if (policy_may_push_some(l, base))
		return 0;
	return err_set(e, ERR_DENIED, "LFS upload refused: this git URL's ref policies allow "
		       "no push");
}

static json_object *object_error(json_object *o, int code, const char *message)
{
	json_object *err = json_object_new_object();

	json_add_int(err, "code", code);
	json_add_str(err, "message", message);
	json_object_object_add(o, "error", err);
	return o;
}

/* One object of the answer: what the client is to do with it, or why not. */
static json_object *batch_item(struct req *r, const struct repo *repo, const char *dir,
			       const struct lfs_batch *b, const struct lfs_object *ob,
			       struct lfs_usage *u)
{
	json_object *o = json_object_new_object(), *acts;
	char path[PATH_MAX_LEN], why[128];
	struct stat st;
	int have;

	json_add_str(o, "oid", ob->oid);
	json_add_int(o, "size", ob->size);
	if (ob->size > LFS_OBJECT_MAX)
		return object_error(o, 422, "objects are at most 2 GiB here");
	have = !lfs_object_path(path, sizeof(path), dir, ob->oid) && !stat(path, &st) &&
	       S_ISREG(st.st_mode) && st.st_size == ob->size;
	if (!b->upload && !have)
		return object_error(o, 404, "Object does not exist");
	json_add_bool(o, "authenticated", 1);
	/* An upload of what is there already has nothing to do: no actions. */
	if (b->upload && have)
		return o;
	/* What the upload would add past a quota (the earlier objects of this batch counted):
	 * the object's own error, in the batch API's shape; the others go on. */
	if (b->upload && lfs_usage_take(u, ob->size, why, sizeof(why))) {
		json_add_str(r->audit_details, "quota", why);
		return object_error(o, 507, why);
	}
	acts = json_object_new_object();
	json_object_object_add(acts, b->upload ? "upload" : "download", action(r, repo, ob->oid));
	json_object_object_add(o, "actions", acts);
	return o;
}

static int batch(struct req *r, const struct git_route *g, struct err *e)
{
	struct lfs_batch *b = pool_alloc(r->pool, sizeof(*b));
	json_object *body = NULL, *out, *list;
	struct lfs_usage u;
	struct repo repo;
	char *dir;
	int rc;

	if (!b)
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((rc = http_read_body(r, r->cfg->body_limit, e)) ||
	    (rc = json_parse_object(r->body, r->body_len, &body, e)))
		return rc;
	rc = lfs_batch_parse(body, b, e);
	json_object_put(body);
	if (rc) {
		/* The batch API's validation status (its spec: 422), with the parser's words. */
		char why[sizeof(e->msg)];
		snprintf(why, sizeof(why), "%s", e->msg);
		return err_http(e, 422, "%s", why);
	}
	json_add_str(r->audit_details, "operation", b->upload ? "upload" : "download");
	json_add_int(r->audit_details, "objects", (int64_t)b->n);
	if ((rc = auth_git(r, g->owner, g->name, b->upload, &repo, e)) ||
	    (b->upload && (rc = upload_allowed(r, e))))
		return rc;
	if (b->upload && (rc = lfs_usage_get(r->db, r->cfg, repo.id, repo.owner_id, &u, e)))
		return rc;
	if (!(dir = repo_path(r->cfg->repos_dir, repo.owner, repo.name)))
		return err_set(e, ERR_NOMEM, "out of memory");
	out = json_object_new_object();
	list = json_object_new_array();
	json_add_str(out, "transfer", "basic");
	for (size_t i = 0; i < b->n; i++)
		json_object_array_add(list, batch_item(r, &repo, dir, b, &b->objects[i], &u));
	json_object_object_add(out, "objects", list);
	json_add_str(out, "hash_algo", "sha256");
	free(dir);
	buf_clear(&r->out);
	rc = buf_puts(&r->out, json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	json_object_put(out);
	if (rc)
		return err_set(e, ERR_NOMEM, "the answer is too large");
	http_body(r, 200, LFS_MEDIA_TYPE);
	return 0;
}

/* GET: the object's bytes, streamed. */
static int download(struct req *r, const char *path, struct err *e)
{
	char head[160], *chunk;
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return err_set(e, ERR_NOTFOUND, "Object does not exist");
	}
	json_add_int(r->audit_details, "size", (int64_t)st.st_size);
	snprintf(head, sizeof(head), "Status: 200 OK\r\nContent-Type: application/octet-stream\r\n"
		 "Content-Length: %lld\r\n\r\n", (long long)st.st_size);
	if (!(chunk = pool_alloc(r->pool, CHUNK))) {
		close(fd);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	r->status = 200;
	r->responded = r->streamed = 1;
	if (http_write(r, head, strlen(head)) == 0)
		while ((n = read(fd, chunk, CHUNK)) > 0 && http_write(r, chunk, (size_t)n) == 0)
			;
	close(fd);
	if (http_flush(r))
		log_info("lfs: the client left during a download");
	return 0;
}

/* mkdir -p of path's parent directories, from the repository's folder down. */
static int make_parents(char *path, size_t from)
{
	for (char *p = path + from; (p = strchr(p + 1, '/')); ) {
		*p = 0;
		int rc = mkdir(path, 0750) && errno != EEXIST;
		*p = '/';
		if (rc)
			return -1;
	}
	return 0;
}

/* The rest of a refused upload's body, read and dropped: the client is still sending it. */
static void drain(struct req *r, char *chunk, int64_t left)
{
	long n;

	while (left > 0 && (n = http_read(r, chunk, CHUNK)) > 0)
		left -= n;
}

/* Push protection on an object's bytes (decision 0088): 0, or 403 naming the rule, with
 * the refusal in the request's audit row. */
static int refuse_secret(struct req *r, const char *oid, const struct scan_hit *hit,
			 struct err *e)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "push refused: %s found in LFS object %.12s (line %zu); "
		 "remove it from the history and push again", hit->rule, oid, hit->line);
	json_add_str(r->audit_details, "rule", hit->rule);
	json_add_str(r->audit_details, "reason", msg);
	return err_set(e, ERR_DENIED, "%s", msg);
}

/* The body into tmp (fd), hashed and scanned for secrets on the way (a window of it in
 * memory, never the object): 0 when it is len bytes whose SHA-256 is oid and that hold no
 * secret. Once a secret shows, nothing more is written: the rest is drained. */
static int take_body(struct req *r, int fd, int64_t len, const char *oid, struct err *e)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned dlen = 0;
	char *chunk = pool_alloc(r->pool, CHUNK), hex[2 * EVP_MAX_MD_SIZE + 1];
	struct scanstream *scan = pool_alloc(r->pool, sizeof(*scan));
	struct scan_hit hit;
	int64_t got = 0;
	long n = 1;
	int rc = 0, found = 0;

	if (!md || !chunk || !scan || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		rc = err_set(e, ERR_FAIL, "cannot hash the object");
	else
		scanstream_init(scan, 0);
	while (!rc && !found && got < len && (n = http_read(r, chunk, CHUNK)) > 0) {
		if (got + n > len || write(fd, chunk, (size_t)n) != n ||
		    EVP_DigestUpdate(md, chunk, (size_t)n) != 1)
			rc = got + n > len ? err_set(e, ERR_INVALID, "the body is longer than its "
						     "Content-Length")
					   : err_set(e, ERR_FAIL, "cannot store the object: %m");
		got += n;
		if (!rc)
			found = scanstream_feed(scan, chunk, (size_t)n);
	}
	if (!rc && found) {
		drain(r, chunk, len - got);
		got = len;
	}
	if (!rc && got < len)
		rc = err_set(e, ERR_INVALID, "the body ended after %lld of its %lld bytes",
			     (long long)got, (long long)len);
	if (!rc && scanstream_end(scan, &hit))
		rc = refuse_secret(r, oid, &hit, e);
	if (!rc && EVP_DigestFinal_ex(md, digest, &dlen) == 1) {
		hex_encode(hex, digest, dlen);
		if (strcmp(hex, oid))
			rc = err_http(e, 422, "the object's content does not match its oid (its "
				      "SHA-256 is %s)", hex);
	}
	EVP_MD_CTX_free(md);
	return rc;
}

/* The quotas (decision 0089) on an upload of len bytes: 0, or 507 naming the one it
 * would exceed. An object the repository stores already adds nothing. */
static int upload_quota(struct req *r, const struct repo *repo, const char *oid, int64_t len,
			struct err *e)
{
	struct lfs_usage u;
	char why[128];
	int rc = lfs_object_known(r->db, repo->id, oid, e);

	if (rc < 0)
		return rc;
	if (rc == 1)
		return 0;
	if ((rc = lfs_usage_get(r->db, r->cfg, repo->id, repo->owner_id, &u, e)))
		return rc;
	if (!lfs_usage_take(&u, len, why, sizeof(why)))
		return 0;
	json_add_str(r->audit_details, "quota", why);
	return err_http(e, 507, "%s", why);
}

/* PUT: the object, stored once whole and right, and recorded for the quotas. */
static int upload(struct req *r, const struct repo *repo, const char *dir, const char *path,
		  const char *oid, struct err *e)
{
	const char *cl = http_param(r, "CONTENT_LENGTH");
	char tmp[PATH_MAX_LEN];
	int64_t len;
	int fd, rc;

	if (!cl || !*cl || num_parse(cl, 0, INT64_MAX, &len))
		return err_http(e, 411, "an upload needs its Content-Length");
	if (len > LFS_OBJECT_MAX)
		return err_http(e, 413, "objects are at most 2 GiB here");
	json_add_int(r->audit_details, "size", len);
	if ((rc = upload_quota(r, repo, oid, len, e)))
		return rc;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/lfs/tmp/%s.XXXXXX", dir, oid) >= sizeof(tmp))
		return err_set(e, ERR_FAIL, "the repository's path is too long");
	if (make_parents(tmp, strlen(dir)) || (fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return err_set(e, ERR_FAIL, "cannot store the object: %m");
	rc = take_body(r, fd, len, oid, e);
	if (!rc && fsync(fd))
		rc = err_set(e, ERR_FAIL, "cannot store the object: %m");
	close(fd);
	if (!rc && (make_parents((char *)path, strlen(dir)) || rename(tmp, path)))
		rc = err_set(e, ERR_FAIL, "cannot store the object: %m");
	if (rc)
		unlink(tmp);
	/* Stored: its row (a file without one would escape the quotas and the collection;
	 * the reaper's pass finds no row to collect then, so the file stays: harmless). */
	else if (!(rc = lfs_object_record(r->db, repo->id, oid, len, e)))
		http_empty(r, 200);
	return rc;
}

static int object(struct req *r, const struct git_route *g, struct err *e)
{
	int put = strcmp(r->method, "PUT") == 0, rc;
	char path[PATH_MAX_LEN];
	struct repo repo;
	char *dir;

	if (!put && strcmp(r->method, "GET")) {
		http_header(r, "Allow", "GET, PUT");
		return err_http(e, 405, "method not allowed");
	}
	r->audit_action = put ? "lfs.upload" : "lfs.download";
	json_add_str(r->audit_details, "oid", g->oid);
	if (!lfs_oid_valid(g->oid))
		return err_set(e, ERR_NOTFOUND, "Object does not exist");
	if ((rc = auth_git(r, g->owner, g->name, put, &repo, e)) ||
	    (put && (rc = upload_allowed(r, e))))
		return rc;
	if (!(dir = repo_path(r->cfg->repos_dir, repo.owner, repo.name)))
		return err_set(e, ERR_NOMEM, "out of memory");
	if (lfs_object_path(path, sizeof(path), dir, g->oid))
		rc = err_set(e, ERR_FAIL, "the repository's path is too long");
	else
		rc = put ? upload(r, &repo, dir, path, g->oid, e) : download(r, path, e);
	free(dir);
	return rc;
}

int api_lfs(struct req *r, const struct git_route *g, struct err *e)
{
	if (g->service == GIT_LFS_OBJECT)
		return object(r, g, e);
	if (strcmp(r->method, "POST")) {
		http_header(r, "Allow", "POST");
		return err_http(e, 405, "method not allowed");
	}
	return batch(r, g, e);
}
