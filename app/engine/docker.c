/* docker.c: the Docker Engine API over libcurl (API v1.41, one handle per process). */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/common/banned.h"

#define ERRBODY_MAX (16 * 1024)
#define STATHDR_MAX (16 * 1024)
#define DEFAULT_USER "61000:61000"  /* SANDBOXD_SANDBOX_UID's default */
/* curl's buffers for archive bodies: fewer, larger reads and writes than its 16 KiB and
 * 64 KiB defaults (megabytes go through them). */
#define ARCHIVE_BUFSIZE (512L * 1024)

static CURL *handle;

/* Where calls go: the settings of docker_init, or a host given to docker_ping. */
struct target {
	const char *host;
	const char *ca, *cert, *key;
};
static struct {
	char *host, *ca, *cert, *key;
} conf;
/* The engine of the sandbox at hand (docker_use), when it is not the configured one; or
 * (docker_refuse) none: every call fails with why. */
static struct {
	int set, refused;
	char host[520], ca[256], cert[256], key[256];
	char why[200];
} cur;

/* One request and what came back. */
struct call {
	const char *op;               /* names the call in messages: "create container" */
	const char *method;
	const char *path;             /* after the version prefix, query included */
	const char *ctype;            /* request body type */
	const void *body;
	size_t body_len;
	/* Or a body in pieces, sent as they are (no copy into one buffer). */
	const struct docker_part *parts;
	size_t nparts, part, part_off;
	long bufsize;                 /* curl's receive buffer; 0: curl's default */
	long timeout_ms;
	/* A 2xx body goes to sink; non-zero stops the transfer and is returned (the sink has
	 * filled c->e). Other bodies go to errbody. */
	int (*sink)(struct call *c, const char *p, size_t n);
	void *sink_arg;
	int sink_rc;
	struct buf errbody;
	struct buf stathdr;           /* X-Docker-Container-Path-Stat, kept when want_stat */
	int want_stat;
	int (*cancel)(void *arg);
	void *cancel_arg;
	int64_t deadline;
	int timed_out, cancelled;
	long status;
	struct err *e;
};

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

static void conf_release(void)
{
	free(conf.host);
	free(conf.ca);
	free(conf.cert);
	free(conf.key);
	memset(&conf, 0, sizeof(conf));
}

static int host_valid(const char *host)
{
	return (strncmp(host, "unix:///", 8) == 0 && strlen(host) - 7 < 108) ||
	       (strncmp(host, "tcp://", 6) == 0 && host[6]) ||
	       (strncmp(host, "https://", 8) == 0 && host[8]);
}

/* The settings' own checks, for docker_init and docker_use. */
static int conf_check(const struct docker_conf *c, const char *host, struct err *e)
{
	int ntls = !!(c->ca_file && *c->ca_file) + !!(c->cert_file && *c->cert_file) +
		   !!(c->key_file && *c->key_file);

	if (!host_valid(host) || strlen(host) > 512 ||
	    (strncmp(host, "unix://", 7) != 0 && strchr(strstr(host, "://") + 3, '/')))
		return err_set(e, ERR_INVALID,
			       "docker host '%s' must be unix:///path, tcp://host:port or https://host:port",
			       host);
	if (ntls != 0 && ntls != 3)
		return err_set(e, ERR_INVALID,
			       "docker TLS needs all of a CA file, a client certificate and its key");
	if (ntls == 0 && strncmp(host, "https://", 8) == 0)
		return err_set(e, ERR_INVALID, "docker host '%s' needs TLS client certificates", host);
	return 0;
}

int docker_init(const struct docker_conf *c, struct err *e)
{
	const char *host = c->host && *c->host ? c->host : DOCKER_DEFAULT_HOST;
	int rc = conf_check(c, host, e), ntls = c->ca_file && *c->ca_file;

	if (rc)
		return rc;
	conf_release();
	cur.set = cur.refused = 0;
	conf.host = strdup(host);
	conf.ca = dup_or_null(c->ca_file);
	conf.cert = dup_or_null(c->cert_file);
	conf.key = dup_or_null(c->key_file);
	if (!conf.host || (ntls && (!conf.ca || !conf.cert || !conf.key))) {
		conf_release();
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	return 0;
}

int docker_use(const struct docker_conf *c, struct err *e)
{
	int rc;

	cur.set = cur.refused = 0;
	if (!c)
		return 0;
	if ((rc = conf_check(c, c->host ? c->host : "", e)))
		return rc;
	if (str_copy(cur.host, sizeof(cur.host), c->host) ||
	    str_copy(cur.ca, sizeof(cur.ca), c->ca_file ? c->ca_file : "") ||
	    str_copy(cur.cert, sizeof(cur.cert), c->cert_file ? c->cert_file : "") ||
	    str_copy(cur.key, sizeof(cur.key), c->key_file ? c->key_file : ""))
		return err_set(e, ERR_INVALID, "docker host %.64s: a setting is too long", c->host);
	cur.set = 1;
	return 0;
}

void docker_refuse(const char *why)
{
	cur.set = 0;
	cur.refused = 1;
	snprintf(cur.why, sizeof(cur.why), "%s", why);
}

const char *docker_current_host(void)
{
	return cur.set ? cur.host : conf.host ? conf.host : DOCKER_DEFAULT_HOST;
}

void docker_cleanup(void)
{
	if (handle)
		curl_easy_cleanup(handle);
	handle = NULL;
	conf_release();
	cur.set = cur.refused = 0;
}

static struct target configured(void)
{
	struct target t = {conf.host ? conf.host : DOCKER_DEFAULT_HOST, conf.ca, conf.cert, conf.key};

	if (cur.set) {
		struct target u = { cur.host, cur.ca[0] ? cur.ca : NULL, cur.cert[0] ? cur.cert : NULL,
				    cur.key[0] ? cur.key : NULL };
		return u;
	}
	return t;
}

/* Ids and names as Docker makes them: [A-Za-z0-9_.-], at most DOCKER_ID_MAX. */
static int id_valid(const char *what, const char *id, struct err *e)
{
	size_t n = id ? strlen(id) : 0, i;

	if (n == 0 || n > DOCKER_ID_MAX)
		return err_set(e, ERR_INVALID, "%s id must be 1 to %d characters", what, DOCKER_ID_MAX);
	for (i = 0; i < n; i++) {
		char ch = id[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '_' || ch == '.' || ch == '-'))
			return err_set(e, ERR_INVALID, "%s id '%s' has a character other than [A-Za-z0-9_.-]",
				       what, id);
	}
	return 0;
}

static size_t on_write(char *p, size_t size, size_t n, void *arg)
{
	struct call *c = arg;
	size_t len = size * n;
	long st = 0;

	curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &st);
	if (st < 200 || st > 299) {
		/* Only the start of an error body is kept: the message is at its front. */
		size_t room = c->errbody.max - c->errbody.len;
		if (buf_append(&c->errbody, p, len < room ? len : room))
			return 0;
		return len;
	}
	if (c->sink && (c->sink_rc = c->sink(c, p, len)))
		return len == 0 ? CURL_WRITEFUNC_ERROR : 0;
	return len;
}

/* The request body from c->parts, as curl asks for it. */
static size_t on_read(char *p, size_t size, size_t n, void *arg)
{
	struct call *c = arg;
	size_t room = size * n, done = 0;

	while (room > 0 && c->part < c->nparts) {
		const struct docker_part *pt = &c->parts[c->part];
		size_t take = pt->len - c->part_off < room ? pt->len - c->part_off : room;

		if (!pt->data && take > 0) {
			long got = pt->read(pt->arg, p + done, take);

			if (got <= 0)
				return CURL_READFUNC_ABORT;
			take = (size_t)got;
		} else if (pt->data) {
			memcpy(p + done, (const char *)pt->data + c->part_off, take);
		}
		done += take;
		room -= take;
		c->part_off += take;
		if (c->part_off == pt->len) {
			c->part++;
			c->part_off = 0;
		}
	}
	return done;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	static const char name[] = "X-Docker-Container-Path-Stat:";
	struct call *c = arg;
	size_t len = size * n, k = sizeof(name) - 1;

	if (len > k && strncasecmp(p, name, k) == 0) {
		const char *v = p + k, *end = p + len;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
			end--;
		buf_clear(&c->stathdr);
		if (buf_append(&c->stathdr, v, (size_t)(end - v)))
			buf_clear(&c->stathdr);  /* too long: reported as missing */
	}
	return len;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct call *c = arg;

	if (c->cancel && c->cancel(c->cancel_arg)) {
		c->cancelled = 1;
		return 1;
	}
	if (clock_ms() >= c->deadline) {
		c->timed_out = 1;
		return 1;
	}
	return 0;
}

static const struct {
	const char *words;
	int code;
} engine_words[] = {
	{ "No such image", ERR_NOIMAGE },
	{ "cannot overwrite directory", ERR_EXISTS },          /* noOverwriteDirNonDir */
	{ "extraction point is not a directory", ERR_NOTDIR }, /* an archive PUT's dir */
};

/* Docker's error body is {"message": "..."}; anything else is quoted as it came. */
static int docker_error(struct call *c)
{
	const char *msg = NULL;
	char text[300];
	json_object *o = NULL, *m;
	int code;
	size_t i;

	if (c->errbody.len) {
		o = json_tokener_parse(c->errbody.data);
		if (o && json_object_object_get_ex(o, "message", &m) && json_object_is_type(m, json_type_string))
			msg = json_object_get_string(m);
		else
			msg = c->errbody.data;
	}
	if (!msg || !*msg)
		msg = c->status == 404 ? "not found" : "no error message";
	snprintf(text, sizeof(text), "%s", msg);
	for (i = 0; text[i]; i++)
		if ((unsigned char)text[i] < 0x20)
			text[i] = ' ';
	switch (c->status) {
	case 400: code = ERR_INVALID; break;
	case 404: code = ERR_NOTFOUND; break;
	case 409: code = ERR_EXISTS; break;
	default: code = ERR_FAIL; break;
	}
	/* Docker's own words, its only way to tell these apart from other errors of their
	 * status: read here, where the engine's answer is, and turned into codes. */
	for (i = 0; i < sizeof(engine_words) / sizeof(engine_words[0]); i++)
		if (strstr(text, engine_words[i].words))
			code = engine_words[i].code;
	err_set(c->e, code, "docker %s: %s (%ld)", c->op, text, c->status);
	json_object_put(o);
	return code;
}

/* The URL of path on t for h, and the TLS client settings when t has them. */
static int target_on(CURL *h, const char *op, const struct target *t, const char *path,
		     struct buf *url, struct err *e)
{
	int tls = t->cert != NULL, rc;

	if (strncmp(t->host, "unix://", 7) == 0) {
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, t->host + 7);
		rc = buf_printf(url, "http://localhost%s%s", DOCKER_API, path);
	} else {
		const char *hostport = t->host + (strncmp(t->host, "tcp://", 6) == 0 ? 6 : 8);
		rc = buf_printf(url, "%s://%s%s%s", tls ? "https" : "http", hostport, DOCKER_API,
				path);
	}
	if (rc)
		return err_set(e, ERR_INVALID, "docker %s: request path too long", op);
	if (tls) {
		curl_easy_setopt(h, CURLOPT_CAINFO, t->ca);
		curl_easy_setopt(h, CURLOPT_SSLCERT, t->cert);
		curl_easy_setopt(h, CURLOPT_SSLKEY, t->key);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	}
	curl_easy_setopt(h, CURLOPT_URL, url->data);
	return 0;
}

static int set_target(struct call *c, const struct target *t, struct buf *url)
{
	return target_on(handle, c->op, t, c->path, url, c->e);
}

/* What every call sets: time limits, callbacks, buffers. */
static void set_transfer(struct call *c, char *curlerr)
{
	curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, curlerr);
	curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
	/* The progress callback keeps the deadline; curl's own timeout is the backstop. */
	curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, c->timeout_ms + 1000);
	curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms < 10000 ? c->timeout_ms : 10000L);
	curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(handle, CURLOPT_XFERINFODATA, c);
	curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(handle, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(handle, CURLOPT_HEADERDATA, c);
	/* Always set: curl keeps the receive buffer of the last size asked for, and a big one
	 * (for an archive) should not stay with the worker. */
	curl_easy_setopt(handle, CURLOPT_BUFFERSIZE, c->bufsize ? c->bufsize : (long)CURL_MAX_WRITE_SIZE);
}

/* The method and the body: in parts (an upload read by on_read), in one piece, or none. */
static void set_body(struct call *c)
{
	if (c->parts) {
		curl_off_t total = 0;

		for (size_t i = 0; i < c->nparts; i++)
			total += (curl_off_t)c->parts[i].len;
		curl_easy_setopt(handle, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, c->method);
		curl_easy_setopt(handle, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(handle, CURLOPT_READDATA, c);
		curl_easy_setopt(handle, CURLOPT_INFILESIZE_LARGE, total);
		curl_easy_setopt(handle, CURLOPT_UPLOAD_BUFFERSIZE, ARCHIVE_BUFSIZE);
	} else if (strcmp(c->method, "HEAD") == 0) {
		curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
	} else if (strcmp(c->method, "GET") != 0) {
		curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, c->method);
		if (c->body || strcmp(c->method, "DELETE") != 0) {
			curl_easy_setopt(handle, CURLOPT_POSTFIELDS, c->body ? c->body : "");
			curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
					 (curl_off_t)(c->body ? c->body_len : 0));
		}
	}
}

/* The request headers into *headers (the caller frees them, also on failure). */
static int set_headers(struct call *c, struct curl_slist **headers)
{
	struct curl_slist *h;

	/* No "Expect: 100-continue" round trip before large archive bodies. */
	if (!(h = curl_slist_append(*headers, "Expect:")))
		return err_set(c->e, ERR_NOMEM, "out of memory");
	*headers = h;
	if (c->ctype) {
		char ct[128];
		snprintf(ct, sizeof(ct), "Content-Type: %s", c->ctype);
		if (!(h = curl_slist_append(*headers, ct)))
			return err_set(c->e, ERR_NOMEM, "out of memory");
		*headers = h;
	}
	curl_easy_setopt(handle, CURLOPT_HTTPHEADER, *headers);
	return 0;
}

/* Why a transfer failed: the sink's error, a cancel, the deadline, or curl's reason. */
static int transfer_error(struct call *c, CURLcode cc, const char *curlerr)
{
	if (c->sink_rc)
		return c->sink_rc;
	if (c->cancelled)
		return err_set(c->e, ERR_FAIL, "docker %s: cancelled", c->op);
	if (c->timed_out || cc == CURLE_OPERATION_TIMEDOUT) {
		c->timed_out = 1;
		return err_set(c->e, ERR_FAIL, "docker %s: no answer within %ld ms", c->op,
			       c->timeout_ms);
	}
	/* No engine at the other end (down, restarting, or gone mid-answer): the caller may
	 * try again later, unlike an engine that answers. */
	int gone = cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
		   cc == CURLE_SSL_CONNECT_ERROR || cc == CURLE_SEND_ERROR ||
		   cc == CURLE_RECV_ERROR || cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE;
	return err_set(c->e, gone ? ERR_DOCKER : ERR_FAIL, "docker %s: %s", c->op,
		       curlerr[0] ? curlerr : curl_easy_strerror(cc));
}

/* Performs c against t. 0 for a 2xx answer (or 304, which callers check), else a code. */
static int perform_at(struct call *c, const struct target *t)
{
	struct curl_slist *headers = NULL;
	struct buf url;
	int rc;
	CURLcode cc;
	char curlerr[CURL_ERROR_SIZE] = "";

	c->deadline = clock_ms() + c->timeout_ms;
	buf_init(&c->errbody, ERRBODY_MAX);
	buf_init(&c->stathdr, STATHDR_MAX);
	buf_init(&url, 4096);
	if (!handle && !(handle = curl_easy_init())) {
		rc = err_set(c->e, ERR_FAIL, "docker %s: curl_easy_init failed", c->op);
		goto out;
	}
	curl_easy_reset(handle);
	if ((rc = set_target(c, t, &url)))
		goto out;
	set_transfer(c, curlerr);
	set_body(c);
	if ((rc = set_headers(c, &headers)))
		goto out;

	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cc = curl_easy_perform(handle);
	/* Every call, failed ones too: an engine that times out is what the histogram is for. */
	metrics_observe_docker(metrics_docker_op(c->op), clock_us_since(&t0));
	curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &c->status);
	if (cc != CURLE_OK)
		rc = transfer_error(c, cc, curlerr);
	else if ((c->status >= 200 && c->status <= 299) || c->status == 304)
		rc = 0;
	else
		rc = docker_error(c);
out:
	curl_slist_free_all(headers);
	buf_release(&url);
	buf_release(&c->errbody);
	if (!c->want_stat)
		buf_release(&c->stathdr);
	return rc;
}

static int perform(struct call *c)
{
	struct target t = configured();

	if (cur.refused)
		return err_set(c->e, ERR_DOCKER, "%s", cur.why);
	if (c->timeout_ms <= 0)
		c->timeout_ms = DOCKER_TIMEOUT_MS;
	return perform_at(c, &t);
}

static int sink_buf(struct call *c, const char *p, size_t n)
{
	struct buf *b = c->sink_arg;
	int rc = buf_append(b, p, n);

	if (rc == ERR_TOOBIG)
		return err_set(c->e, rc, "docker %s: answer larger than %zu bytes", c->op, b->max);
	if (rc)
		return err_set(c->e, rc, "docker %s: out of memory", c->op);
	return 0;
}

/* A call whose 2xx answer is a JSON document: *out is the caller's (json_object_put). */
static int call_json(struct call *c, json_type want, json_object **out)
{
	struct buf b;
	int rc;

	*out = NULL;
	buf_init(&b, DOCKER_RESPONSE_MAX);
	c->sink = sink_buf;
	c->sink_arg = &b;
	if ((rc = perform(c)))
		goto out;
	if (!b.data || !(*out = json_tokener_parse(b.data)) || !json_object_is_type(*out, want)) {
		json_object_put(*out);
		*out = NULL;
		rc = err_set(c->e, ERR_FAIL, "docker %s: the answer is not the JSON the API promises",
			     c->op);
	}
out:
	buf_release(&b);
	return rc;
}

static void call_init(struct call *c, const char *op, const char *method, const char *path,
		      long timeout_ms, struct err *e)
{
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->method = method;
	c->path = path;
	c->timeout_ms = timeout_ms;
	c->e = e;
}

/* A JSON request body (a NUL-terminated string that outlives the call). */
static void call_body(struct call *c, const char *json)
{
	c->ctype = "application/json";
	c->body = json;
	c->body_len = strlen(json);
}

int docker_ping(const char *host, struct err *e)
{
	struct target t = configured();
	struct err why;
	struct call c;
	struct buf b;
	int rc;

	if (host && strcmp(host, t.host) != 0) {
		t.host = host;
		t.ca = t.cert = t.key = NULL;
	} else if (!host && cur.refused) {
		return err_set(e, ERR_DOCKER, "%s", cur.why);
	}
	if (!host_valid(t.host))
		return err_set(e, ERR_FAIL, "docker unavailable: unsupported host %s", t.host);
	buf_init(&b, 64);
	call_init(&c, "ping", "GET", "/_ping", 3000, e);
	c.sink = sink_buf;
	c.sink_arg = &b;
	c.e = &why;
	rc = perform_at(&c, &t);
	if (rc && !c.status)
		rc = err_set(e, ERR_DOCKER, "docker unavailable: %s", why.msg);
	else if (rc || !b.data || strcmp(b.data, "OK") != 0)
		rc = err_set(e, ERR_FAIL, "docker unavailable: /_ping answered %ld", c.status);
	buf_release(&b);
	return rc;
}

/* "name=userns" in SecurityOptions (the engine's root is remapped), else a default
 * runtime named runsc (gVisor). */
static const char *isolation_of(json_object *info)
{
	json_object *opts, *rt;
	size_t i, n;

	if (json_object_object_get_ex(info, "SecurityOptions", &opts) &&
	    json_object_is_type(opts, json_type_array))
		for (i = 0, n = json_object_array_length(opts); i < n; i++) {
			const char *o = json_object_get_string(json_object_array_get_idx(opts, i));
			if (o && (strcmp(o, "name=userns") == 0 || strncmp(o, "name=userns,", 12) == 0))
				return "userns";
		}
	if (json_object_object_get_ex(info, "DefaultRuntime", &rt) &&
	    json_object_is_type(rt, json_type_string) &&
	    strcmp(json_object_get_string(rt), "runsc") == 0)
		return "runsc";
	return "";
}

int docker_info_parse_isolation(const char *json, char *out, size_t len)
{
	json_object *info = json ? json_tokener_parse(json) : NULL;

	if (len)
		out[0] = 0;
	if (!info || !json_object_is_type(info, json_type_object)) {
		json_object_put(info);
		return ERR_FAIL;
	}
	snprintf(out, len, "%s", isolation_of(info));
	json_object_put(info);
	return 0;
}

int docker_info_isolation(char *out, size_t len, long timeout_ms, struct err *e)
{
	json_object *info = NULL;
	struct call c;
	int rc;

	if (len)
		out[0] = 0;
	call_init(&c, "info", "GET", "/info", timeout_ms, e);
	if ((rc = call_json(&c, json_type_object, &info)))
		return rc;
	snprintf(out, len, "%s", isolation_of(info));
	json_object_put(info);
	return 0;
}

/* ---- JSON building ---- */

static int add_strings(json_object *o, const char *key, const char *const *list)
{
	json_object *a;

	if (!list)
		return 0;
	if (!(a = json_object_new_array()))
		return ERR_NOMEM;
	json_object_object_add(o, key, a);
	for (; *list; list++) {
		json_object *s = json_object_new_string(*list);
		if (!s || json_object_array_add(a, s)) {
			json_object_put(s);
			return ERR_NOMEM;
		}
	}
	return 0;
}

static int add_object(json_object *o, const char *key, json_object **out)
{
	if (!(*out = json_object_new_object()))
		return ERR_NOMEM;
	json_object_object_add(o, key, *out);
	return 0;
}

static int env_valid(const char *what, const char *const *list, int need_eq, struct err *e)
{
	for (; list && *list; list++) {
		const char *eq = strchr(*list, '=');
		if (need_eq && (!eq || eq == *list))
			return err_set(e, ERR_INVALID, "%s entry '%.64s' must be NAME=value", what, *list);
	}
	return 0;
}

/* ---- containers ---- */

/* {"key": "value", …} of "key=value" strings (which the caller checked have their '='). */
static json_object *labels_object(const char *const *l)
{
	json_object *labels = json_object_new_object();

	for (; labels && l && *l; l++) {
		const char *eq = strchr(*l, '=');
		char key[256];
		json_object *v;

		snprintf(key, sizeof(key), "%.*s", (int)(eq - *l), *l);
		if (!(v = json_object_new_string(eq + 1))) {
			json_object_put(labels);
			return NULL;
		}
		json_object_object_add(labels, key, v);
	}
	return labels;
}

/* /workspace in the writable layer (so that the disk limit counts it), or on a volume or
 * a bind the caller names: the archive API sees neither tmpfs nor a read-only root. A
 * volume gets c->volume_labels when the engine makes it. */
static int add_workspace(json_object *hc, const struct docker_create *c)
{
	json_object *mounts, *mount;

	if (!(mounts = json_object_new_array()))
		return ERR_NOMEM;
	json_object_object_add(hc, "Mounts", mounts);
	if (!c->workspace || !*c->workspace)
		goto agent;
	if (!(mount = json_object_new_object()) || json_object_array_add(mounts, mount)) {
		json_object_put(mount);
		return ERR_NOMEM;
	}
	json_add_str(mount, "Type", c->workspace[0] == '/' ? "bind" : "volume");
	json_add_str(mount, "Source", c->workspace);
	json_add_str(mount, "Target", "/workspace");
	if (c->volume_labels && c->workspace[0] != '/') {
		json_object *vo = json_object_new_object(), *vl = labels_object(c->volume_labels);
		if (!vo || !vl) {
			json_object_put(vo);
			json_object_put(vl);
			return ERR_NOMEM;
		}
		json_object_object_add(vo, "Labels", vl);
		json_object_object_add(mount, "VolumeOptions", vo);
	}
agent:
	/* One host file read-only (the sandbox's agent). */
	if (c->ro_bind_source && c->ro_bind_target) {
		if (!(mount = json_object_new_object()) || json_object_array_add(mounts, mount)) {
			json_object_put(mount);
			return ERR_NOMEM;
		}
		json_add_str(mount, "Type", "bind");
		json_add_str(mount, "Source", c->ro_bind_source);
		json_add_str(mount, "Target", c->ro_bind_target);
		json_add_bool(mount, "ReadOnly", 1);
	}
	return 0;
}

static int create_body(const struct docker_create *c, json_object **out)
{
	json_object *o, *hc, *labels, *logc;
	static const char *const drop_all[] = {"ALL", NULL};
	static const char *const nnp[] = {"no-new-privileges", NULL};
	int rc;

	if (!(o = *out = json_object_new_object()))
		return ERR_NOMEM;
	json_add_str(o, "Image", c->image);
	json_add_str(o, "User", c->user ? c->user : DEFAULT_USER);
	json_add_str(o, "WorkingDir", "/workspace");
	json_add_bool(o, "AttachStdin", 0);
	/* An input the service writes once before the start (docker_stdin_put), closed when
	 * it has written (StdinOnce): no later attach reaches the process. */
	json_add_bool(o, "OpenStdin", c->open_stdin != 0);
	json_add_bool(o, "StdinOnce", c->open_stdin != 0);
	json_add_bool(o, "Tty", 0);
	json_add_bool(o, "NetworkDisabled", 0);
	if ((rc = add_strings(o, "Env", c->env)) || (rc = add_strings(o, "Cmd", c->cmd)))
		return rc;
	if (!(labels = labels_object(c->labels)))
		return ERR_NOMEM;
	json_object_object_add(o, "Labels", labels);
	if ((rc = add_object(o, "HostConfig", &hc)) ||
	    (rc = add_strings(hc, "CapDrop", c->cap_drop ? c->cap_drop : drop_all)) ||
	    (rc = add_strings(hc, "CapAdd", c->cap_add)) ||
	    (rc = add_strings(hc, "SecurityOpt", nnp)) ||
	    (rc = add_strings(hc, "ExtraHosts", c->extra_hosts)) ||
	    (rc = add_object(hc, "LogConfig", &logc)))
		return rc;
	json_add_bool(hc, "Init", 1);
	json_add_bool(hc, "Privileged", 0);
	json_add_str(hc, "NetworkMode", c->network ? c->network : "bridge");
	json_add_str(logc, "Type", "none");
	if (c->memory > 0) {
		json_add_int(hc, "Memory", c->memory);
		json_add_int(hc, "MemorySwap", c->memory);
	}
	if (c->nano_cpus > 0)
		json_add_int(hc, "NanoCpus", c->nano_cpus);
	if (c->pids_limit > 0)
		json_add_int(hc, "PidsLimit", c->pids_limit);
	if (c->storage_size > 0) {
		json_object *so;
		char size[24];
		snprintf(size, sizeof(size), "%lld", (long long)c->storage_size);
		if ((rc = add_object(hc, "StorageOpt", &so)))
			return rc;
		json_add_str(so, "size", size);
	}
	return add_workspace(hc, c);
}

int docker_storage_refused(const struct err *e)
{
	/* moby's overlay2: "--storage-opt is supported only for overlay over xfs with 'pquota'
	 * mount option"; other drivers: "--storage-opt is not supported for <driver>". */
	return strstr(e->msg, "storage-opt is supported only") != NULL ||
	       strstr(e->msg, "storage-opt is not supported") != NULL;
}

/* POSTs body to path and reads the "Id" of what Docker made (a container or an exec) into
 * id_out. */
static int post_for_id(const char *kind, const char *path, json_object *body, char *id_out,
		       long timeout_ms, struct err *e)
{
	json_object *resp = NULL, *id;
	char what[32];
	struct call c;
	int rc;

	snprintf(what, sizeof(what), "create %s", kind);
	call_init(&c, what, "POST", path, timeout_ms, e);
	call_body(&c, json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
	if ((rc = call_json(&c, json_type_object, &resp)))
		goto out;
	if (!json_object_object_get_ex(resp, "Id", &id) || !json_object_is_type(id, json_type_string) ||
	    id_valid(kind, json_object_get_string(id), NULL)) {
		rc = err_set(e, ERR_FAIL, "docker %s: no id in the answer", what);
		goto out;
	}
	snprintf(id_out, DOCKER_ID_MAX + 1, "%s", json_object_get_string(id));
out:
	json_object_put(resp);
	return rc;
}

int docker_container_create(const struct docker_create *c, char *id_out, long timeout_ms,
			    struct err *e)
{
	json_object *body = NULL;
	const char *const *l;
	char path[256];
	const char *s;
	int rc;

	id_out[0] = 0;
	if (!c->image || !*c->image || strlen(c->image) > 255)
		return err_set(e, ERR_INVALID, "docker create container: an image is required");
	if (c->name && (rc = id_valid("container name", c->name, e)))
		return rc;
	for (int k = 0; k < 2; k++)
		for (l = k ? c->volume_labels : c->labels; l && *l; l++) {
			s = strchr(*l, '=');
			if (!s || s == *l || s - *l > 255)
				return err_set(e, ERR_INVALID, "label '%.64s' must be key=value", *l);
		}
	if ((rc = env_valid("env", c->env, 1, e)))
		return rc;
	if (c->memory < 0 || c->nano_cpus < 0 || c->pids_limit < 0)
		return err_set(e, ERR_INVALID, "docker create container: negative limit");
	if ((rc = create_body(c, &body))) {
		rc = err_set(e, rc, "out of memory");
		goto out;
	}
	if (c->name)
		snprintf(path, sizeof(path), "/containers/create?name=%s", c->name);
	else
		snprintf(path, sizeof(path), "/containers/create");
	rc = post_for_id("container", path, body, id_out, timeout_ms, e);
out:
	json_object_put(body);
	return rc;
}

/* The objects calls are about: the name their ids have in messages, and where they are. */
enum object { CONTAINER, VOLUME, EXEC };
static const struct {
	const char *kind, *collection;
} objects[] = {
	[CONTAINER] = { "container", "/containers/" },
	[VOLUME] = { "volume", "/volumes/" },
	[EXEC] = { "exec", "/exec/" },
};
#define OBJECT_PATH_MAX (DOCKER_ID_MAX + 64)

/* The id checked, then /<collection>/<id><rest> into path[OBJECT_PATH_MAX]. */
static int object_path(char *path, enum object o, const char *id, const char *rest,
		       struct err *e)
{
	int rc;

	if ((rc = id_valid(objects[o].kind, id, e)))
		return rc;
	snprintf(path, OBJECT_PATH_MAX, "%s%s%s", objects[o].collection, id, rest);
	return 0;
}

/* A call on one object with no body and no answer to read: METHOD /<collection>/<id><rest>. */
static int object_call(enum object o, const char *what, const char *method, const char *id,
		       const char *rest, long timeout_ms, struct err *e)
{
	char path[OBJECT_PATH_MAX];
	struct call c;
	int rc;

	if ((rc = object_path(path, o, id, rest, e)))
		return rc;
	call_init(&c, what, method, path, timeout_ms, e);
	return perform(&c);
}

/* GET /<collection>/<id><rest>, whose answer is a JSON object: *out is the caller's. */
static int object_get(enum object o, const char *what, const char *id, const char *rest,
		      long timeout_ms, json_object **out, struct err *e)
{
	char path[OBJECT_PATH_MAX];
	struct call c;
	int rc;

	*out = NULL;
	if ((rc = object_path(path, o, id, rest, e)))
		return rc;
	call_init(&c, what, "GET", path, timeout_ms, e);
	return call_json(&c, json_type_object, out);
}

int docker_container_start(const char *id, long timeout_ms, struct err *e)
{
	/* 304: already started. */
	return object_call(CONTAINER, "start container", "POST", id, "/start", timeout_ms, e);
}

static int get_int(json_object *o, const char *key, int64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return ERR_FAIL;
	*out = json_object_get_int64(v);
	return 0;
}

static int get_bool(json_object *o, const char *key, int *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
		return ERR_FAIL;
	*out = json_object_get_boolean(v);
	return 0;
}

/* A network entry's IPv4 address (its "IPAddress", checked to be one) into ip (ip_len bytes);
 * -1, ip untouched, when it has none. */
static int net_ip(json_object *net, char *ip, size_t ip_len)
{
	json_object *addr;
	struct in_addr a;

	if (!json_object_object_get_ex(net, "IPAddress", &addr) ||
	    !json_object_is_type(addr, json_type_string) ||
	    (size_t)json_object_get_string_len(addr) >= ip_len ||
	    inet_pton(AF_INET, json_object_get_string(addr), &a) != 1)
		return -1;
	memcpy(ip, json_object_get_string(addr), (size_t)json_object_get_string_len(addr) + 1);
	return 0;
}

/* The one network's IPv4 address of an inspect answer into ip[16]; "" when the container is
 * on none or on several (then the caller asks by network: docker_container_ip). */
static void one_ip(json_object *resp, char ip[16])
{
	json_object *ns, *nets;

	ip[0] = 0;
	if (!json_object_object_get_ex(resp, "NetworkSettings", &ns) ||
	    !json_object_object_get_ex(ns, "Networks", &nets) ||
	    !json_object_is_type(nets, json_type_object) || json_object_object_length(nets) != 1)
		return;
	json_object_object_foreach(nets, name, net) {
		(void)name;
		(void)net_ip(net, ip, 16);
	}
}

int docker_container_inspect(const char *id, struct docker_container_state *out,
			     long timeout_ms, struct err *e)
{
	json_object *resp = NULL, *st, *status;
	int64_t code = 0, pid = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = object_get(CONTAINER, "inspect container", id, "/json", timeout_ms, &resp, e)))
		return rc;
	if (!json_object_object_get_ex(resp, "State", &st) ||
	    !json_object_object_get_ex(st, "Status", &status) ||
	    get_bool(st, "Running", &out->running) || get_bool(st, "OOMKilled", &out->oom_killed) ||
	    get_int(st, "ExitCode", &code) || get_int(st, "Pid", &pid)) {
		rc = err_set(e, ERR_FAIL, "docker inspect container: no State in the answer");
		goto out;
	}
	snprintf(out->status, sizeof(out->status), "%s", json_object_get_string(status));
	out->exit_code = (int)code;
	out->pid = pid;
	one_ip(resp, out->ip);
out:
	json_object_put(resp);
	return rc;
}

int docker_container_size(const char *id, int64_t *size_rw, long timeout_ms, struct err *e)
{
	json_object *resp = NULL;
	int rc;

	*size_rw = 0;
	if ((rc = object_get(CONTAINER, "measure container", id, "/json?size=1", timeout_ms,
			     &resp, e)))
		return rc;
	/* Absent when the engine could not measure (the container is being removed): 0. */
	if (get_int(resp, "SizeRw", size_rw) || *size_rw < 0)
		*size_rw = 0;
	json_object_put(resp);
	return 0;
}

int docker_container_ip(const char *id, const char *network, char *ip, size_t ip_len,
			long timeout_ms, struct err *e)
{
	char path[DOCKER_ID_MAX + 64];
	json_object *resp = NULL, *ns, *nets, *net;
	struct call c;
	int rc;

	ip[0] = 0;
	if ((rc = id_valid("container", id, e)))
		return rc;
	snprintf(path, sizeof(path), "/containers/%s/json", id);
	call_init(&c, "inspect container", "GET", path, timeout_ms, e);
	if ((rc = call_json(&c, json_type_object, &resp)))
		return rc;
	if (!json_object_object_get_ex(resp, "NetworkSettings", &ns) ||
	    !json_object_object_get_ex(ns, "Networks", &nets) ||
	    !json_object_object_get_ex(nets, network, &net) || net_ip(net, ip, ip_len))
		rc = err_set(e, ERR_NOTFOUND, "container %.12s has no IPv4 address on %s", id,
			     network);
	json_object_put(resp);
	return rc;
}

int docker_container_update(const char *id, int64_t memory, int64_t nano_cpus, long timeout_ms,
			    struct err *e)
{
	char path[OBJECT_PATH_MAX], body[128];
	struct call c;
	int rc;

	if ((rc = object_path(path, CONTAINER, id, "/update", e)))
		return rc;
	/* Swap stays equal to memory: no swap, as at create. */
	snprintf(body, sizeof(body), "{\"Memory\":%lld,\"MemorySwap\":%lld,\"NanoCpus\":%lld}",
		 (long long)memory, (long long)memory, (long long)nano_cpus);
	call_init(&c, "update container", "POST", path, timeout_ms, e);
	call_body(&c, body);
	return perform(&c);
}

int docker_container_remove(const char *id, long timeout_ms, struct err *e)
{
	return object_call(CONTAINER, "remove container", "DELETE", id, "?force=1&v=1", timeout_ms, e);
}

/* What a list call is: its path, where the items are in the answer (an array, or the array
 * under a key), and an item's id key. */
struct list_kind {
	const char *what, *path, *items, *id;
};

/* Calls fn for each item of the list, filtered by the label "key" or "key=value". */
static int list_by_label(const struct list_kind *k, const char *label, const char *value_label,
			 docker_list_fn fn, void *arg, long timeout_ms, struct err *e)
{
	json_object *filter = NULL, *arr = NULL, *resp = NULL, *items;
	char key[256], *q = NULL;
	const char *eq = strchr(label, '=');
	struct buf path;
	struct call c;
	int rc;

	buf_init(&path, 2048);
	snprintf(key, sizeof(key), "%.*s", (int)(eq ? eq - label : (long)strlen(label)), label);
	if (!key[0] || strlen(label) > 512) {
		rc = err_set(e, ERR_INVALID, "label filter must be key or key=value");
		goto out;
	}
	if (!(filter = json_object_new_object()) || !(arr = json_object_new_array()) ||
	    json_object_object_add(filter, "label", arr) ||
	    json_object_array_add(arr, json_object_new_string(label)) ||
	    !(q = curl_easy_escape(NULL, json_object_to_json_string_ext(filter, JSON_C_TO_STRING_PLAIN), 0)) ||
	    buf_printf(&path, "%s%cfilters=%s", k->path, strchr(k->path, '?') ? '&' : '?', q)) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	call_init(&c, k->what, "GET", path.data, timeout_ms, e);
	if ((rc = call_json(&c, k->items ? json_type_object : json_type_array, &resp)))
		goto out;
	items = resp;
	if (k->items && (!json_object_object_get_ex(resp, k->items, &items) ||
			 !json_object_is_type(items, json_type_array)))
		goto out;  /* none: Docker answers null for an empty list */
	for (size_t i = 0, n = json_object_array_length(items); i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i), *id, *labels, *v, *state;
		const char *value = "", *st = "";

		if (!json_object_object_get_ex(it, k->id, &id) || !json_object_is_type(id, json_type_string))
			continue;
		if (json_object_object_get_ex(it, "Labels", &labels) &&
		    json_object_object_get_ex(labels, value_label ? value_label : key, &v) &&
		    json_object_is_type(v, json_type_string))
			value = json_object_get_string(v);
		if (json_object_object_get_ex(it, "State", &state) && json_object_is_type(state, json_type_string))
			st = json_object_get_string(state);
		if ((rc = fn(arg, json_object_get_string(id), value, st)))
			goto out;
	}
out:
	curl_free(q);
	json_object_put(filter);
	json_object_put(resp);
	buf_release(&path);
	return rc;
}

int docker_container_list(const char *label, const char *value_label, docker_list_fn fn,
			  void *arg, long timeout_ms, struct err *e)
{
	static const struct list_kind k = { "list containers", "/containers/json?all=1", NULL, "Id" };

	return list_by_label(&k, label, value_label, fn, arg, timeout_ms, e);
}

int docker_volume_list(const char *label, const char *value_label, docker_list_fn fn,
		       void *arg, long timeout_ms, struct err *e)
{
	static const struct list_kind k = { "list volumes", "/volumes", "Volumes", "Name" };

	return list_by_label(&k, label, value_label, fn, arg, timeout_ms, e);
}

int docker_volume_remove(const char *name, long timeout_ms, struct err *e)
{
	return object_call(VOLUME, "remove volume", "DELETE", name, "", timeout_ms, e);
}

/* ---- a container's standard input ---- */

/* Until h's socket is ready for events, or the deadline: 0, else -1. */
static int sock_wait(CURL *h, short events, int64_t deadline)
{
	curl_socket_t fd = CURL_SOCKET_BAD;
	int64_t left;

	if (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD)
		return -1;
	while ((left = deadline - clock_ms()) > 0) {
		struct pollfd p = { .fd = fd, .events = events };
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
	return -1;
}

static int stdin_send(CURL *h, const char *p, size_t n, int64_t deadline, struct err *e)
{
	while (n) {
		size_t sent = 0;
		CURLcode cc = curl_easy_send(h, p, n, &sent);

		if (cc == CURLE_AGAIN) {
			if (sock_wait(h, POLLOUT, deadline))
				return err_set(e, ERR_DOCKER, "docker attach stdin: not sent in time");
			continue;
		}
		if (cc != CURLE_OK)
			return err_set(e, ERR_DOCKER, "docker attach stdin: %s", curl_easy_strerror(cc));
		p += sent;
		n -= sent;
	}
	return 0;
}

/* The engine's answer to the attach, up to its blank line: 101 (upgraded) or 200 (the raw
 * stream without the upgrade) is the connection taken over; anything else is its refusal. */
static int stdin_answer(CURL *h, int64_t deadline, struct err *e)
{
	char head[2048];
	size_t len = 0;

	while (!memmem(head, len, "\r\n\r\n", 4)) {
		size_t got = 0;
		CURLcode cc;

		if (len == sizeof(head))
			return err_set(e, ERR_FAIL, "docker attach stdin: an answer header over %zu bytes",
				       sizeof(head));
		cc = curl_easy_recv(h, head + len, sizeof(head) - len, &got);
		if (cc == CURLE_AGAIN) {
			if (sock_wait(h, POLLIN, deadline))
				return err_set(e, ERR_DOCKER, "docker attach stdin: no answer in time");
			continue;
		}
		if (cc != CURLE_OK || got == 0)
			return err_set(e, ERR_DOCKER, "docker attach stdin: %s",
				       cc != CURLE_OK ? curl_easy_strerror(cc) : "the engine closed");
		len += got;
	}
	if (len < 12 || memcmp(head, "HTTP/1.", 7) ||
	    (memcmp(head + 8, " 101", 4) && memcmp(head + 8, " 200", 4))) {
		size_t line = strcspn(head, "\r\n");
		return err_set(e, ERR_FAIL, "docker attach stdin: answered %.*s",
			       (int)(line < 64 ? line : 64), head);
	}
	return 0;
}

int docker_stdin_put(const char *id, const void *data, size_t len, long timeout_ms,
		     struct err *e)
{
	static const char op[] = "attach stdin";
	struct target t = configured();
	char path[OBJECT_PATH_MAX], curlerr[CURL_ERROR_SIZE] = "";
	struct buf url, req;
	struct timespec t0;
	CURL *h;
	int rc;

	if (cur.refused)
		return err_set(e, ERR_DOCKER, "%s", cur.why);
	if ((rc = object_path(path, CONTAINER, id, "/attach?stream=1&stdin=1", e)))
		return rc;
	/* A handle of its own: CONNECT_ONLY leaves the connection to us, and the process's
	 * handle keeps its connection for the calls around this one. */
	if (!(h = curl_easy_init()))
		return err_set(e, ERR_FAIL, "docker %s: curl_easy_init failed", op);
	buf_init(&url, 4096);
	buf_init(&req, 1024);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int64_t deadline = clock_ms() + (timeout_ms > 0 ? timeout_ms : DOCKER_TIMEOUT_MS);
	if ((rc = target_on(h, op, &t, path, &url, e)))
		goto out;
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curlerr);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
	CURLcode cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		rc = err_set(e, ERR_DOCKER, "docker %s: %s", op,
			     curlerr[0] ? curlerr : curl_easy_strerror(cc));
		goto out;
	}
	/* The upgrade, as the docker CLI asks for it: the answer is 101 and the connection is
	 * the container's input from then on. No body: the engine would take its bytes for
	 * the request's. */
	if (buf_printf(&req, "POST %s%s HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\n"
			     "Upgrade: tcp\r\nContent-Length: 0\r\n\r\n", DOCKER_API, path)) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (!(rc = stdin_send(h, req.data, req.len, deadline, e)) &&
	    !(rc = stdin_answer(h, deadline, e)))
		rc = stdin_send(h, data, len, deadline, e);
out:
	/* Closed: the engine has the bytes, and gives them to the process when it runs (its
	 * input then closes: StdinOnce). */
	curl_easy_cleanup(h);
	metrics_observe_docker(metrics_docker_op(op), clock_us_since(&t0));
	buf_release(&url);
	buf_release(&req);
	return rc;
}

/* ---- exec ---- */

int docker_exec_create(const char *container, const struct docker_exec_opts *o,
		       char *id_out, long timeout_ms, struct err *e)
{
	char path[OBJECT_PATH_MAX];
	json_object *body = NULL;
	int rc;

	id_out[0] = 0;
	if ((rc = object_path(path, CONTAINER, container, "/exec", e)))
		return rc;
	if (!o->cmd || !o->cmd[0])
		return err_set(e, ERR_INVALID, "docker create exec: a command is required");
	if ((rc = env_valid("env", o->env, 1, e)))
		return rc;
	if (!(body = json_object_new_object()) ||
	    add_strings(body, "Cmd", o->cmd) || add_strings(body, "Env", o->env)) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	json_add_bool(body, "AttachStdin", o->attach_stdin != 0);
	json_add_bool(body, "AttachStdout", 1);
	json_add_bool(body, "AttachStderr", 1);
	json_add_bool(body, "Tty", 0);
	json_add_bool(body, "Privileged", 0);
	/* No User: the container's own, the one its create chose (docker_create.user). */
	if (o->user)
		json_add_str(body, "User", o->user);
	if (o->workdir)
		json_add_str(body, "WorkingDir", o->workdir);
	rc = post_for_id("exec", path, body, id_out, timeout_ms, e);
out:
	json_object_put(body);
	return rc;
}

struct exec_sink {
	struct dstream ds;
	struct docker_exec_io *io;
	int sink_stopped;
};

static int exec_out(void *arg, int stream, const char *data, size_t len)
{
	struct exec_sink *s = arg;
	int rc = s->io->sink(s->io->sink_arg, stream, data, len);

	if (rc)
		s->sink_stopped = 1;
	return rc;
}

static int sink_exec(struct call *c, const char *p, size_t n)
{
	struct exec_sink *s = c->sink_arg;
	struct err why;
	int rc = dstream_feed(&s->ds, p, n, &why);

	if (rc && s->sink_stopped)
		err_set(c->e, rc, "docker %s: stopped by the output sink", c->op);
	else if (rc)
		err_set(c->e, rc, "docker %s: %s", c->op, why.msg);
	return rc;
}

int docker_exec_start(const char *exec_id, struct docker_exec_io *io, long timeout_ms,
		      struct err *e)
{
	static const char body[] = "{\"Detach\":false,\"Tty\":false}";
	char path[OBJECT_PATH_MAX];
	struct exec_sink s;
	struct call c;
	int rc;

	io->timed_out = io->cancelled = 0;
	memset(io->bytes, 0, sizeof(io->bytes));
	if ((rc = object_path(path, EXEC, exec_id, "/start", e)))
		return rc;
	if (!io->sink)
		return err_set(e, ERR_INVALID, "docker start exec: an output sink is required");
	memset(&s, 0, sizeof(s));
	s.io = io;
	dstream_init(&s.ds, io->max_frame, exec_out, &s);
	call_init(&c, "start exec", "POST", path, timeout_ms, e);
	call_body(&c, body);
	c.sink = sink_exec;
	c.sink_arg = &s;
	c.cancel = io->cancel;
	c.cancel_arg = io->cancel_arg;
	rc = perform(&c);
	if (rc == 0 && c.status != 200)
		rc = err_set(e, ERR_FAIL, "docker start exec: answered %ld, not a stream", c.status);
	if (rc == 0 && (rc = dstream_finish(&s.ds, e)))
		err_set(e, rc, "docker start exec: the stream was cut inside a frame");
	io->timed_out = c.timed_out;
	io->cancelled = c.cancelled;
	io->bytes[1] = s.ds.bytes[1];
	io->bytes[2] = s.ds.bytes[2];
	return rc;
}

int docker_exec_start_detached(const char *exec_id, long timeout_ms, struct err *e)
{
	static const char body[] = "{\"Detach\":true,\"Tty\":false}";
	char path[OBJECT_PATH_MAX];
	struct call c;
	int rc;

	if ((rc = object_path(path, EXEC, exec_id, "/start", e)))
		return rc;
	call_init(&c, "start detached exec", "POST", path, timeout_ms, e);
	call_body(&c, body);
	return perform(&c);
}

int docker_exec_inspect(const char *exec_id, struct docker_exec_state *out, long timeout_ms,
			struct err *e)
{
	json_object *resp = NULL, *v;
	int64_t code = -1, pid = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = object_get(EXEC, "inspect exec", exec_id, "/json", timeout_ms, &resp, e)))
		return rc;
	if (get_bool(resp, "Running", &out->running)) {
		rc = err_set(e, ERR_FAIL, "docker inspect exec: no Running in the answer");
		goto out;
	}
	/* ExitCode is null until the command has ended. */
	if (json_object_object_get_ex(resp, "ExitCode", &v) && json_object_is_type(v, json_type_int))
		code = json_object_get_int64(v);
	get_int(resp, "Pid", &pid);
	out->exit_code = out->running ? -1 : (int)code;
	out->pid = pid;
out:
	json_object_put(resp);
	return rc;
}

/* ---- images ---- */

/* The last ch in s[0..n), or NULL. */
static const char *last_of(const char *s, size_t n, char ch)
{
	while (n > 0)
		if (s[--n] == ch)
			return s + n;
	return NULL;
}

int docker_image_pull_path(const char *image, struct buf *path, struct err *e)
{
	size_t n = image ? strlen(image) : 0, namelen, i;
	const char *at, *slash, *colon, *tag;
	char name[256], *qn = NULL, *qt = NULL;
	int rc;

	if (n == 0 || n > 255)
		return err_set(e, ERR_INVALID, "an image name must be 1 to 255 characters");
	for (i = 0; i < n; i++) {
		char ch = image[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      strchr("._-/:@", ch)))
			return err_set(e, ERR_INVALID, "image name '%s' has a character other than "
				       "[A-Za-z0-9._/:@-]", image);
	}
	/* name[:tag][@digest]: a digest wins over a tag; a colon before the last slash is a
	 * registry's port. */
	if ((at = strchr(image, '@'))) {
		namelen = (size_t)(at - image);
		tag = at + 1;
		slash = last_of(image, namelen, '/');
		colon = last_of(image, namelen, ':');
		if (colon && (!slash || colon > slash))
			namelen = (size_t)(colon - image);
	} else {
		slash = strrchr(image, '/');
		colon = strrchr(image, ':');
		if (colon && (!slash || colon > slash)) {
			namelen = (size_t)(colon - image);
			tag = colon + 1;
		} else {
			namelen = n;
			tag = "latest";
		}
	}
	if (namelen == 0 || !*tag || image[namelen - 1] == '/' || strchr(tag, '/') ||
	    (!at && strchr(tag, '@')))
		return err_set(e, ERR_INVALID, "image name '%s' is not name[:tag] or name@digest", image);
	memcpy(name, image, namelen);
	name[namelen] = 0;
	if (!(qn = curl_easy_escape(NULL, name, 0)) || !(qt = curl_easy_escape(NULL, tag, 0)))
		rc = err_set(e, ERR_NOMEM, "out of memory");
	else if ((rc = buf_printf(path, "/images/create?fromImage=%s&tag=%s", qn, qt)))
		rc = err_set(e, rc, "image name '%s' is too long", image);
	curl_free(qn);
	curl_free(qt);
	return rc;
}

/* The pull's progress: one JSON object a line. Lines are kept up to a bound (progress
 * lines are short); the first {"error": …} is the pull's failure. */
struct pull_state {
	struct buf line;
	char error[512];
};

static void pull_line(struct pull_state *ps)
{
	json_object *o, *v;

	if (ps->error[0] || !ps->line.len || !strstr(ps->line.data, "\"error\""))
		return;
	o = json_tokener_parse(ps->line.data);
	if (o && json_object_object_get_ex(o, "error", &v) && json_object_is_type(v, json_type_string))
		snprintf(ps->error, sizeof(ps->error), "%s", json_object_get_string(v));
	json_object_put(o);
}

static int sink_pull(struct call *c, const char *p, size_t n)
{
	struct pull_state *ps = c->sink_arg;

	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;

		if (buf_append(&ps->line, p, take))
			buf_clear(&ps->line);  /* a line past the bound: not one of Docker's */
		if (!nl)
			break;
		pull_line(ps);
		buf_clear(&ps->line);
		p += take + 1;
		n -= take + 1;
	}
	return 0;
}

int docker_image_inspect(const char *image, const char *label, int64_t *size, char *value,
			 size_t value_len, long timeout_ms, struct err *e)
{
	json_object *resp = NULL, *cfg, *labels, *v;
	char path[320];
	struct call c;
	int rc;

	*size = 0;
	value[0] = 0;
	/* The characters docker_image_pull_path takes: none needs escaping in the path. No
	 * reference has a ".." or an empty component, and curl would fold "/../" into another
	 * route of the engine. */
	if (!image[0] || strlen(image) > 255 ||
	    strspn(image, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@") !=
		    strlen(image) || strstr(image, "..") || strstr(image, "//") || image[0] == '/')
		return err_set(e, ERR_INVALID, "image name '%.255s' is not an image reference "
			       "([A-Za-z0-9._/:@-], no '..' or empty component)", image);
	snprintf(path, sizeof(path), "/images/%s/json", image);
	call_init(&c, "inspect image", "GET", path, timeout_ms, e);
	if ((rc = call_json(&c, json_type_object, &resp)))
		return rc;
	if (get_int(resp, "Size", size))
		rc = err_set(e, ERR_FAIL, "docker inspect image: no Size in the answer");
	else if (label && json_object_object_get_ex(resp, "Config", &cfg) &&
		 json_object_object_get_ex(cfg, "Labels", &labels) &&
		 json_object_object_get_ex(labels, label, &v) && json_object_is_type(v, json_type_string))
		snprintf(value, value_len, "%s", json_object_get_string(v));
	json_object_put(resp);
	return rc;
}

int docker_image_pull(const char *image, long timeout_ms, struct err *e)
{
	struct pull_state ps;
	struct buf path;
	struct call c;
	struct err why;
	int rc;

	memset(&ps, 0, sizeof(ps));
	buf_init(&ps.line, 64 * 1024);
	buf_init(&path, 2048);
	if ((rc = docker_image_pull_path(image, &path, e)))
		goto out;
	call_init(&c, "pull image", "POST", path.data, timeout_ms, &why);
	c.sink = sink_pull;
	c.sink_arg = &ps;
	rc = perform(&c);
	pull_line(&ps);  /* a last line without its newline */
	if (rc) {
		/* Docker's own message, without the "docker pull image:" prefix or status. */
		const char *m = why.msg, *p = strstr(m, "docker pull image: ");
		char text[sizeof(why.msg)];

		snprintf(text, sizeof(text), "%s", p ? p + 19 : m);
		size_t l = strlen(text);
		if (c.status && l > 6 && text[l - 1] == ')' && strrchr(text, '('))
			*strrchr(text, '(') = 0;
		l = strlen(text);
		while (l > 0 && text[l - 1] == ' ')
			text[--l] = 0;
		rc = err_set(e, rc, "%s", text);
	} else if (ps.error[0]) {
		rc = err_set(e, ERR_FAIL, "%s", ps.error);
	}
out:
	buf_release(&ps.line);
	buf_release(&path);
	return rc;
}

/* ---- archive ---- */

static int archive_path(struct buf *path, const char *container, const char *p, struct err *e)
{
	char *q;
	int rc;

	if ((rc = id_valid("container", container, e)))
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
			     const struct docker_part *parts, size_t nparts, long timeout_ms,
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
	call_init(&c, "write archive", "PUT", path.data, timeout_ms, e);
	c.ctype = "application/x-tar";
	c.parts = parts;
	c.nparts = nparts;
	rc = perform(&c);
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
	struct docker_part part = { .data = tar, .len = len };

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
	call_init(&c, op, "GET", p.data, timeout_ms, e);
	c.sink = sink;
	c.sink_arg = arg;
	c.bufsize = bufsize;
	rc = perform(&c);
out:
	buf_release(&p);
	return rc;
}

int docker_archive_get(const char *container, const char *path, struct buf *out,
		       long timeout_ms, struct err *e)
{
	return archive_get_to(container, path, "read archive", sink_buf, out, 0, timeout_ms, e);
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

int docker_archive_stat(const char *container, const char *path, struct docker_path_stat *out,
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
	call_init(&c, "stat path", "HEAD", NULL, timeout_ms, e);
	buf_init(&c.stathdr, STATHDR_MAX);
	if ((rc = archive_path(&p, container, path, e)))
		goto out;
	c.path = p.data;
	c.want_stat = 1;
	if ((rc = perform(&c)))
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
