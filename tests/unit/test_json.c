/* test_json.c: request body parsing and typed field access with their exact messages. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/common/err.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"

/* Parses body as a test fixture; fails the test if it is not an object. */
static json_object *obj(const char *body)
{
	json_object *o = NULL;
	struct err e = { .msg = "" };

	if (json_parse_object(body, strlen(body), &o, &e))
		fail_msg("fixture '%s' does not parse: %s", body, e.msg);
	return o;
}

static void parse_ok(const char *body, size_t len, int nkeys)
{
	json_object *o = (json_object *)1;
	struct err e = { .msg = "" };

	assert_int_equal(json_parse_object(body, len, &o, &e), 0);
	assert_non_null(o);
	assert_true(json_object_is_type(o, json_type_object));
	assert_int_equal(json_object_object_length(o), nkeys);
	json_object_put(o);
}

static void parse_fails(const char *body, size_t len, const char *msg)
{
	json_object *o = (json_object *)1;
	struct err e = { .msg = "" };
	int rc = json_parse_object(body, len, &o, &e);

	if (rc == 0) {
		json_object_put(o);
		fail_msg("body of %zu bytes accepted", len);
	}
	assert_int_equal(rc, ERR_INVALID);
	assert_null(o);
	if (msg)
		assert_string_equal(e.msg, msg);
	else
		assert_true(strncmp(e.msg, "body is not valid JSON: ", 24) == 0);
}

static void test_parse_empty_is_object(void **state)
{
	parse_ok("", 0, 0);
	parse_ok(" \t\r\n", 4, 0);
	parse_ok("x", 0, 0);  /* len, not the NUL, bounds the body */
}

static void test_parse_objects(void **state)
{
	parse_ok("{}", 2, 0);
	const char *b = "  {\"a\": 1, \"b\": [1, 2, {\"c\": null}]}\r\n";

	parse_ok(b, strlen(b), 2);
	parse_ok("{\"name\":\"x\"}", 12, 1);
	/* the body need not be NUL-terminated: only len bytes are read */
	parse_ok("{\"a\":1}garbage", 7, 1);
}

static void test_parse_not_an_object(void **state)
{
	static const char *bodies[] = { "[]", "[1]", "\"s\"", " [ ] ", "1 ", "[{}]" };

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		parse_fails(bodies[i], strlen(bodies[i]), "body must be a JSON object");
}

static void test_parse_scalar_is_not_an_object(void **state)
{
	/* valid JSON texts (RFC 8259 §2) that are not objects: the message must say so, not
	 * call them invalid JSON */
	static const char *bodies[] = { "1", "-5", "1.5", "true", "false", "null" };

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		parse_fails(bodies[i], strlen(bodies[i]), "body must be a JSON object");
}

static void test_parse_invalid(void **state)
{
	static const char *bodies[] = {
		"{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{a:1}", "{\"a\":01}",
		"{\"a\":tru}", "{\"a\":\"\\x\"}", "{\"a\":1 \"b\":2}",
		"{\"a\":\"unterminated}",
	};

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		parse_fails(bodies[i], strlen(bodies[i]), NULL);
}

static void test_parse_garbage(void **state)
{
	/* neither JSON nor an object: refused, with either message */
	static const char *bodies[] = { "x", "-", "}", "]", "nul", "\xef\xbb\xbf{}", "<a/>" };

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		json_object *o = (json_object *)1;
		struct err e = { .msg = "" };
		int rc = json_parse_object(bodies[i], strlen(bodies[i]), &o, &e);

		if (rc == 0)
			json_object_put(o);
		assert_int_equal(rc, ERR_INVALID);
		assert_null(o);
		assert_true(strncmp(e.msg, "body ", 5) == 0);
	}
}

static void test_parse_trailing(void **state)
{
	/* json-c itself reports what follows the object */
	parse_fails("{}x", 3, NULL);
	parse_fails("{} {}", 5, NULL);
	parse_fails("{}\n,", 4, NULL);
	parse_fails("{\"a\":1}\n{\"b\":2}", 15, NULL);
	parse_ok("{} \n\t\r", 6, 0);
}

static void test_parse_strict_json(void **state)
{
	/* JSON_TOKENER_STRICT is set: these are not JSON (RFC 8259) and must be refused */
	static const char *bodies[] = {
		"{'a':1}", "{\"a\":'x'}", "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":-Infinity}",
	};

	char accepted[256] = "";
	size_t l = 0;

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		json_object *o = NULL;
		struct err e = { .msg = "" };

		if (json_parse_object(bodies[i], strlen(bodies[i]), &o, &e) != ERR_INVALID) {
			json_object_put(o);
			l += (size_t)snprintf(accepted + l, sizeof(accepted) - l, " %s", bodies[i]);
		}
	}
	if (l)
		fail_msg("accepted as JSON:%s", accepted);
}

static void test_parse_nul(void **state)
{
	const char *msg = "body is not valid JSON: it contains a NUL byte";

	parse_fails("{\"a\":1}\0", 8, msg);
	parse_fails("{\"a\":\"x\0y\"}", 11, msg);
	parse_fails("\0{}", 3, msg);
	parse_fails(" \0{}", 4, msg);
}

static void test_parse_nul_only(void **state)
{
	const char *msg = "body is not valid JSON: it contains a NUL byte";

	/* a body of only NULs (or whitespace and NULs) is not an empty body */
	parse_fails("\0", 1, msg);
	parse_fails(" \0 ", 3, msg);
	parse_fails("\0\0\0\0", 4, msg);
}

static void nested(char *buf, size_t size, int depth)
{
	/* an object holding depth - 1 nested arrays: depth levels in all */
	size_t o = 0;

	o += (size_t)snprintf(buf + o, size - o, "{\"a\":");
	for (int i = 1; i < depth; i++)
		buf[o++] = '[';
	for (int i = 1; i < depth; i++)
		buf[o++] = ']';
	buf[o++] = '}';
	buf[o] = 0;
}

static void test_parse_depth(void **state)
{
	char body[256];

	nested(body, sizeof(body), JSON_MAX_DEPTH);
	parse_ok(body, strlen(body), 1);
	nested(body, sizeof(body), JSON_MAX_DEPTH + 1);
	parse_fails(body, strlen(body), "body is not valid JSON: nesting too deep");
	nested(body, sizeof(body), 100);
	parse_fails(body, strlen(body), "body is not valid JSON: nesting too deep");
}

static void test_parse_deep_objects(void **state)
{
	char body[512];
	size_t o = 0;

	for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
		o += (size_t)snprintf(body + o, sizeof(body) - o, "{\"a\":");
	body[o++] = '1';
	for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
		body[o++] = '}';
	body[o] = 0;
	parse_fails(body, o, "body is not valid JSON: nesting too deep");
}

/* --- fields --- */

static void test_string(void **state)
{
	json_object *o = obj("{\"name\":\"octo\",\"n\":null,\"num\":5,\"b\":true,\"arr\":[],"
			     "\"obj\":{},\"empty\":\"\",\"nul\":\"a\\u0000b\"}");
	const char *s = NULL;
	struct err e = { .msg = "" };

	assert_int_equal(json_field_string(o, "name", 1, 100, &s, &e), 0);
	assert_string_equal(s, "octo");
	assert_int_equal(json_field_string(o, "empty", 1, 100, &s, &e), 0);
	assert_string_equal(s, "");

	/* absent / null */
	s = "unchanged";
	assert_int_equal(json_field_string(o, "missing", 0, 100, &s, &e), 1);
	assert_string_equal(s, "unchanged");
	assert_int_equal(json_field_string(o, "n", 0, 100, &s, &e), 1);
	assert_string_equal(s, "unchanged");
	assert_int_equal(json_field_string(o, "missing", 1, 100, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'missing' is required");
	assert_int_equal(json_field_string(o, "n", 1, 100, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'n' is required");

	/* wrong types */
	static const char *wrong[] = { "num", "b", "arr", "obj" };
	for (size_t i = 0; i < 4; i++) {
		char want[64];
		assert_int_equal(json_field_string(o, wrong[i], 0, 100, &s, &e), ERR_INVALID);
		snprintf(want, sizeof(want), "field '%s' must be a string", wrong[i]);
		assert_string_equal(e.msg, want);
	}

	/* length bound: 4 fits 4, not 3 */
	assert_int_equal(json_field_string(o, "name", 1, 4, &s, &e), 0);
	assert_int_equal(json_field_string(o, "name", 1, 3, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'name' must be at most 3 bytes");

	/* an escaped NUL cannot sneak into a C string */
	assert_int_equal(json_field_string(o, "nul", 1, 100, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'nul' must not contain NUL characters");
	json_object_put(o);
}

static void test_string_name_message(void **state)
{
	json_object *o = obj("{\"name\":1}");
	const char *s;
	struct err e = { .msg = "" };

	assert_int_equal(json_field_string(o, "name", 1, 10, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'name' must be a string");
	json_object_put(o);
	o = obj("{}");
	assert_int_equal(json_field_string(o, "name", 1, 10, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'name' is required");
	/* a NULL err is allowed */
	assert_int_equal(json_field_string(o, "name", 1, 10, &s, NULL), ERR_INVALID);
	json_object_put(o);
}

static void test_bool(void **state)
{
	json_object *o = obj("{\"t\":true,\"f\":false,\"n\":null,\"s\":\"true\",\"i\":1,\"z\":0}");
	int v = 42;
	struct err e = { .msg = "" };

	assert_int_equal(json_field_bool(o, "t", 1, &v, &e), 0);
	assert_int_equal(v, 1);
	assert_int_equal(json_field_bool(o, "f", 1, &v, &e), 0);
	assert_int_equal(v, 0);
	v = 42;
	assert_int_equal(json_field_bool(o, "missing", 0, &v, &e), 1);
	assert_int_equal(json_field_bool(o, "n", 0, &v, &e), 1);
	assert_int_equal(v, 42);
	assert_int_equal(json_field_bool(o, "missing", 1, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'missing' is required");
	assert_int_equal(json_field_bool(o, "n", 1, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'n' is required");
	assert_int_equal(json_field_bool(o, "s", 1, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 's' must be a boolean");
	assert_int_equal(json_field_bool(o, "i", 1, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'i' must be a boolean");
	assert_int_equal(json_field_bool(o, "z", 0, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'z' must be a boolean");
	assert_int_equal(v, 42);
	json_object_put(o);
}

static void test_int(void **state)
{
	json_object *o = obj("{\"one\":1,\"five\":5,\"zero\":0,\"six\":6,\"neg\":-3,\"n\":null,"
			     "\"f\":1.5,\"f1\":1.0,\"e\":1e2,\"s\":\"3\",\"b\":true}");
	int64_t v = 42;
	struct err e = { .msg = "" };

	assert_int_equal(json_field_int(o, "one", 1, 1, 5, &v, &e), 0);
	assert_int_equal(v, 1);
	assert_int_equal(json_field_int(o, "five", 1, 1, 5, &v, &e), 0);
	assert_int_equal(v, 5);
	assert_int_equal(json_field_int(o, "neg", 1, -3, 0, &v, &e), 0);
	assert_int_equal(v, -3);

	v = 42;
	assert_int_equal(json_field_int(o, "zero", 1, 1, 5, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'zero' must be an integer between 1 and 5");
	assert_int_equal(json_field_int(o, "six", 1, 1, 5, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'six' must be an integer between 1 and 5");
	assert_int_equal(json_field_int(o, "neg", 1, -2, 5, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'neg' must be an integer between -2 and 5");
	assert_int_equal(v, 42);

	assert_int_equal(json_field_int(o, "missing", 0, 1, 5, &v, &e), 1);
	assert_int_equal(json_field_int(o, "n", 0, 1, 5, &v, &e), 1);
	assert_int_equal(json_field_int(o, "missing", 1, 1, 5, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'missing' is required");
	assert_int_equal(json_field_int(o, "n", 1, 1, 5, &v, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'n' is required");

	static const char *wrong[] = { "f", "f1", "e", "s", "b" };
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		char want[64];
		assert_int_equal(json_field_int(o, wrong[i], 1, 0, 100, &v, &e), ERR_INVALID);
		snprintf(want, sizeof(want), "field '%s' must be an integer", wrong[i]);
		assert_string_equal(e.msg, want);
	}
	assert_int_equal(v, 42);
	json_object_put(o);
}

static void test_int_huge(void **state)
{
	/* json-c clamps what does not fit in 64 bits; none of it may come through as a bound */
	static const char *nums[] = {
		"9223372036854775808", "18446744073709551615", "99999999999999999999",
		"-9223372036854775809", "-99999999999999999999",
		"999999999999999999999999999999999999999999",
	};
	const int64_t max = INT64_C(1) << 40;

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		char body[96], want[128];
		json_object *o;
		int64_t v = 42;
		struct err e = { .msg = "" };

		snprintf(body, sizeof(body), "{\"x\":%s}", nums[i]);
		o = obj(body);
		assert_int_equal(json_field_int(o, "x", 1, -max, max, &v, &e), ERR_INVALID);
		snprintf(want, sizeof(want), "field 'x' must be an integer between %lld and %lld",
			 (long long)-max, (long long)max);
		assert_string_equal(e.msg, want);
		assert_int_equal(v, 42);
		/* even when the bounds are the widest there are */
		assert_int_equal(json_field_int(o, "x", 1, INT64_MIN, INT64_MAX, &v, &e),
				 ERR_INVALID);
		assert_int_equal(v, 42);
		json_object_put(o);
	}
}

static void test_int_largest(void **state)
{
	json_object *o = obj("{\"x\":9223372036854775806,\"y\":-9223372036854775807}");
	int64_t v;
	struct err e = { .msg = "" };

	assert_int_equal(json_field_int(o, "x", 1, 0, INT64_MAX - 1, &v, &e), 0);
	assert_true(v == INT64_MAX - 1);
	assert_int_equal(json_field_int(o, "y", 1, INT64_MIN + 1, 0, &v, &e), 0);
	assert_true(v == INT64_MIN + 1);
	json_object_put(o);
}

static void test_enum(void **state)
{
	static const char *const vis[] = { "public", "private", NULL };
	static const char *const three[] = { "a", "b", "c", NULL };
	static const char *const one[] = { "only", NULL };
	json_object *o = obj("{\"visibility\":\"public\",\"v2\":\"private\",\"bad\":\"Public\","
			     "\"num\":1,\"n\":null,\"x\":\"d\",\"empty\":\"\"}");
	const char *s = NULL;
	struct err e = { .msg = "" };

	assert_int_equal(json_field_enum(o, "visibility", 1, vis, &s, &e), 0);
	assert_string_equal(s, "public");
	assert_ptr_equal(s, vis[0]);     /* the caller gets the choice itself */
	assert_int_equal(json_field_enum(o, "v2", 1, vis, &s, &e), 0);
	assert_ptr_equal(s, vis[1]);

	assert_int_equal(json_field_enum(o, "bad", 1, vis, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'bad' must be 'public' or 'private'");
	assert_int_equal(json_field_enum(o, "empty", 1, vis, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'empty' must be 'public' or 'private'");
	assert_int_equal(json_field_enum(o, "x", 1, three, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'x' must be 'a', 'b' or 'c'");
	assert_int_equal(json_field_enum(o, "x", 1, one, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'x' must be 'only'");

	assert_int_equal(json_field_enum(o, "num", 1, vis, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'num' must be a string");
	s = "unchanged";
	assert_int_equal(json_field_enum(o, "missing", 0, vis, &s, &e), 1);
	assert_int_equal(json_field_enum(o, "n", 0, vis, &s, &e), 1);
	assert_string_equal(s, "unchanged");
	assert_int_equal(json_field_enum(o, "missing", 1, vis, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'missing' is required");
	json_object_put(o);
}

static void test_enum_visibility_message(void **state)
{
	static const char *const vis[] = { "public", "private", NULL };
	json_object *o = obj("{\"visibility\":\"internal\"}");
	const char *s;
	struct err e = { .msg = "" };

	assert_int_equal(json_field_enum(o, "visibility", 1, vis, &s, &e), ERR_INVALID);
	assert_string_equal(e.msg, "field 'visibility' must be 'public' or 'private'");
	json_object_put(o);
}

static void test_enum_many_choices_bounded(void **state)
{
	/* a choice list longer than the message: no overflow, still a message */
	static const char *const many[] = {
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		"ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
		"ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
		"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
		NULL,
	};
	json_object *o = obj("{\"x\":\"z\"}");
	const char *s;
	struct err e = { .msg = "" };

	assert_int_equal(json_field_enum(o, "x", 1, many, &s, &e), ERR_INVALID);
	assert_true(strncmp(e.msg, "field 'x' must be 'aaaa", 23) == 0);
	assert_true(strlen(e.msg) < sizeof(e.msg));
	json_object_put(o);
}

static void test_builders(void **state)
{
	json_object *o = json_object_new_object();

	json_add_str(o, "s", "v");
	json_add_str(o, "null", NULL);
	json_add_bool(o, "t", 1);
	json_add_bool(o, "f", 0);
	json_add_int(o, "i", INT64_C(-9007199254740993));
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"s\":\"v\",\"null\":null,\"t\":true,\"f\":false,"
			    "\"i\":-9007199254740993}");
	json_object_put(o);
}

/* json-c itself, as json_parse_object used it before the fast path: strict, depth 32. */
static json_object *json_c_parse(const char *body, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	json_object *o;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, body, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* Whatever json_parse_object accepts, json-c accepts too, as the same objects. */
static void agrees(const char *body, size_t len)
{
	json_object *ours = NULL, *theirs = json_c_parse(body, len);
	struct err e = { .msg = "" };

	if (json_parse_object(body, len, &ours, &e) == 0) {
		if (!theirs)
			fail_msg("accepted what json-c refuses: '%.*s'", (int)len, body);
		if (!json_object_equal(ours, theirs) ||
		    strcmp(json_object_to_json_string_ext(ours, JSON_C_TO_STRING_PLAIN),
			   json_object_to_json_string_ext(theirs, JSON_C_TO_STRING_PLAIN)))
			fail_msg("parsed differently: '%.*s'", (int)len, body);
	}
	json_object_put(ours);
	json_object_put(theirs);
}

static void test_fast_path_agrees(void **state)
{
	static const char *bodies[] = {
		"{}", " { } ", "{\"a\":1}", "{\"a\":-0}", "{\"a\":-12}", "{\"a\":012}", "{\"a\":1.5}",
		"{\"a\":1e3}", "{\"a\":123456789012345678}", "{\"a\":1234567890123456789}",
		"{\"a\":99999999999999999999}", "{\"a\":-9223372036854775808}", "{\"a\":-}",
		"{\"a\":\"\"}", "{\"\":\"\"}", "{\"a\":\"x\\\"y\\\\z\\/w\\b\\f\\n\\r\\t\"}",
		"{\"a\":\"\\u0041\"}", "{\"a\":\"\\u0000\"}", "{\"a\":\"\\ud83d\\ude00\"}",
		"{\"a\":\"\\ud83d\"}", "{\"a\":\"\\x\"}", "{\"a\":\"caf\xc3\xa9\"}", "{\"a\":\"\xff\"}",
		"{\"a\":\"tab\there\"}", "{\"a\":\"nl\nhere\"}", "{\"a\":true,\"b\":false,\"c\":null}",
		"{\"a\":tru}", "{\"a\":nul}", "{\"a\":True}", "{\"a\":[]}", "{\"a\":[1,[2,[3]],{}]}",
		"{\"a\":[1,]}", "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{\"a\":1,\"a\":2}", "{\"a\"}",
		"{\"a\":}", "{a:1}", "{'a':1}", "{\"a\":'x'}", "{\"a\":NaN}", "{\"a\":Infinity}",
		"{\"a\":1}x", "{\"a\":1} ", "{\"a\":1}\f", "\t{\"a\"\r:\n1}", "{\"a\":\"\\", "{\"a\":\"",
		"{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", "{\"a\":{\"b\":{\"c\":{}}}}",
		"{\"k\\u00e9\":1}", "{\"k\\n\":1}", "{\"a\":\"\\u00e9\"}", "{\"a\":-0.0}", "{\"a\":+1}",
		"{\"a\":0}", "{\"a\":00}", "{\"a\":1E5}", "{\"a\":[1 2]}", "{\"a\":[,1]}",
	};

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		agrees(bodies[i], strlen(bodies[i]));
}

/* Random soups of JSON tokens: whatever the fast path takes, json-c takes the same way. */
static void test_fast_path_agrees_random(void **state)
{
	static const char *tokens[] = {
		"{", "}", "[", "]", ",", ":", " ", "\"a\"", "\"b\"", "\"\\n\"", "\"\\u0041\"", "1",
		"-2", "0", "01", "1.5", "true", "false", "null", "\"x\\\"\"", "\"\\\\\"", "\"\t\"",
		"\"\xc3\xa9\"", "\"", "\\", "e", "\n",
	};
	char body[256];
	unsigned seed = 12345;

	for (int round = 0; round < 200000; round++) {
		size_t n = 0;
		int k;

		body[n++] = '{';
		seed = seed * 1103515245 + 12345;
		k = (int)(seed >> 16) % 12;
		for (int j = 0; j < k; j++) {
			seed = seed * 1103515245 + 12345;
			const char *t = tokens[(seed >> 16) % (sizeof(tokens) / sizeof(tokens[0]))];
			size_t tl = strlen(t);

			if (n + tl + 2 >= sizeof(body))
				break;
			memcpy(body + n, t, tl);
			n += tl;
		}
		body[n++] = '}';
		agrees(body, n);
	}
	/* Shaped like real bodies, so that many are accepted. */
	const char *real = "{\"path\":\"a/b\",\"content\":\"QUJD\",\"mode\":493}";
	agrees(real, strlen(real));
}

static void test_fast_path_long_string(void **state)
{
	size_t n = 3 << 20;
	char *body = malloc(n + 64);
	json_object *o = NULL;
	struct err e = { .msg = "" };
	const char *s;

	assert_non_null(body);
	memcpy(body, "{\"content\":\"", 12);
	for (size_t i = 0; i < n; i++)
		body[12 + i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i % 64];
	memcpy(body + 12 + n, "\",\"path\":\"f\"}", 13);
	assert_int_equal(json_parse_object(body, n + 25, &o, &e), 0);
	assert_int_equal(json_field_string(o, "content", 1, n, &s, &e), 0);
	assert_int_equal(strlen(s), n);
	assert_memory_equal(s, body + 12, n);
	agrees(body, n + 25);
	/* an escape far into it */
	body[12 + n - 5] = '\\';
	body[12 + n - 4] = '/';
	agrees(body, n + 25);
	json_object_put(o);
	free(body);
}

static void writes_like_json_c(json_object *o)
{
	struct buf b;
	const char *want = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);

	buf_init(&b, 1 << 24);
	assert_int_equal(json_write(&b, o), 0);
	assert_int_equal(b.len, strlen(want));
	assert_memory_equal(b.data, want, b.len);
	buf_release(&b);
}

static void test_write_like_json_c(void **state)
{
	char all[256];
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	json_object *parsed;

	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	json_object_object_add(o, "all", json_object_new_string_len(all, 256));
	json_object_object_add(o, "k\"\\/\x01\n\x7f\xc3\xa9", json_object_new_string("v/"));
	json_object_object_add(o, "null", NULL);
	json_object_object_add(o, "t", json_object_new_boolean(1));
	json_object_object_add(o, "f", json_object_new_boolean(0));
	json_object_object_add(o, "i", json_object_new_int64(INT64_MIN));
	json_object_object_add(o, "u", json_object_new_uint64(UINT64_MAX));
	json_object_object_add(o, "d", json_object_new_double(0.1));
	json_object_object_add(o, "e", json_object_new_object());
	json_object_object_add(o, "ea", json_object_new_array());
	json_object_array_add(a, json_object_new_int(1));
	json_object_array_add(a, NULL);
	json_object_array_add(a, json_object_new_string(""));
	json_object_array_add(a, json_object_new_array());
	json_object_object_add(o, "a", a);
	writes_like_json_c(o);
	json_object_put(o);
	writes_like_json_c(NULL);
	parsed = json_tokener_parse("{\"d\":1.50,\"e\":1e2,\"n\":-0.0,\"x\":[1.0,{\"y\":\"\\u0000\"}]}");
	writes_like_json_c(parsed);
	json_object_put(parsed);

	/* a long string of every kind of byte */
	size_t n = 1 << 20;
	char *big = malloc(n);
	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)(i * 7 % 251 < 40 ? i % 32 : 'a' + i % 26);
	o = json_object_new_object();
	json_object_object_add(o, "s", json_object_new_string_len(big, (int)n));
	writes_like_json_c(o);
	json_object_put(o);
	memset(big, 0, n);
	o = json_object_new_string_len(big, (int)n);
	writes_like_json_c(o);
	json_object_put(o);
	free(big);
}

static void test_write_bounded(void **state)
{
	struct buf b;
	json_object *o = json_object_new_string("0123456789");

	buf_init(&b, 8);
	assert_int_equal(json_write(&b, o), ERR_TOOBIG);
	buf_release(&b);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_empty_is_object),
		cmocka_unit_test(test_parse_objects),
		cmocka_unit_test(test_parse_not_an_object),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_parse_garbage),
		cmocka_unit_test(test_parse_trailing),
		cmocka_unit_test(test_parse_nul),
		cmocka_unit_test(test_parse_depth),
		cmocka_unit_test(test_parse_deep_objects),
		cmocka_unit_test(test_string),
		cmocka_unit_test(test_string_name_message),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_int_huge),
		cmocka_unit_test(test_int_largest),
		cmocka_unit_test(test_enum),
		cmocka_unit_test(test_enum_visibility_message),
		cmocka_unit_test(test_enum_many_choices_bounded),
		cmocka_unit_test(test_builders),
		cmocka_unit_test(test_parse_scalar_is_not_an_object),
		cmocka_unit_test(test_parse_strict_json),
		cmocka_unit_test(test_parse_nul_only),
		cmocka_unit_test(test_fast_path_agrees),
		cmocka_unit_test(test_fast_path_agrees_random),
		cmocka_unit_test(test_fast_path_long_string),
		cmocka_unit_test(test_write_like_json_c),
		cmocka_unit_test(test_write_bounded),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
