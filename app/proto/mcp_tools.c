/* mcp_tools.c: the eight sandbox tools: their schemas, the check of a call's arguments, its
 * translation into the REST request that runs it, and the REST answer turned into a tool
 * result. The REST handlers do the work, so permissions, limits, masking and error texts
 * are the same on both doors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/query.h"
#include "sandboxd/proto/mcp.h"
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

enum arg_type { ARG_STRING, ARG_INT, ARG_NUMBER, ARG_ENV };

struct mcp_arg {
	const char *name;
	enum arg_type type;
	int required;
	long long min, max;  /* integers: the range; strings: the length */
};

#define OWNER_REPO { "owner", ARG_STRING, 1, 1, 255 }, { "repo", ARG_STRING, 1, 1, 255 }
#define SANDBOX OWNER_REPO, { "sandbox_id", ARG_STRING, 1, 1, 255 }

/* The create's own limits and egress as REST takes them (SPEC §4 "Limits"); REST checks
 * their values and names the field. */
static const struct mcp_arg create_args[] = {
	OWNER_REPO, { "ref", ARG_STRING, 0, 1, 255 }, { "image", ARG_STRING, 0, 1, 64 },
	{ "egress", ARG_STRING, 0, 1, 8 }, { "cpus", ARG_NUMBER, 0, 0, 0 },
	{ "memory_mib", ARG_INT, 0, 64, INT32_MAX }, { "disk_mib", ARG_INT, 0, 64, INT32_MAX },
	{ "isolation", ARG_STRING, 0, 1, 16 }, { NULL, 0, 0, 0, 0 } };
static const struct mcp_arg exec_args[] = {
	SANDBOX, { "command", ARG_STRING, 1, 1, 1 << 20 }, { "cwd", ARG_STRING, 0, 0, 4096 },
	{ "env", ARG_ENV, 0, 0, 0 }, { "timeout_seconds", ARG_INT, 0, 1, 3600 },
	{ NULL, 0, 0, 0, 0 } };
static const struct mcp_arg read_args[] = {
	SANDBOX, { "path", ARG_STRING, 1, 1, 4096 }, { NULL, 0, 0, 0, 0 } };
static const struct mcp_arg write_args[] = {
	SANDBOX, { "path", ARG_STRING, 1, 1, 4096 }, { "content", ARG_STRING, 1, 0, 64 << 20 },
	{ "mode", ARG_INT, 0, 0, 07777 }, { NULL, 0, 0, 0, 0 } };
static const struct mcp_arg close_args[] = { SANDBOX, { NULL, 0, 0, 0, 0 } };
static const struct mcp_arg list_args[] = {
	SANDBOX, { "path", ARG_STRING, 0, 1, 4096 }, { "depth", ARG_INT, 0, 1, 8 },
	{ NULL, 0, 0, 0, 0 } };
static const struct mcp_arg preview_args[] = {
	SANDBOX, { "port", ARG_INT, 1, 1, 65535 }, { "ttl_seconds", ARG_INT, 0, 1, 86400 },
	{ NULL, 0, 0, 0, 0 } };

/* GET /api/v3/user/sandboxes's query: REST checks state and names it; page and per_page
 * as the forge's lists take them (forge_page.h). */
static const struct mcp_arg sandboxes_args[] = {
	{ "state", ARG_STRING, 0, 1, 16 }, { "page", ARG_INT, 0, 1, 100000 },
	{ "per_page", ARG_INT, 0, 1, 100 }, { NULL, 0, 0, 0, 0 } };

/* Schemas as JSON text: what clients (and the language models behind them) read. */
#define S_OWNER "\"owner\":{\"type\":\"string\",\"description\":\"Owner of the repository (an account login).\"}"
#define S_REPO "\"repo\":{\"type\":\"string\",\"description\":\"Repository name.\"}"
#define S_ID "\"sandbox_id\":{\"type\":\"string\",\"description\":\"The id sandbox_create answered.\"}"
#define S_PATH "\"path\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096,\"description\":\"Relative to /workspace/repo, or absolute.\"}"
#define TOOL(name, title, desc, props, req, out, hints)                                       \
	"{\"name\":\"" name "\",\"title\":\"" title "\",\"description\":\"" desc "\","          \
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req  \
	"],\"additionalProperties\":false},\"outputSchema\":{\"type\":\"object\","             \
	"\"properties\":{" out "]},\"annotations\":{" hints "}}"
#define INT "{\"type\":\"integer\"}"
#define STR "{\"type\":\"string\"}"
#define BOOL "{\"type\":\"boolean\"}"

static const char create_schema[] = TOOL(
	"sandbox_create", "Create a sandbox",
	"Starts a Linux sandbox with the repository cloned at /workspace/repo, checked out at "
	"ref (a branch, tag or commit SHA; the default branch when absent). Answers its id "
	"once the container runs; the clone goes on in the background and the other tools "
	"wait for it. image picks one of the deployment's images (GET /api/v3/sandbox-images "
	"lists them); absent: the repository's choice, else the default.",
	S_OWNER "," S_REPO ",\"ref\":{\"type\":\"string\",\"maxLength\":255,\"description\":"
	"\"Branch, tag or commit SHA.\"},\"image\":{\"type\":\"string\",\"maxLength\":64,"
	"\"description\":\"An image name of this deployment, e.g. standard or minimal.\"},"
	"\"egress\":{\"type\":\"string\",\"enum\":[\"none\",\"web\",\"open\"],\"description\":"
	"\"What the sandbox may reach: none (only its git endpoint), web (ports 80 and 443) or "
	"open; never wider than the deployment's.\"},\"cpus\":{\"type\":\"number\",\"minimum\":"
	"0.01,\"description\":\"CPUs, up to the deployment's maximum.\"},\"memory_mib\":{\"type\":"
	"\"integer\",\"minimum\":64,\"description\":\"Memory in MiB, up to the deployment's "
	"maximum.\"},\"disk_mib\":{\"type\":\"integer\",\"minimum\":64,\"description\":\"Disk "
	"in MiB (what its commands may write), up to the deployment's maximum.\"},"
	"\"isolation\":{\"type\":\"string\",\"enum\":[\"container\",\"gvisor\"],\"description\":"
	"\"container (the default) or gvisor: a kernel of its own in user space, where an "
	"engine offers it.\"}",
	"\"owner\",\"repo\"", "\"id\":" STR ",\"ref\":" STR ",\"image\":" STR
	"},\"required\":[\"id\",\"ref\"",
	"\"readOnlyHint\":false,\"destructiveHint\":false,\"openWorldHint\":false");

static const char exec_schema[] = TOOL(
	"sandbox_exec", "Run a command",
	"Runs command with bash -c (as root in the sandbox where the engine keeps that root from "
	"the host's, else as an unprivileged user); cd and export do not carry over "
	"to the next call (use cwd and env). A non-zero exit is a normal result. stdout and "
	"stderr are each capped at 1 MiB (first and last 512 KiB); past timeout_seconds the "
	"whole process tree is killed and exitCode is 124 with timedOut true.",
	S_OWNER "," S_REPO "," S_ID ",\"command\":{\"type\":\"string\",\"minLength\":1,"
	"\"description\":\"Shell command for bash -c.\"},\"cwd\":{\"type\":\"string\","
	"\"description\":\"Working directory, relative to /workspace/repo or absolute.\"},"
	"\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
	"\"description\":\"Extra environment variables.\"},\"timeout_seconds\":{\"type\":"
	"\"integer\",\"minimum\":1,\"maximum\":3600,\"default\":600}",
	"\"owner\",\"repo\",\"sandbox_id\",\"command\"",
	"\"exitCode\":" INT ",\"stdout\":" STR ",\"stderr\":" STR ",\"timedOut\":" BOOL
	",\"truncated\":" BOOL ",\"durationMs\":" INT ",\"stdoutBytes\":" INT
	",\"stderrBytes\":" INT "},\"required\":[\"exitCode\",\"stdout\",\"stderr\",\"timedOut\","
	"\"truncated\",\"durationMs\",\"stdoutBytes\",\"stderrBytes\"",
	"\"readOnlyHint\":false,\"destructiveHint\":true,\"openWorldHint\":true");

static const char read_schema[] = TOOL(
	"sandbox_read_file", "Read a file",
	"Reads a file of the sandbox. content is the text when the file is valid UTF-8 "
	"without NUL bytes; otherwise it is base64 and encoding is \\\"base64\\\".",
	S_OWNER "," S_REPO "," S_ID "," S_PATH, "\"owner\",\"repo\",\"sandbox_id\",\"path\"",
	"\"path\":" STR ",\"size\":" INT ",\"content\":" STR ",\"encoding\":{\"type\":\"string\","
	"\"enum\":[\"base64\"]}},\"required\":[\"path\",\"size\",\"content\"",
	"\"readOnlyHint\":true,\"openWorldHint\":false");

static const char write_schema[] = TOOL(
	"sandbox_write_file", "Write a file",
	"Writes UTF-8 text to a file of the sandbox, creating parent directories; the file "
	"belongs to the sandbox user, with mode (default 0644, e.g. 493 for 0755).",
	S_OWNER "," S_REPO "," S_ID "," S_PATH ",\"content\":{\"type\":\"string\"},\"mode\":"
	"{\"type\":\"integer\",\"minimum\":0,\"maximum\":4095,\"default\":420}",
	"\"owner\",\"repo\",\"sandbox_id\",\"path\",\"content\"",
	"\"ok\":" BOOL ",\"path\":" STR ",\"size\":" INT "},\"required\":[\"ok\",\"path\",\"size\"",
	"\"readOnlyHint\":false,\"destructiveHint\":true,\"openWorldHint\":false");

static const char close_schema[] = TOOL(
	"sandbox_close", "Close a sandbox",
	"Stops and removes the sandbox and revokes its git credentials; its files are gone. "
	"Closing a closed sandbox succeeds again.",
	S_OWNER "," S_REPO "," S_ID, "\"owner\",\"repo\",\"sandbox_id\"",
	"\"closed\":" BOOL "},\"required\":[\"closed\"",
	"\"readOnlyHint\":false,\"destructiveHint\":true,\"idempotentHint\":true,"
	"\"openWorldHint\":false");

static const char list_schema[] = TOOL(
	"sandbox_list_files", "List files",
	"Lists a directory of the sandbox (default: the repository, /workspace/repo) to depth "
	"levels (1 to 8, default 1): each entry's name, absolute path, type (file, dir, "
	"symlink or other), size, mode and mtime, sorted by path. Symbolic links are listed, "
	"never followed. At most 10,000 entries; truncated says when there were more.",
	S_OWNER "," S_REPO "," S_ID ",\"path\":{\"type\":\"string\",\"minLength\":1,"
	"\"maxLength\":4096,\"default\":\".\",\"description\":\"A directory, relative to "
	"/workspace/repo, or absolute.\"},\"depth\":{\"type\":\"integer\",\"minimum\":1,"
	"\"maximum\":8,\"default\":1}",
	"\"owner\",\"repo\",\"sandbox_id\"",
	"\"path\":" STR ",\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"properties\":{\"name\":" STR ",\"path\":" STR ",\"type\":{\"type\":\"string\","
	"\"enum\":[\"file\",\"dir\",\"symlink\",\"other\"]},\"size\":" INT ",\"mode\":" INT
	",\"mtime\":" STR "}}},\"truncated\":" BOOL "},\"required\":[\"path\",\"entries\","
	"\"truncated\"",
	"\"readOnlyHint\":true,\"openWorldHint\":false");

static const char preview_schema[] = TOOL(
	"sandbox_preview", "Preview a port",
	"Makes a URL that reaches the HTTP server listening on port in the sandbox, for a "
	"browser (every method, WebSockets, large bodies). Whoever has the URL may use it until "
	"it expires (ttl_seconds, default 3600), is deleted or the sandbox ends. Nothing "
	"listening on the port: the URL answers 502.",
	S_OWNER "," S_REPO "," S_ID ",\"port\":{\"type\":\"integer\",\"minimum\":1,"
	"\"maximum\":65535,\"description\":\"The port a server listens on in the sandbox.\"},"
	"\"ttl_seconds\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400,"
	"\"default\":3600}",
	"\"owner\",\"repo\",\"sandbox_id\",\"port\"",
	"\"url\":" STR ",\"previewId\":" STR ",\"port\":" INT ",\"expires_at\":" STR
	"},\"required\":[\"url\",\"previewId\",\"port\",\"expires_at\"",
	"\"readOnlyHint\":false,\"destructiveHint\":false,\"openWorldHint\":true");

static const char sandboxes_schema[] = TOOL(
	"sandbox_list", "List your sandboxes",
	"Lists the caller's sandboxes on every repository, newest first, per_page (1 to 100, "
	"default 30) at a time: page 1, 2, … until a page holds fewer. Each is what the "
	"sandbox's GET answers (id, ref, commit, state, clone, image, egress, resources, times, "
	"end_reason) and its repository (owner/name), which the other tools take as owner and "
	"repo. state keeps those in one state only.",
	"\"state\":{\"type\":\"string\",\"enum\":[\"starting\",\"ready\",\"closed\","
	"\"stopped\",\"failed\"],\"description\":\"Only the sandboxes in this state; ready is "
	"one that runs.\"},\"page\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100000,"
	"\"default\":1},\"per_page\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,"
	"\"default\":30}",
	"", "\"sandboxes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":"
	"{\"id\":" STR ",\"repository\":" STR ",\"ref\":" STR ",\"state\":" STR
	",\"created_at\":" STR "}}}},\"required\":[\"sandboxes\"",
	"\"readOnlyHint\":true,\"openWorldHint\":false");

static const struct mcp_tool tools[] = {
	{ "sandbox_create", TOOL_CREATE, "POST", "", create_args, create_schema, NULL },
	{ "sandbox_exec", TOOL_EXEC, "POST", "/exec", exec_args, exec_schema, NULL },
	{ "sandbox_read_file", TOOL_READ, "POST", "/read", read_args, read_schema, NULL },
	{ "sandbox_write_file", TOOL_WRITE, "POST", "/write", write_args, write_schema, NULL },
	{ "sandbox_close", TOOL_CLOSE, "POST", "/close", close_args, close_schema, NULL },
	{ "sandbox_list_files", TOOL_LIST_FILES, "POST", "/list", list_args, list_schema, NULL },
	{ "sandbox_preview", TOOL_PREVIEW, "POST", "/previews", preview_args, preview_schema, NULL },
	{ "sandbox_list", TOOL_LIST, "GET", "", sandboxes_args, sandboxes_schema,
	  "/api/v3/user/sandboxes" },
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

const struct mcp_tool *mcp_tool_find(const char *name)
{
	for (size_t i = 0; name && i < NTOOLS; i++)
		if (strcmp(name, tools[i].name) == 0)
			return &tools[i];
	return NULL;
}

json_object *mcp_tools_list(void)
{
	json_object *list = json_object_new_array(), *r = json_object_new_object();

	if (!list || !r)
		goto fail;
	for (size_t i = 0; i < NTOOLS; i++) {
		json_object *t = json_tokener_parse(tools[i].schema);
		if (!t || json_object_array_add(list, t)) {
			json_object_put(t);
			goto fail;
		}
	}
	json_object_object_add(r, "tools", list);
	return r;
fail:
	json_object_put(list);
	json_object_put(r);
	return NULL;
}

static const struct mcp_arg *arg_find(const struct mcp_tool *t, const char *name)
{
	for (const struct mcp_arg *a = t->args; a->name; a++)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}

static int check_arg(const struct mcp_arg *a, json_object *v, struct err *e)
{
	switch (a->type) {
	case ARG_STRING: {
		long long n = json_object_get_string_len(v);
		if (!json_object_is_type(v, json_type_string))
			return err_set(e, ERR_INVALID, "argument '%s' must be a string", a->name);
		if (n < a->min || n > a->max)
			return err_set(e, ERR_INVALID, "argument '%s' must be %lld to %lld bytes long",
					a->name, a->min, a->max);
		if (memchr(json_object_get_string(v), 0, (size_t)n))
			return err_set(e, ERR_INVALID, "argument '%s' must not hold a NUL byte",
					a->name);
		return 0;
	}
	case ARG_INT: {
		long long n = json_object_get_int64(v);
		/* A client may send 30.0 for 30: JSON has numbers, not integers. */
		if (json_object_is_type(v, json_type_double)) {
			double d = json_object_get_double(v);
			if (!(d >= -1e15 && d <= 1e15) || (double)(long long)d != d)
				goto bad_int;
			n = (long long)d;
		} else if (!json_object_is_type(v, json_type_int)) {
			goto bad_int;
		}
		if (n < a->min || n > a->max)
			goto bad_int;
		return 0;
	bad_int:
		return err_set(e, ERR_INVALID, "argument '%s' must be an integer from %lld to %lld",
				a->name, a->min, a->max);
	}
	case ARG_NUMBER:
		if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
			return 0;
		return err_set(e, ERR_INVALID, "argument '%s' must be a number", a->name);
	case ARG_ENV:
		if (json_object_is_type(v, json_type_object)) {
			json_object_object_foreach(v, k, val) {
				(void)k;
				if (!json_object_is_type(val, json_type_string))
					goto bad_env;
			}
			return 0;
		}
	bad_env:
		return err_set(e, ERR_INVALID, "argument 'env' must be an object of strings");
	}
	return err_set(e, ERR_INVALID, "argument '%s' has an unknown type", a->name);
}

static int64_t int_arg(json_object *args, const char *name, int64_t dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(args, name, &v) || json_object_is_type(v, json_type_null))
		return dflt;
	if (json_object_is_type(v, json_type_double))
		return (int64_t)json_object_get_double(v);
	return json_object_get_int64(v);
}

/* Copies args[name] into body[key] when present. */
static void copy_arg(json_object *body, const char *key, json_object *args, const char *name)
{
	json_object *v;

	if (json_object_object_get_ex(args, name, &v) && !json_object_is_type(v, json_type_null))
		json_object_object_add(body, key, json_object_get(v));
}

static const char *str_arg(json_object *args, const char *name)
{
	json_object *v;

	return json_object_object_get_ex(args, name, &v) ? json_object_get_string(v) : NULL;
}

int mcp_tool_request(const struct mcp_tool *t, json_object *args, struct mcp_call *c,
		     struct err *e)
{
	json_object *v;

	memset(c, 0, sizeof(*c));
	if (!json_object_is_type(args, json_type_object))
		return err_set(e, ERR_INVALID, "arguments must be an object");
	json_object_object_foreach(args, key, val) {
		const struct mcp_arg *a = arg_find(t, key);
		if (!a)
			return err_set(e, ERR_INVALID, "unknown argument '%.64s'", key);
		int rc = json_object_is_type(val, json_type_null) ? 0 : check_arg(a, val, e);
		if (rc)
			return rc;
	}
	for (const struct mcp_arg *a = t->args; a->name; a++)
		if (a->required && (!json_object_object_get_ex(args, a->name, &v) ||
				    json_object_is_type(v, json_type_null)))
			return err_set(e, ERR_INVALID, "missing argument '%s'", a->name);
	c->owner = str_arg(args, "owner");
	c->repo = str_arg(args, "repo");
	c->sandbox_id = str_arg(args, "sandbox_id");
	if (!(c->body = json_object_new_object()))
		return err_set(e, ERR_NOMEM, "out of memory");
	switch (t->id) {
	case TOOL_CREATE:
		copy_arg(c->body, "ref", args, "ref");
		copy_arg(c->body, "image", args, "image");
		copy_arg(c->body, "egress", args, "egress");
		copy_arg(c->body, "cpus", args, "cpus");
		copy_arg(c->body, "memoryMiB", args, "memory_mib");
		copy_arg(c->body, "diskMiB", args, "disk_mib");
		copy_arg(c->body, "isolation", args, "isolation");
		break;
	case TOOL_EXEC:
		copy_arg(c->body, "cmd", args, "command");
		copy_arg(c->body, "cwd", args, "cwd");
		copy_arg(c->body, "env", args, "env");
		json_add_int(c->body, "timeoutMs", int_arg(args, "timeout_seconds", 600) * 1000);
		break;
	case TOOL_READ:
		copy_arg(c->body, "path", args, "path");
		break;
	case TOOL_WRITE: {
		/* The REST body carries the file in base64. */
		json_object *content = json_object_object_get(args, "content");
		size_t n = (size_t)json_object_get_string_len(content);
		char *b64 = malloc(base64_encoded_size(n));
		if (!b64) {
			json_object_put(c->body);
			c->body = NULL;
			return err_set(e, ERR_NOMEM, "out of memory");
		}
		base64_encode((const unsigned char *)json_object_get_string(content), n, b64);
		copy_arg(c->body, "path", args, "path");
		json_add_str(c->body, "content", b64);
		free(b64);
		json_add_int(c->body, "mode", int_arg(args, "mode", 0644));
		break;
	}
	case TOOL_CLOSE:
		break;
	case TOOL_LIST_FILES:
		json_add_str(c->body, "path", str_arg(args, "path") ? str_arg(args, "path") : ".");
		json_add_int(c->body, "depth", int_arg(args, "depth", 1));
		break;
	case TOOL_PREVIEW:
		/* Integers as the REST fields want them (a client may send 3000.0). */
		json_add_int(c->body, "port", int_arg(args, "port", 0));
		json_add_int(c->body, "ttl", int_arg(args, "ttl_seconds", 3600));
		break;
	case TOOL_LIST: {
		/* The state percent-encoded, so that it stays one value (REST names a bad one). */
		const char *st = str_arg(args, "state");
		char enc[16 * 3 + 1];

		enc[st ? query_percent_encode(st, strlen(st), "0123456789ABCDEF", enc) : 0] = 0;
		snprintf(c->query, sizeof(c->query), "state=%s&page=%lld&per_page=%lld", enc,
			 (long long)int_arg(args, "page", 1), (long long)int_arg(args, "per_page", 30));
		break;
	}
	}
	return 0;
}

int mcp_text_ok(const unsigned char *s, size_t n)
{
	return utf8_text_ok(s, n);
}

json_object *mcp_tool_error(const char *text)
{
	json_object *r = json_object_new_object(), *content = json_object_new_array(),
		    *item = json_object_new_object();

	if (!r || !content || !item) {
		json_object_put(r);
		json_object_put(content);
		json_object_put(item);
		return NULL;
	}
	json_add_str(item, "type", "text");
	json_add_str(item, "text", text);
	json_object_array_add(content, item);
	json_object_object_add(r, "content", content);
	json_add_bool(r, "isError", 1);
	return r;
}

/* read_file: the REST answer's base64 content becomes text when it is text. */
static int read_result(json_object *o)
{
	json_object *v;
	const char *b64;
	size_t n, len = 0;
	unsigned char *raw;

	if (!json_object_object_get_ex(o, "content", &v) || !json_object_is_type(v, json_type_string))
		return -1;
	b64 = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (!(raw = malloc(n / 4 * 3 + 3)))
		return -1;
	if (base64_decode(b64, n, raw, &len)) {
		free(raw);
		return -1;
	}
	if (mcp_text_ok(raw, len))
		json_object_object_add(o, "content", json_object_new_string_len((char *)raw, (int)len));
	else
		json_add_str(o, "encoding", "base64");
	free(raw);
	return 0;
}

json_object *mcp_tool_result(const struct mcp_tool *t, int status, const char *body, size_t len,
			     const char *error)
{
	json_object *o = NULL, *r, *content, *item;
	char fallback[64];

	if (status >= 400 || status < 200) {
		snprintf(fallback, sizeof(fallback), "the call failed with HTTP status %d", status);
		return mcp_tool_error(error && *error ? error : fallback);
	}
	if (t->id == TOOL_CLOSE) {
		o = json_object_new_object();
		json_add_bool(o, "closed", 1);
	} else {
		struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
		if (tok && len <= (size_t)INT32_MAX)
			o = json_tokener_parse_ex(tok, body, (int)len);
		json_tokener_free(tok);
		/* The list is a JSON array: a tool's result is an object. */
		if (t->id == TOOL_LIST && json_object_is_type(o, json_type_array)) {
			json_object *wrap = json_object_new_object();
			if (wrap)
				json_object_object_add(wrap, "sandboxes", o);
			else
				json_object_put(o);
			o = wrap;
		}
		if (!json_object_is_type(o, json_type_object) ||
		    (t->id == TOOL_READ && read_result(o))) {
			json_object_put(o);
			return mcp_tool_error("internal error: the answer could not be read");
		}
		if (t->id == TOOL_CREATE) {
			/* The tool promises {id, ref, image}. */
			json_object *keep = json_object_new_object();
			copy_arg(keep, "id", o, "id");
			copy_arg(keep, "ref", o, "ref");
			copy_arg(keep, "image", o, "image");
			json_object_put(o);
			o = keep;
		}
	}
	r = json_object_new_object();
	content = json_object_new_array();
	item = json_object_new_object();
	if (!o || !r || !content || !item) {
		json_object_put(o);
		json_object_put(r);
		json_object_put(content);
		json_object_put(item);
		return NULL;
	}
	/* Clients that predate structuredContent read the same object as text. The answer
	 * holds it twice, and must fit one response body (HTTP_OUT_MAX, 64 MiB). */
	const char *json = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!json || strlen(json) > MCP_RESULT_MAX) {
		json_object_put(o);
		json_object_put(r);
		json_object_put(content);
		json_object_put(item);
		snprintf(fallback, sizeof(fallback), "the result is too large for MCP (over %d MiB)",
			 MCP_RESULT_MAX >> 20);
		return mcp_tool_error(fallback);
	}
	json_add_str(item, "type", "text");
	json_add_str(item, "text", json);
	json_object_array_add(content, item);
	json_object_object_add(r, "content", content);
	json_object_object_add(r, "structuredContent", o);
	json_add_bool(r, "isError", 0);
	return r;
}
