/* fuzz_mcp.c: the MCP layer on a POST body: json-c's parse, mcp_classify, then for a
 * tools/call every tool's argument check and translation, and the input taken as a REST
 * answer turned into each tool's result. Invariants: a request has a method and an id of
 * the two allowed types; a failed argument check names why and builds no body; a passed one
 * builds an object body with the path parameters set; every result is an object with a
 * content array; mcp_text_ok's yes survives a JSON round trip unchanged. */
#include "fuzz.h"
#include <json-c/json.h>
#include "sandboxd/proto/mcp.h"
#include "sandboxd/common/banned.h"

static const char *const names[] = { "sandbox_create", "sandbox_exec", "sandbox_read_file",
				     "sandbox_write_file", "sandbox_close", "sandbox_list_files",
				     "sandbox_preview" };

static void check_result(json_object *res)
{
	json_object *content;

	FUZZ_CHECK(json_object_is_type(res, json_type_object));
	FUZZ_CHECK(json_object_object_get_ex(res, "content", &content) &&
		   json_object_is_type(content, json_type_array));
	FUZZ_CHECK(json_object_to_json_string(res));
	json_object_put(res);
}

static void tools(json_object *args, const char *data, size_t size)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct mcp_tool *t = mcp_tool_find(names[i]);
		struct mcp_call c;
		struct err e = { .msg = "" };

		FUZZ_CHECK(t);
		if (mcp_tool_request(t, args, &c, &e)) {
			FUZZ_CHECK(e.msg[0] && !c.body);
		} else {
			FUZZ_CHECK(json_object_is_type(c.body, json_type_object));
			FUZZ_CHECK(c.owner && c.repo && (t->id == TOOL_CREATE || c.sandbox_id));
			json_object_put(c.body);
		}
		check_result(mcp_tool_result(t, 200, data, size, NULL));
		check_result(mcp_tool_result(t, 403, data, size, size ? "refused" : NULL));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_dup(data, size);
	struct json_tokener *tok = json_tokener_new_ex(32);
	json_object *m;
	struct mcp_msg msg;

	FUZZ_CHECK(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	m = size <= 1 << 20 ? json_tokener_parse_ex(tok, text, (int)size) : NULL;
	json_tokener_free(tok);
	mcp_classify(m, &msg);
	switch (msg.kind) {
	case MCP_REQUEST:
		FUZZ_CHECK(msg.method && msg.method[0]);
		FUZZ_CHECK(json_object_is_type(msg.id, json_type_string) ||
			   json_object_is_type(msg.id, json_type_int));
		FUZZ_CHECK(!msg.params || json_object_is_type(msg.params, json_type_object));
		break;
	case MCP_NOTIFICATION:
		FUZZ_CHECK(msg.method && !msg.id);
		break;
	case MCP_RESPONSE:
		break;
	case MCP_INVALID:
		FUZZ_CHECK(msg.error && msg.code < 0);
		json_object_put(mcp_error(msg.id, msg.code, msg.error));
		break;
	}
	json_object *args = NULL;
	if (msg.params && json_object_object_get_ex(msg.params, "arguments", &args))
		tools(args, text, size);
	else if (json_object_is_type(m, json_type_object))
		tools(m, text, size);
	if (mcp_text_ok(data, size)) {
		json_object *s = json_object_new_string_len(text, (int)size);
		json_object *back = json_tokener_parse(json_object_to_json_string(s));
		FUZZ_CHECK(back && (size_t)json_object_get_string_len(back) == size &&
			   memcmp(json_object_get_string(back), data, size) == 0);
		json_object_put(back);
		json_object_put(s);
	}
	json_object_put(m);
	free(text);
	return 0;
}
