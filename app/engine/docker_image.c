/* docker_image.c: images (the pull, its path and progress; inspect) and what the engine
 * says of itself (its isolation, from /info). */
#include <stdio.h>
#include <string.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "sandboxd/engine/docker.h"
#include "sandboxd/engine/docker_int.h"
#include "sandboxd/common/banned.h"

/* ---- the engine ---- */

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
	dk_call_init(&c, "info", "GET", "/info", timeout_ms, e);
	if ((rc = dk_call_json(&c, json_type_object, &info)))
		return rc;
	snprintf(out, len, "%s", isolation_of(info));
	json_object_put(info);
	return 0;
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
	dk_call_init(&c, "inspect image", "GET", path, timeout_ms, e);
	if ((rc = dk_call_json(&c, json_type_object, &resp)))
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
	dk_call_init(&c, "pull image", "POST", path.data, timeout_ms, &why);
	c.sink = sink_pull;
	c.sink_arg = &ps;
	rc = dk_perform(&c);
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
