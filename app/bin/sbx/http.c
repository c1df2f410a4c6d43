/* http.c: requests with JSON answers, and the one way refusals are shown. The token goes
 * only in the Authorization header; libcurl's verbose mode stays off, so it never shows. */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

/* An answer held in memory is a JSON document: bounded, so a broken server cannot fill it. */
#define JSON_MAX (64u << 20)

static size_t to_buf(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct buf *b = ctx;
	size_t n = size * nmemb;

	if (b->len + n > JSON_MAX || buf_add(b, p, n))
		return 0;
	return n;
}

/* A refusal's body, kept to name it: what a server says is short. */
#define REFUSAL_MAX 65536u

int http_refusal(void *c, long *status, struct buf *refusal, const char *p, size_t n,
		 size_t *take)
{
	if (!*status)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (*status == 200)
		return 0;
	*take = refusal->len + n > REFUSAL_MAX || buf_add(refusal, p, n) ? 0 : n;
	return 1;
}

void *http_handle(const struct sbx *s, const char *url, struct curl_slist **hdrs,
		  const char *extra_header)
{
	CURL *c = curl_easy_init();
	char auth[600];

	if (!c)
		return NULL;
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", s->token);
	*hdrs = curl_slist_append(NULL, auth);
	explicit_bzero(auth, sizeof(auth));
	if (extra_header)
		*hdrs = curl_slist_append(*hdrs, extra_header);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sbx/1");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	/* A stalled connection (no byte for 5 minutes) ends; a long quiet exec does not:
	 * the streamed exec sends keep-alive lines every 15 s. */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 300L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	return c;
}

int url_escape(const char *s, char *out, size_t n)
{
	char *e = curl_easy_escape(NULL, s, 0);
	int rc = -1;

	if (e && strlen(e) < n) {
		memcpy(out, e, strlen(e) + 1);
		rc = 0;
	}
	curl_free(e);
	return rc;
}

int http_json(const struct sbx *s, const char *method, const char *path, const char *body,
	      struct reply *r)
{
	struct curl_slist *h = NULL;
	char url[4096];
	CURL *c;
	CURLcode cc;

	memset(r, 0, sizeof(*r));
	if ((size_t)snprintf(url, sizeof(url), "%s%s", s->url, path) >= sizeof(url)) {
		snprintf(r->err, sizeof(r->err), "the URL is too long");
		return -1;
	}
	c = http_handle(s, url, &h, body ? "Content-Type: application/json" : NULL);
	if (!c) {
		snprintf(r->err, sizeof(r->err), "libcurl could not start");
		curl_slist_free_all(h);
		return -1;
	}
	h = curl_slist_append(h, "Accept: application/json");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_buf);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
	cc = curl_easy_perform(c);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	else
		snprintf(r->err, sizeof(r->err), "%s: %s", s->url, curl_easy_strerror(cc));
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	if (!r->body.p && buf_add(&r->body, "", 0))
		return -1;
	return cc == CURLE_OK ? 0 : -1;
}

/* The server's text without control characters (a terminal's escapes), at most n - 1 bytes. */
static const char *clean(const char *s, char *out, size_t n)
{
	size_t i = 0;

	for (; *s && i + 1 < n; s++)
		out[i++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	out[i] = 0;
	return out;
}

int http_fail(const struct reply *r)
{
	char t[1024];

	struct json_object *o, *m;

	if (!r->status)
		return say(SBX_FAIL, "%s", r->err[0] ? r->err : "no answer");
	o = r->body.p ? json_tokener_parse(r->body.p) : NULL;
	if (o && json_object_is_type(o, json_type_object) &&
	    ((json_object_object_get_ex(o, "error", &m) && json_object_is_type(m, json_type_string)) ||
	     (json_object_object_get_ex(o, "message", &m) &&
	      json_object_is_type(m, json_type_string)))) {
		(void)say(SBX_FAIL, "%s (HTTP %ld)", clean(json_object_get_string(m), t, sizeof(t)), r->status);
	} else {
		(void)say(SBX_FAIL, "the server answered HTTP %ld%s%.200s", r->status,
			  r->body.len ? ": " : "", clean(r->body.p, t, sizeof(t)));
	}
	json_object_put(o);
	return SBX_FAIL;
}
