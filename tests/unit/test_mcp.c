/* test_mcp.c: MCP's JSON-RPC layer and its tools without a server: message classification,
 * version negotiation, the tool list's schemas, argument checks and their translation into
 * REST bodies, REST answers turned into tool results, and the UTF-8 test of read_file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "sandboxd/proto/mcp.h"
#include "sandboxd/common/banned.h"

static json_object *parse(const char *s)
{
	json_object *o = json_tokener_parse(s);

	assert_non_null(o);
	return o;
}

static void classify(const char *text, enum mcp_kind kind, int code)
{
	json_object *m = parse(text);
	struct mcp_msg msg;

	mcp_classify(m, &msg);
	assert_int_equal(msg.kind, kind);
	if (kind == MCP_INVALID) {
		assert_int_equal(msg.code, code);
		assert_non_null(msg.error);
	}
	json_object_put(m);
}

static void test_classify(void **state)
{
	(void)state;
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", MCP_REQUEST, 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\",\"params\":{}}", MCP_REQUEST, 0);
	classify("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", MCP_NOTIFICATION, 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", MCP_RESPONSE, 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}", MCP_RESPONSE, 0);
	classify("[1]", MCP_INVALID, MCP_INVALID_REQUEST);
	classify("{\"id\":1,\"method\":\"ping\"}", MCP_INVALID, MCP_INVALID_REQUEST);
	classify("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCP_INVALID, MCP_INVALID_REQUEST);
	classify("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_INVALID, MCP_INVALID_REQUEST);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_INVALID, MCP_INVALID_REQUEST);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", MCP_INVALID, MCP_INVALID_REQUEST);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1}", MCP_INVALID, MCP_INVALID_REQUEST);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}", MCP_INVALID,
		 MCP_INVALID_PARAMS);

	/* The id of an invalid message is kept when it is usable. */
	json_object *m = parse("{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}");
	struct mcp_msg msg;
	mcp_classify(m, &msg);
	assert_int_equal(json_object_get_int(msg.id), 7);
	json_object_put(m);
	mcp_classify(NULL, &msg);
	assert_int_equal(msg.kind, MCP_INVALID);
}

/* Integer ids the answer could not echo as sent (json-c keeps up to 2^64 - 1 and clamps
 * the rest) are refused, without an id; the largest 63-bit ones are kept. */
static void test_big_ids(void **state)
{
	static const char *const refused[] = {
		"9223372036854775808", "18446744073709551615", "99999999999999999999",
		"-9223372036854775808", "-9223372036854775809", "-99999999999999999999",
	};
	char text[128];
	struct mcp_msg msg;

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}",
			 refused[i]);
		json_object *m = parse(text);
		mcp_classify(m, &msg);
		assert_int_equal(msg.kind, MCP_INVALID);
		assert_int_equal(msg.code, MCP_INVALID_REQUEST);
		assert_null(msg.id);
		assert_non_null(strstr(msg.error, "9223372036854775807"));
		json_object_put(m);
	}
	json_object *m = parse("{\"jsonrpc\":\"2.0\",\"id\":9223372036854775807,\"method\":\"ping\"}");
	mcp_classify(m, &msg);
	assert_int_equal(msg.kind, MCP_REQUEST);
	assert_true(json_object_get_int64(msg.id) == INT64_MAX);
	json_object_put(m);
	m = parse("{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775807,\"method\":\"ping\"}");
	mcp_classify(m, &msg);
	assert_int_equal(msg.kind, MCP_REQUEST);
	assert_true(json_object_get_int64(msg.id) == -INT64_MAX);
	json_object_put(m);
}

static void test_origins(void **state)
{
	const char *list = "https://sandboxd.example.com, http://127.0.0.1:8080";

	(void)state;
	assert_true(mcp_origin_allowed("https://sandboxd.example.com", list));
	assert_true(mcp_origin_allowed("HTTPS://Sandboxd.Example.com", list));
	assert_true(mcp_origin_allowed("http://127.0.0.1:8080", list));
	assert_false(mcp_origin_allowed("http://evil.example", list));
	assert_false(mcp_origin_allowed("http://127.0.0.1:8081", list));
	assert_false(mcp_origin_allowed("http://127.0.0.1", list));
	assert_false(mcp_origin_allowed("https://sandboxd.example.com.evil.example", list));
	assert_false(mcp_origin_allowed("https://sandboxd.example", list));
	assert_false(mcp_origin_allowed("null", list));
	assert_false(mcp_origin_allowed("", list));
	assert_false(mcp_origin_allowed(NULL, list));
	assert_false(mcp_origin_allowed("http://x", ""));
	assert_false(mcp_origin_allowed(",", ","));
	assert_true(mcp_origin_allowed("http://a", "http://a"));
	assert_true(mcp_origin_allowed("http://b", "http://a,http://b,"));
}

static void test_versions(void **state)
{
	(void)state;
	assert_string_equal(mcp_version_pick("2025-06-18"), "2025-06-18");
	assert_string_equal(mcp_version_pick("2025-03-26"), "2025-03-26");
	assert_string_equal(mcp_version_pick("2024-11-05"), MCP_LATEST_VERSION);
	assert_string_equal(mcp_version_pick(NULL), MCP_LATEST_VERSION);
	assert_true(mcp_version_batches("2025-03-26"));
	assert_false(mcp_version_batches("2025-06-18"));
	assert_false(mcp_version_batches(MCP_LATEST_VERSION));
	assert_false(mcp_version_supported("2025-11-2"));
}

static void test_envelopes(void **state)
{
	json_object *id = json_object_new_string("q");
	json_object *r = mcp_result(id, json_object_new_object());
	json_object *e = mcp_error(NULL, MCP_PARSE_ERROR, "parse error: x");

	(void)state;
	assert_string_equal(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN),
			    "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"result\":{}}");
	assert_string_equal(json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN),
			    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
			    "\"message\":\"parse error: x\"}}");
	json_object_put(r);
	json_object_put(e);
	json_object_put(id);
}

static void test_tools_list(void **state)
{
	json_object *l = mcp_tools_list(), *tools, *t, *v;

	(void)state;
	assert_non_null(l);
	assert_true(json_object_object_get_ex(l, "tools", &tools));
	assert_int_equal(json_object_array_length(tools), 8);
	for (size_t i = 0; i < 7; i++) {
		t = json_object_array_get_idx(tools, i);
		assert_true(json_object_object_get_ex(t, "name", &v));
		assert_non_null(mcp_tool_find(json_object_get_string(v)));
		assert_true(json_object_object_get_ex(t, "inputSchema", &v));
		assert_true(json_object_object_get_ex(v, "required", NULL));
		assert_true(json_object_object_get_ex(t, "outputSchema", &v));
		assert_true(json_object_object_get_ex(v, "required", NULL));
	}
	json_object_put(l);
}

/* The REST body a call becomes, as JSON text; NULL with msg when refused. */
static const char *request(const char *tool, const char *args, char *msg, json_object **keep)
{
	struct mcp_call c;
	struct err e = { .msg = "" };
	json_object *a = parse(args);
	int rc = mcp_tool_request(mcp_tool_find(tool), a, &c, &e);

	snprintf(msg, 256, "%.255s", e.msg);
	json_object_put(a);
	*keep = c.body;
	return rc ? NULL : json_object_to_json_string_ext(c.body, JSON_C_TO_STRING_PLAIN);
}

#define BOX "\"owner\":\"o\",\"repo\":\"r\",\"sandbox_id\":\"sb_1\""

static void test_tool_request(void **state)
{
	char msg[256];
	json_object *b = NULL;

	(void)state;
	assert_string_equal(request("sandbox_exec", "{" BOX ",\"command\":\"ls\",\"timeout_seconds\":30,"
				    "\"env\":{\"A\":\"b\"}}", msg, &b),
			    "{\"cmd\":\"ls\",\"env\":{\"A\":\"b\"},\"timeoutMs\":30000}");
	json_object_put(b);
	assert_string_equal(request("sandbox_exec", "{" BOX ",\"command\":\"ls\",\"timeout_seconds\":2.0}",
				    msg, &b), "{\"cmd\":\"ls\",\"timeoutMs\":2000}");
	json_object_put(b);
	assert_string_equal(request("sandbox_write_file", "{" BOX ",\"path\":\"a\",\"content\":\"hi\"}",
				    msg, &b), "{\"path\":\"a\",\"content\":\"aGk=\",\"mode\":420}");
	json_object_put(b);
	assert_string_equal(request("sandbox_create", "{\"owner\":\"o\",\"repo\":\"r\"}", msg, &b), "{}");
	json_object_put(b);
	/* The create's image (SPEC §4 "What's inside") goes through as REST's field. */
	assert_string_equal(request("sandbox_create", "{\"owner\":\"o\",\"repo\":\"r\",\"ref\":\"f\","
				    "\"image\":\"minimal\"}", msg, &b),
			    "{\"ref\":\"f\",\"image\":\"minimal\"}");
	json_object_put(b);
	assert_null(request("sandbox_create", "{\"owner\":\"o\",\"repo\":\"r\",\"image\":3}", msg, &b));
	/* Its own limits and egress, as REST's fields (REST judges their values). */
	assert_string_equal(request("sandbox_create", "{\"owner\":\"o\",\"repo\":\"r\","
				    "\"egress\":\"none\",\"cpus\":0.5,\"memory_mib\":256,"
				    "\"disk_mib\":1024,\"isolation\":\"gvisor\"}", msg, &b),
			    "{\"egress\":\"none\",\"cpus\":0.5,\"memoryMiB\":256,\"diskMiB\":1024,"
			    "\"isolation\":\"gvisor\"}");
	json_object_put(b);
	assert_null(request("sandbox_create", "{\"owner\":\"o\",\"repo\":\"r\",\"cpus\":\"1\"}",
			    msg, &b));
	assert_string_equal(msg, "argument 'cpus' must be a number");
	assert_null(request("sandbox_create", "{\"owner\":\"o\",\"repo\":\"r\",\"disk_mib\":10}",
			    msg, &b));
	assert_string_equal(msg, "argument 'disk_mib' must be an integer from 64 to 2147483647");
	assert_string_equal(request("sandbox_list_files", "{" BOX "}", msg, &b),
			    "{\"path\":\".\",\"depth\":1}");
	json_object_put(b);
	assert_string_equal(request("sandbox_list_files", "{" BOX ",\"path\":\"src\",\"depth\":3.0}",
				    msg, &b), "{\"path\":\"src\",\"depth\":3}");
	json_object_put(b);
	assert_null(request("sandbox_list_files", "{" BOX ",\"depth\":9}", msg, &b));
	assert_string_equal(msg, "argument 'depth' must be an integer from 1 to 8");
	assert_null(request("sandbox_list_files", "{" BOX ",\"path\":\"\"}", msg, &b));
	assert_string_equal(msg, "argument 'path' must be 1 to 4096 bytes long");
	assert_string_equal(request("sandbox_preview", "{" BOX ",\"port\":3000.0}", msg, &b),
			    "{\"port\":3000,\"ttl\":3600}");
	json_object_put(b);
	assert_string_equal(request("sandbox_preview", "{" BOX ",\"port\":8080,\"ttl_seconds\":60}",
				    msg, &b), "{\"port\":8080,\"ttl\":60}");
	json_object_put(b);
	assert_null(request("sandbox_preview", "{" BOX ",\"port\":65536}", msg, &b));
	assert_string_equal(msg, "argument 'port' must be an integer from 1 to 65535");
	assert_null(request("sandbox_preview", "{" BOX "}", msg, &b));
	assert_string_equal(msg, "missing argument 'port'");
	assert_null(request("sandbox_preview", "{" BOX ",\"port\":80,\"ttl_seconds\":86401}", msg, &b));
	assert_string_equal(msg, "argument 'ttl_seconds' must be an integer from 1 to 86400");

	assert_null(request("sandbox_exec", "{" BOX "}", msg, &b));
	assert_string_equal(msg, "missing argument 'command'");
	assert_null(request("sandbox_exec", "{" BOX ",\"command\":null}", msg, &b));
	assert_string_equal(msg, "missing argument 'command'");
	assert_null(request("sandbox_exec", "{" BOX ",\"command\":\"\"}", msg, &b));
	assert_string_equal(msg, "argument 'command' must be 1 to 1048576 bytes long");
	assert_null(request("sandbox_exec", "{" BOX ",\"command\":\"x\",\"timeout_seconds\":0}", msg, &b));
	assert_string_equal(msg, "argument 'timeout_seconds' must be an integer from 1 to 3600");
	assert_null(request("sandbox_exec", "{" BOX ",\"command\":\"x\",\"timeout_seconds\":1.5}", msg, &b));
	assert_null(request("sandbox_exec", "{" BOX ",\"command\":\"x\",\"env\":{\"A\":1}}", msg, &b));
	assert_string_equal(msg, "argument 'env' must be an object of strings");
	assert_null(request("sandbox_close", "{" BOX ",\"force\":true}", msg, &b));
	assert_string_equal(msg, "unknown argument 'force'");
	assert_null(request("sandbox_read_file", "{" BOX ",\"path\":7}", msg, &b));
	assert_string_equal(msg, "argument 'path' must be a string");
	assert_null(request("sandbox_write_file", "{" BOX ",\"path\":\"a\",\"content\":\"\",\"mode\":4096}",
			    msg, &b));
	assert_string_equal(msg, "argument 'mode' must be an integer from 0 to 4095");
	assert_null(b);
}

static const char *structured(const char *tool, int status, const char *body, const char *error,
			      json_object **keep)
{
	json_object *r = mcp_tool_result(mcp_tool_find(tool), status, body, strlen(body), error), *v;

	assert_non_null(r);
	*keep = r;
	if (json_object_object_get_ex(r, "structuredContent", &v))
		return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	assert_true(json_object_get_boolean(json_object_object_get(r, "isError")));
	v = json_object_array_get_idx(json_object_object_get(r, "content"), 0);
	return json_object_get_string(json_object_object_get(v, "text"));
}

static void test_tool_result(void **state)
{
	json_object *r;

	(void)state;
	assert_string_equal(structured("sandbox_read_file", 200,
				       "{\"path\":\"a\",\"size\":3,\"content\":\"aMOp\"}", NULL, &r),
			    "{\"path\":\"a\",\"size\":3,\"content\":\"h\u00e9\"}");
	json_object_put(r);
	assert_string_equal(structured("sandbox_read_file", 200,
				       "{\"path\":\"a\",\"size\":3,\"content\":\"AP/+\"}", NULL, &r),
			    "{\"path\":\"a\",\"size\":3,\"content\":\"AP/+\",\"encoding\":\"base64\"}");
	json_object_put(r);
	assert_string_equal(structured("sandbox_create", 201,
				       "{\"id\":\"sb_1\",\"ref\":\"main\",\"state\":\"ready\"}", NULL, &r),
			    "{\"id\":\"sb_1\",\"ref\":\"main\"}");
	json_object_put(r);
	assert_string_equal(structured("sandbox_create", 201,
				       "{\"id\":\"sb_1\",\"ref\":\"main\",\"state\":\"ready\",\"image\":\"standard\"}",
				       NULL, &r),
			    "{\"id\":\"sb_1\",\"ref\":\"main\",\"image\":\"standard\"}");
	json_object_put(r);
	assert_string_equal(structured("sandbox_close", 204, "", NULL, &r), "{\"closed\":true}");
	json_object_put(r);
	assert_string_equal(structured("sandbox_exec", 403, "{}", "not your sandbox", &r),
			    "not your sandbox");
	json_object_put(r);
	assert_string_equal(structured("sandbox_exec", 502, "<html>", NULL, &r),
			    "the call failed with HTTP status 502");
	json_object_put(r);
	/* A result that could not be sent twice within one response body. */
	size_t big = MCP_RESULT_MAX;
	char *body = malloc(big + 64);
	assert_non_null(body);
	memcpy(body, "{\"path\":\"a\",\"size\":1,\"content\":\"", 32);
	memset(body + 32, 'A', big);
	memcpy(body + 32 + big, "\"}", 3);
	assert_string_equal(structured("sandbox_read_file", 200, body, NULL, &r),
			    "the result is too large for MCP (over 24 MiB)");
	json_object_put(r);
	free(body);
	assert_string_equal(structured("sandbox_exec", 200, "{\"exitCode\":", NULL, &r),
			    "internal error: the answer could not be read");
	json_object_put(r);
}

static void test_text_ok(void **state)
{
	(void)state;
	assert_true(mcp_text_ok((const unsigned char *)"", 0));
	assert_true(mcp_text_ok((const unsigned char *)"plain\n", 6));
	assert_true(mcp_text_ok((const unsigned char *)"h\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80", 12));
	assert_false(mcp_text_ok((const unsigned char *)"a\0b", 3));
	assert_false(mcp_text_ok((const unsigned char *)"\xc0\xaf", 2));         /* overlong '/' */
	assert_false(mcp_text_ok((const unsigned char *)"\xe0\x80\xaf", 3));     /* overlong */
	assert_false(mcp_text_ok((const unsigned char *)"\xed\xa0\x80", 3));     /* surrogate */
	assert_false(mcp_text_ok((const unsigned char *)"\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	assert_false(mcp_text_ok((const unsigned char *)"\xc3", 1));             /* cut short */
	assert_false(mcp_text_ok((const unsigned char *)"\xff", 1));
	assert_false(mcp_text_ok((const unsigned char *)"\xc3\x28", 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),   cmocka_unit_test(test_versions),
		cmocka_unit_test(test_envelopes),  cmocka_unit_test(test_tools_list),
		cmocka_unit_test(test_tool_request), cmocka_unit_test(test_tool_result),
		cmocka_unit_test(test_text_ok),    cmocka_unit_test(test_big_ids),
		cmocka_unit_test(test_origins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
