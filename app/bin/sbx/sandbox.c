/* sandbox.c: a sandbox's route from its id alone, and the commands that are one call each:
 * create, close, preview. The routes of a sandbox live under its repository
 * (/api/v3/repos/{o}/{r}/diffinery/sandboxes/{id}); GET /api/v3/sandboxes/{id} says which. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

/* "owner/name" as two escaped path segments joined by '/'. */
static int repo_segments(const char *repo, char *out, size_t n)
{
	const char *slash = strchr(repo, '/');
	char owner[256], o[800], r[800];

	if (!slash || slash == repo || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - repo) >= sizeof(owner))
		return -1;
	memcpy(owner, repo, (size_t)(slash - repo));
	owner[slash - repo] = 0;
	if (url_escape(owner, o, sizeof(o)) || url_escape(slash + 1, r, sizeof(r)))
		return -1;
	return (size_t)snprintf(out, n, "%s/%s", o, r) >= n ? -1 : 0;
}

const char *str_field(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

int sandbox_path(const struct sbx *s, const char *id, char *out, size_t n)
{
	char path[1024], eid[512], seg[1700];
	struct reply r;
	struct json_object *o;
	const char *repo;
	int rc;

	if (!*id || url_escape(id, eid, sizeof(eid)))
		return say(SBX_USAGE, "not a sandbox id: '%.80s'", id);
	snprintf(path, sizeof(path), "/api/v3/sandboxes/%s", eid);
	if (http_json(s, "GET", path, NULL, &r) || r.status != 200) {
		rc = http_fail(&r);
		buf_free(&r.body);
		return rc;
	}
	o = json_tokener_parse(r.body.p);
	repo = str_field(o, "repository");
	if (!repo || repo_segments(repo, seg, sizeof(seg)))
		rc = say(SBX_FAIL, "the server's answer for %s names no repository", id);
	else if ((size_t)snprintf(out, n, "/api/v3/repos/%s/diffinery/sandboxes/%s", seg, eid) >= n)
		rc = say(SBX_FAIL, "the sandbox's path is too long");
	else
		rc = SBX_OK;
	json_object_put(o);
	buf_free(&r.body);
	return rc;
}

/* A call expected to answer `want`: prints the JSON with --json, else hands it to show. */
int call_json(struct sbx *s, const char *method, const char *path, const char *body, long want,
		int (*show)(struct json_object *o))
{
	struct reply r;
	int rc = SBX_OK;

	if (http_json(s, method, path, body, &r) || r.status != want) {
		rc = http_fail(&r);
	} else if (s->json) {
		if (r.body.len)
			print_json_text(&r.body);
	} else if (show) {
		struct json_object *o = json_tokener_parse(r.body.p);

		rc = o ? show(o) : say(SBX_FAIL, "the server's answer is not JSON");
		json_object_put(o);
	}
	buf_free(&r.body);
	return rc;
}

static int show_id(struct json_object *o)
{
	const char *id = str_field(o, "id");

	if (!id)
		return say(SBX_FAIL, "the server's answer has no id");
	printf("%s\n", id);
	return SBX_OK;
}

int cmd_create(struct sbx *s, int argc, char **argv)
{
	char seg[1700], path[2048], repo[600];
	const char *at;
	struct json_object *body;
	int rc;

	if (argc != 2)
		return usage("create takes one OWNER/NAME[@REF]");
	at = strchr(argv[1], '@');
	if ((size_t)snprintf(repo, sizeof(repo), "%.*s", at ? (int)(at - argv[1]) : (int)strlen(argv[1]),
			     argv[1]) >= sizeof(repo) || repo_segments(repo, seg, sizeof(seg)))
		return usage("create: the repository must be OWNER/NAME");
	if (at && !at[1])
		return usage("create: an empty ref after @");
	snprintf(path, sizeof(path), "/api/v3/repos/%s/diffinery/sandboxes", seg);
	body = json_object_new_object();
	if (at)
		json_object_object_add(body, "ref", json_object_new_string(at + 1));
	rc = call_json(s, "POST", path, json_object_to_json_string(body), 201, show_id);
	json_object_put(body);
	return rc;
}

int cmd_close(struct sbx *s, int argc, char **argv)
{
	char path[2048];
	int save = argc == 3 && !strcmp(argv[2], "--save"), rc;

	if (argc != 2 && !save)
		return usage("close takes one ID (and --save to save unpushed work first)");
	if ((rc = sandbox_path(s, argv[1], path, sizeof(path) - 8)))
		return rc;
	strncat(path, "/close", sizeof(path) - strlen(path) - 1);
	return call_json(s, "POST", path, save ? "{\"save\":true}" : "{}", 204, NULL);
}

static int show_url(struct json_object *o)
{
	const char *url = str_field(o, "url");

	if (!url)
		return say(SBX_FAIL, "the server's answer has no url");
	printf("%s\n", url);
	return SBX_OK;
}

int cmd_preview(struct sbx *s, int argc, char **argv)
{
	char path[2048], body[64], *end;
	long port;
	int rc;

	if (argc != 3)
		return usage("preview takes ID PORT");
	port = strtol(argv[2], &end, 10);
	if (*end || end == argv[2] || port < 1 || port > 65535)
		return usage("preview: PORT must be a number from 1 to 65535");
	if ((rc = sandbox_path(s, argv[1], path, sizeof(path) - 16)))
		return rc;
	strncat(path, "/previews", sizeof(path) - strlen(path) - 1);
	snprintf(body, sizeof(body), "{\"port\":%ld}", port);
	return call_json(s, "POST", path, body, 201, show_url);
}
