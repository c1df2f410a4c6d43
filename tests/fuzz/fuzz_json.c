/* fuzz_json.c: json_parse_object on a request body, then every typed getter on the fields the
 * routes read (and on one the fuzzer names: the first member's key). Invariants: success
 * gives an object and failure none, with a message; a getter returns 0, 1 (absent and
 * optional) or ERR_INVALID with a message, and what it returns is within its bounds. */
#include <json-c/json.h>
#include "fuzz.h"
#include "sandboxd/err.h"
#include "sandboxd/json.h"
#include "sandboxd/banned.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = fuzz_dup(data, size);
	json_object *o = (json_object *)1;
	struct err e;
	int rc;

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
