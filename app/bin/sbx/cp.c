/* cp.c: sbx cp LOCAL ID:PATH and sbx cp ID:PATH LOCAL, through the raw file routes
 * (PUT / GET …/files/{path}): the bytes go from the file to the socket and back as they
 * come, never held whole in memory. A download goes to LOCAL.sbx-part, renamed over LOCAL
 * once whole, so that a failure never leaves half a file under the name. PATH is relative
 * to the repository's work tree, absolute when it starts with '/'. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

/* The API's {path}: each segment escaped, a leading '/' as %2F (absolute). */
static int file_path(const char *p, struct buf *out)
{
	char seg[4096], esc[3 * sizeof(seg)];
	int first = 1;

	if (*p == '/' && buf_add(out, "%2F", 3))
		return -1;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n) {
			if (n >= sizeof(seg))
				return -1;
			memcpy(seg, p, n);
			seg[n] = 0;
			if (!first && buf_add(out, "/", 1))
				return -1;
			first = 0;
			if (url_escape(seg, esc, sizeof(esc)) || buf_add(out, esc, strlen(esc)))
				return -1;
		}
		p += n + (e != NULL);
	}
	return out->len ? 0 : -1;
}

/* "ID:PATH" → id and path; 0 when arg is one. An ID holds no '/', so that a local path
 * with a colon is written ./a:b. */
static int remote(const char *arg, char *id, size_t n, const char **path)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || memchr(arg, '/', (size_t)(colon - arg)) ||
	    (size_t)(colon - arg) >= n || !colon[1])
		return -1;
	memcpy(id, arg, (size_t)(colon - arg));
	id[colon - arg] = 0;
	*path = colon + 1;
	return 0;
}

struct down {
	CURL *c;
	long status;
	FILE *f;
	struct buf refusal;
	int write_failed;
};

static size_t on_down(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct down *d = ctx;
	size_t n = size * nmemb, take;

	if (http_refusal(d->c, &d->status, &d->refusal, p, n, &take))
		return take;
	if (fwrite(p, 1, n, d->f) != n) {
		d->write_failed = errno ? errno : EIO;
		return 0;
	}
	return n;
}

static int transfer(struct sbx *s, const char *id, const char *rpath, const char *local, int up)
{
	char base[2048], url[8192], part[4096];
	struct buf fp = { 0 }, answer = { 0 };
	struct curl_slist *h = NULL;
	struct progress pr;
	struct down d = { 0 };
	struct stat st;
	FILE *in = NULL;
	CURLcode cc;
	int rc;

	if (file_path(rpath, &fp)) {
		buf_free(&fp);
		return usage("cp: the sandbox's PATH is empty or too long");
	}
	if (up) {
		in = fopen(local, "rb");
		if (!in || fstat(fileno(in), &st) || !S_ISREG(st.st_mode)) {
			rc = say(SBX_FAIL, "%s: %s", local, in ? "not a regular file" : strerror(errno));
			goto out;
		}
	} else if ((size_t)snprintf(part, sizeof(part), "%s.sbx-part", local) >= sizeof(part)) {
		rc = usage("cp: the local path is too long");
		goto out;
	}
	if ((rc = sandbox_path(s, id, base, sizeof(base))))
		goto out;
	if ((size_t)snprintf(url, sizeof(url), "%s%s/files/%s", s->url, base, fp.p) >= sizeof(url)) {
		rc = usage("cp: the sandbox's PATH is too long");
		goto out;
	}
	d.c = http_handle(s, url, &h, up ? "Content-Type: application/octet-stream" : NULL);
	if (!d.c) {
		rc = say(SBX_FAIL, "libcurl could not start");
		goto out;
	}
	progress_init(&pr, up ? "upload" : "download");
	curl_easy_setopt(d.c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(d.c, CURLOPT_XFERINFOFUNCTION, progress_cb);
	curl_easy_setopt(d.c, CURLOPT_XFERINFODATA, &pr);
	if (up) {
		/* Content-Length from the size, not chunked: the route requires it. */
		curl_easy_setopt(d.c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(d.c, CURLOPT_READDATA, in);
		curl_easy_setopt(d.c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)st.st_size);
		h = curl_slist_append(h, "Expect:");
		curl_easy_setopt(d.c, CURLOPT_HTTPHEADER, h);
		d.status = -1; /* the answer is JSON either way: into refusal */
		curl_easy_setopt(d.c, CURLOPT_WRITEFUNCTION, on_down);
	} else {
		d.f = fopen(part, "wb");
		if (!d.f) {
			rc = say(SBX_FAIL, "%s: %s", part, strerror(errno));
			curl_easy_cleanup(d.c);
			goto out;
		}
		curl_easy_setopt(d.c, CURLOPT_WRITEFUNCTION, on_down);
	}
	curl_easy_setopt(d.c, CURLOPT_WRITEDATA, &d);
	cc = curl_easy_perform(d.c);
	progress_done(&pr);
	if (up || !d.status)
		curl_easy_getinfo(d.c, CURLINFO_RESPONSE_CODE, &d.status);
	curl_easy_cleanup(d.c);
	if (d.f && fclose(d.f) && !d.write_failed)
		d.write_failed = errno;
	answer = d.refusal;
	d.refusal = (struct buf){ 0 };
	if (!answer.p && buf_add(&answer, "", 0)) {
		rc = say(SBX_FAIL, "out of memory");
	} else if (d.write_failed) {
		rc = say(SBX_FAIL, "%s: %s", part, strerror(d.write_failed));
	} else if (d.status != (up ? 201 : 200)) {
		/* The server's refusal even when it cut the upload short (an early 4xx). */
		struct reply r = { .status = d.status > 0 ? d.status : 0, .body = answer };

		if (!r.status)
			snprintf(r.err, sizeof(r.err), "%s: %s", s->url, curl_easy_strerror(cc));
		rc = http_fail(&r);
	} else if (cc != CURLE_OK) {
		rc = say(SBX_FAIL, "%s: %s", s->url, curl_easy_strerror(cc));
	} else if (!up && rename(part, local)) {
		rc = say(SBX_FAIL, "%s: %s", local, strerror(errno));
	} else {
		rc = SBX_OK;
		if (up && s->json)
			print_json_text(&answer);
	}
	if (!up && rc)
		(void)remove(part);
out:
	if (in)
		fclose(in);
	curl_slist_free_all(h);
	buf_free(&fp);
	buf_free(&answer);
	buf_free(&d.refusal);
	return rc;
}

int cmd_cp(struct sbx *s, int argc, char **argv)
{
	char id[256];
	const char *path;

	if (argc != 3)
		return usage("cp takes LOCAL ID:PATH or ID:PATH LOCAL");
	if (!remote(argv[2], id, sizeof(id), &path) && remote(argv[1], id, sizeof(id), &path))
		return transfer(s, id, path, argv[1], 1);
	if (!remote(argv[1], id, sizeof(id), &path) && remote(argv[2], id, sizeof(id), &path))
		return transfer(s, id, path, argv[2], 0);
	return usage("cp takes LOCAL ID:PATH or ID:PATH LOCAL (one side a sandbox's)");
}
