/* docker.c: the Docker Engine API over libcurl (API v1.41, one handle per process): where
 * calls go (docker_init, docker_use, docker_refuse), the transfer (curl's handle, its
 * callbacks, the sinks and the body's source), Docker's errors as codes, and the ping. The
 * calls on containers, execs, images and archives are in docker_container.c, docker_exec.c,
 * docker_image.c and docker_archive.c, on top of this file (docker_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "sandboxd/lib/clock.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/engine/docker_int.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/common/banned.h"

#define ERRBODY_MAX (16 * 1024)

static CURL *handle;

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

struct target dk_configured(void)
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
int dk_id_valid(const char *what, const char *id, struct err *e)
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
		const struct box_part *pt = &c->parts[c->part];
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
int dk_target_on(CURL *h, const char *op, const struct target *t, const char *path,
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
	return dk_target_on(handle, c->op, t, c->path, url, c->e);
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

int dk_perform(struct call *c)
{
	struct target t = dk_configured();

	if (cur.refused)
		return err_set(c->e, ERR_DOCKER, "%s", cur.why);
	if (c->timeout_ms <= 0)
		c->timeout_ms = DOCKER_TIMEOUT_MS;
	return perform_at(c, &t);
}

int dk_sink_buf(struct call *c, const char *p, size_t n)
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
int dk_call_json(struct call *c, json_type want, json_object **out)
{
	struct buf b;
	int rc;

	*out = NULL;
	buf_init(&b, DOCKER_RESPONSE_MAX);
	c->sink = dk_sink_buf;
	c->sink_arg = &b;
	if ((rc = dk_perform(c)))
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

void dk_call_init(struct call *c, const char *op, const char *method, const char *path,
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
void dk_call_body(struct call *c, const char *json)
{
	c->ctype = "application/json";
	c->body = json;
	c->body_len = strlen(json);
}

int dk_call_refused(struct err *e)
{
	if (cur.refused)
		return err_set(e, ERR_DOCKER, "%s", cur.why);
	return 0;
}

int docker_ping(const char *host, struct err *e)
{
	struct target t = dk_configured();
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
	dk_call_init(&c, "ping", "GET", "/_ping", 3000, e);
	c.sink = dk_sink_buf;
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
