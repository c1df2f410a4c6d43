/* fuzz_json.c: json_parse_object on a request body, then every typed getter on the fields the
 * routes read (and on one the fuzzer names: the first member's key). Invariants: success
 * gives an object and failure none, with a message; a getter returns 0, 1 (absent and
 * optional) or ERR_INVALID with a message, and what it returns is within its bounds.
 *
 * And differential: every body is parsed by json.c's fast path (json_parse_fast) and by
 * json-c as json_parse_object calls it. When the fast path takes a body, json-c must accept
 * it as the same tree (keys, types, strings byte for byte, numbers). When json-c accepts an
 * object the fast path gave up on, the body must hold one of the things the fast path leaves
 * to json-c on purpose (json.c): a double, a \u escape, a byte >= 0x80, a NUL, a control
 * character in a string, a leading zero, an integer of 19 digits or more, a duplicate key,
 * nesting deeper than 16. */
#include <json-c/json.h>
#include <json-c/json_tokener.h>
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"

static const char *const names[] = {
	"name", "login", "email", "note", "default_branch", "public_key", "visibility", "kind",
	"role", "scope", "archived", "disabled", "site_admin", "ttl", "expires_in", "",
};
static const char *const choices[] = { "public", "private", "internal", NULL };

static void getters(json_object *o, const char *name, int required)
{
	struct err e;
	const char *s = NULL;
	int64_t i = 0;
	int b = -1, rc;

	e.msg[0] = 0;
	rc = json_field_string(o, name, required, 64, &s, &e);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == ERR_INVALID);
	FUZZ_CHECK(rc != 1 || !required);
	if (rc == 0)
		FUZZ_CHECK(s && strlen(s) <= 64);
	else if (rc == ERR_INVALID)
		FUZZ_CHECK(e.msg[0] && (strlen(name) > 200 || strstr(e.msg, name)));
	rc = json_field_bool(o, name, required, &b, &e);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == ERR_INVALID);
	if (rc == 0)
		FUZZ_CHECK(b == 0 || b == 1);
	rc = json_field_int(o, name, required, 1, 3600000, &i, &e);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == ERR_INVALID);
	if (rc == 0)
		FUZZ_CHECK(i >= 1 && i <= 3600000);
	rc = json_field_int(o, name, required, INT64_MIN, INT64_MAX, &i, &e);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == ERR_INVALID);
	s = NULL;
	rc = json_field_enum(o, name, required, choices, &s, &e);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == ERR_INVALID);
	if (rc == 0)
		FUZZ_CHECK(s == choices[0] || s == choices[1] || s == choices[2]);
}

/* json-c as json_parse_object runs it after the fast path: strict, JSON_MAX_DEPTH, only
 * whitespace after the value. The value, or NULL when json-c refuses the body (*ok 0). */
static json_object *json_c(const char *body, size_t len, int *ok)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	json_object *o;

	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, body, (int)len);
	*ok = json_tokener_get_error(tok) == json_tokener_success;
	for (size_t i = json_tokener_get_parse_end(tok); *ok && i < len; i++)
		*ok = body[i] && strchr(" \t\r\n", body[i]);
	json_tokener_free(tok);
	if (!*ok) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/* The same tree: types, object members (json-c objects have unique keys), array items in
 * order, strings byte for byte, integers, booleans. */
static int same(json_object *a, json_object *b)
{
	json_type t = json_object_get_type(a);

	if (t != json_object_get_type(b))
		return 0;
	switch (t) {
	case json_type_null:
		return 1;
	case json_type_boolean:
		return json_object_get_boolean(a) == json_object_get_boolean(b);
	case json_type_int:
		return json_object_get_int64(a) == json_object_get_int64(b);
	case json_type_double:
		return json_object_get_double(a) == json_object_get_double(b);
	case json_type_string:
		return json_object_get_string_len(a) == json_object_get_string_len(b) &&
		       memcmp(json_object_get_string(a), json_object_get_string(b),
			      (size_t)json_object_get_string_len(a)) == 0;
	case json_type_array:
		if (json_object_array_length(a) != json_object_array_length(b))
			return 0;
		for (size_t i = 0; i < json_object_array_length(a); i++)
			if (!same(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
				return 0;
		return 1;
	case json_type_object:
		if (json_object_object_length(a) != json_object_object_length(b))
			return 0;
		json_object_object_foreach(a, key, va) {
			json_object *vb;
			if (!json_object_object_get_ex(b, key, &vb) || !same(va, vb))
				return 0;
		}
		return 1;
	}
	return 0;
}

/* What of json-c's tree the fast path leaves to json-c: a double, an integer of 19 digits or
 * more, nesting past 16 (the top object is 1). Also counts the members of all objects. */
static int tree_reason(json_object *o, int depth, size_t *members)
{
	int r = 0;

	switch (json_object_get_type(o)) {
	case json_type_double:
		return 1;
	case json_type_int: {
		int64_t v = json_object_get_int64(o);
		return v >= 1000000000000000000LL || v <= -1000000000000000000LL;
	}
	case json_type_array:
		if (depth > 16)
			return 1;
		for (size_t i = 0; i < json_object_array_length(o); i++)
			r |= tree_reason(json_object_array_get_idx(o, i), depth + 1, members);
		return r;
	case json_type_object:
		if (depth > 16)
			return 1;
		*members += (size_t)json_object_object_length(o);
		json_object_object_foreach(o, key, v) {
			(void)key;
			r |= tree_reason(v, depth + 1, members);
		}
		return r;
	default:
		return 0;
	}
}

/* What of the text the fast path leaves to json-c: a \u escape, a byte >= 0x80 or a NUL (in
 * a string or not), a control character in a string (JSON wants it escaped; json-c takes
 * it as it is, and so json_parse_object does, as it always has), a number with a leading
 * zero (not JSON either; json-c takes "00" and "-01", refuses "01"), a duplicate key (more
 * keys than json-c's tree has members). */
static int text_reason(const uint8_t *b, size_t n, size_t members)
{
	size_t keys = 0;
	int in_string = 0;

	for (size_t i = 0; i < n; i++) {
		if (b[i] >= 0x80 || b[i] == 0)
			return 1;
		if (in_string) {
			if (b[i] < 0x20)
				return 1;
			if (b[i] == '\\' && i + 1 < n && b[i + 1] == 'u')
				return 1;
			if (b[i] == '\\')
				i++;
			else if (b[i] == '"')
				in_string = 0;
		} else if (b[i] == '"') {
			in_string = 1;
		} else if (b[i] == ':') {
			keys++;
		} else if (b[i] == '0' && i + 1 < n && b[i + 1] >= '0' && b[i + 1] <= '9' &&
			   (i == 0 || b[i - 1] < '0' || b[i - 1] > '9')) {
			return 1;
		}
	}
	return keys > members;
}

static void differential(const uint8_t *data, size_t size)
{
	char *body = fuzz_dup(data, size);
	json_object *fast = json_parse_fast(body, size), *slow;
	size_t members = 0;
	int ok;

	slow = json_c(body, size, &ok);
	if (fast) {
		FUZZ_CHECK(json_object_is_type(fast, json_type_object));
		FUZZ_CHECK(ok && same(fast, slow));
	} else if (ok && json_object_is_type(slow, json_type_object)) {
		int tree = tree_reason(slow, 1, &members);
		FUZZ_CHECK(tree || text_reason(data, size, members));
	}
	json_object_put(fast);
	json_object_put(slow);
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = fuzz_dup(data, size);
	json_object *o = (json_object *)1;
	struct err e;
	int rc;

	differential(data, size);
	e.msg[0] = 0;
	rc = json_parse_object(body, size, &o, &e);
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID || rc == ERR_TOOBIG);
		FUZZ_CHECK(o == NULL && e.msg[0]);
		free(body);
		return 0;
	}
	FUZZ_CHECK(o && json_object_is_type(o, json_type_object));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		getters(o, names[i], (int)(i & 1));
	json_object_object_foreach(o, key, val) {
		(void)val;
		getters(o, key, 1);
		getters(o, key, 0);
		break;
	}
	json_object_put(o);
	free(body);
	return 0;
}
