/* mcp.c: MCP's JSON-RPC 2.0 envelope: versions, message classification, responses. */
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/mcp.h"
#include "sandboxd/common/banned.h"

/* Newest first: the first is what a client asking for an unknown version is offered. */
static const char *const versions[] = { MCP_LATEST_VERSION, "2025-06-18", "2025-03-26" };

int mcp_version_supported(const char *v)
{
	for (size_t i = 0; v && i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(v, versions[i]) == 0)
			return 1;
	return 0;
}

const char *mcp_version_pick(const char *v)
{
	return mcp_version_supported(v) ? v : MCP_LATEST_VERSION;
}

int mcp_version_batches(const char *v)
{
	return v && strcmp(v, "2025-03-26") == 0;
}

static void invalid(struct mcp_msg *out, int code, const char *why)
{
	out->kind = MCP_INVALID;
	out->code = code;
	out->error = why;
}

/* An integer id that the answer can echo as it came. json-c keeps integers up to 2^64 - 1
 * (above INT64_MAX as unsigned) and clamps the rest to INT64_MIN or UINT64_MAX without a
 * word, so an answer would name another request; and clients hold ids as signed 64-bit
 * numbers at most. Only |id| < 2^63 is taken: INT64_MIN itself cannot be told from a
 * clamped value. */
static int int_id_ok(json_object *id)
{
	if (!json_object_is_type(id, json_type_int))
		return 0;
	if (json_object_get_uint64(id) > (uint64_t)INT64_MAX)
		return 0;
	return json_object_get_int64(id) != INT64_MIN;
}

void mcp_classify(json_object *m, struct mcp_msg *out)
{
	json_object *v, *id = NULL;
	int has_id;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(m, json_type_object))
		return invalid(out, MCP_INVALID_REQUEST, "a message must be a JSON object");
	/* An id is echoed even when the rest is wrong, so that the client can match the
	 * error to its request; null, fractions, booleans and structures are not ids. */
	has_id = json_object_object_get_ex(m, "id", &id);
	if (has_id && (json_object_is_type(id, json_type_string) || int_id_ok(id)))
		out->id = id;
	if (!json_object_object_get_ex(m, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "2.0"))
		return invalid(out, MCP_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
	if (has_id && json_object_is_type(id, json_type_int) && !out->id)
		return invalid(out, MCP_INVALID_REQUEST,
			       "\"id\" must be a string or an integer between -9223372036854775807 "
			       "and 9223372036854775807");
	if (has_id && !out->id)
		return invalid(out, MCP_INVALID_REQUEST, "\"id\" must be a string or an integer");
	if (!json_object_object_get_ex(m, "method", &v)) {
		/* A client's answer to a server request; we send none, so it is only noted. */
		if (has_id && (json_object_object_get_ex(m, "result", NULL) ||
			       json_object_object_get_ex(m, "error", NULL))) {
			out->kind = MCP_RESPONSE;
			return;
		}
		return invalid(out, MCP_INVALID_REQUEST, "\"method\" is missing");
	}
	if (!json_object_is_type(v, json_type_string) || !json_object_get_string_len(v))
		return invalid(out, MCP_INVALID_REQUEST, "\"method\" must be a non-empty string");
	out->method = json_object_get_string(v);
	if (json_object_object_get_ex(m, "params", &v) && !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_object))
			return invalid(out, MCP_INVALID_PARAMS, "\"params\" must be an object");
		out->params = v;
	}
	out->kind = has_id ? MCP_REQUEST : MCP_NOTIFICATION;
}

static json_object *envelope(json_object *id)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_add_str(o, "jsonrpc", "2.0");
	json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
	return o;
}

json_object *mcp_result(json_object *id, json_object *result)
{
	json_object *o = result ? envelope(id) : NULL;

	if (!o) {
		json_object_put(result);
		return NULL;
	}
	json_object_object_add(o, "result", result);
	return o;
}

json_object *mcp_error(json_object *id, int code, const char *message)
{
	json_object *o = envelope(id), *err = json_object_new_object();

	if (!o || !err) {
		json_object_put(o);
		json_object_put(err);
		return NULL;
	}
	json_add_int(err, "code", code);
	json_add_str(err, "message", message);
	json_object_object_add(o, "error", err);
	return o;
}

json_object *mcp_initialize_result(const char *version)
{
	json_object *r = json_object_new_object(), *caps = json_object_new_object(),
		    *tools = json_object_new_object(), *info = json_object_new_object();

	if (!r || !caps || !tools || !info) {
		json_object_put(r);
		json_object_put(caps);
		json_object_put(tools);
		json_object_put(info);
		return NULL;
	}
	json_add_str(r, "protocolVersion", version);
	json_add_bool(tools, "listChanged", 0);
	json_object_object_add(caps, "tools", tools);
	json_object_object_add(r, "capabilities", caps);
	json_add_str(info, "name", "sandboxd");
	json_add_str(info, "version", "1.0");
	json_object_object_add(r, "serverInfo", info);
	json_add_str(r, "instructions",
		     "Linux sandboxes with a git repository cloned in them. sandbox_create starts "
		     "one on owner/repo at a ref and answers its id; pass owner, repo and that id "
		     "to sandbox_exec, sandbox_read_file and sandbox_write_file; the repository is "
		     "at /workspace/repo, where git push works as you. sandbox_close ends it; an "
		     "unused sandbox stops by itself after its idle time.");
	return r;
}

int mcp_origin_allowed(const char *origin, const char *allowed)
{
	size_t n = origin ? strlen(origin) : 0;
	const char *p = allowed;

	if (!n || !p)
		return 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		/* Spaces around entries are the operator's layout, not part of an origin. */
		const char *q = p, *end = p + len;
		while (q < end && *q == ' ')
			q++;
		while (end > q && end[-1] == ' ')
			end--;
		if ((size_t)(end - q) == n && strncasecmp(q, origin, n) == 0)
			return 1;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}
