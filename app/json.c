/* json.c: typed access to request bodies, with messages that name the field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/json.h"
#include "sandboxd/banned.h"

/* json-c accepts a few things JSON does not, even in strict mode: single-quoted strings
 * and the literals NaN and Infinity. Strings aside, a quote or an N/I can only come from
 * those, so one pass over the bytes outside strings finds them. */
static int lenient(const char *body, size_t len, json_object *o)
{
	int in_string = 0;

	(void)o;
	for (size_t i = 0; i < len; i++) {
		char c = body[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = 0;
		} else if (c == '"') {
			in_string = 1;
		} else if (c == '\'' || c == 'N' || c == 'I') {
			return 1;
		}
	}
	return 0;
}

int json_parse_object(const char *body, size_t len, json_object **out, struct err *e)
{
	struct json_tokener *tok;
	json_object *o;
	enum json_tokener_error jerr;
	size_t i;

	*out = NULL;
	for (i = 0; i < len && body[i] && strchr(" \t\r\n", body[i]); i++)
		;
	if (i == len) {
		*out = json_object_new_object();
		return *out ? 0 : ERR_NOMEM;
	}
	/* Anything but an object: say whether it was JSON at all. json-c cannot tell that a
	 * bare number at the end of input is complete, so that case parses as a string. */
	if (body[i] != '{' && body[i] != 0) {
		char *copy = strndup(body, len);
		enum json_tokener_error verr = json_tokener_error_parse_unexpected;
		json_object *v = copy && !memchr(body, 0, len) ? json_tokener_parse_verbose(copy, &verr)
							       : NULL;
		int is_json = verr == json_tokener_success; /* "null" parses to NULL */
		json_object_put(v);
		free(copy);
		if (is_json && !lenient(body, len, NULL))
			return err_set(e, ERR_INVALID, "body must be a JSON object");
		return err_set(e, ERR_INVALID, "body is not valid JSON: %s",
			       body[i] == '[' || body[i] == '"' ? "unexpected end of data"
								 : "unexpected character");
	}
	if (len > (size_t)INT32_MAX)
		return err_set(e, ERR_TOOBIG, "request body is too large");
	if (memchr(body, 0, len))
		return err_set(e, ERR_INVALID, "body is not valid JSON: it contains a NUL byte");
	tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	if (!tok)
		return ERR_NOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, body, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o && jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	if (jerr != json_tokener_success) {
		err_set(e, ERR_INVALID, "body is not valid JSON: %s", json_tokener_error_desc(jerr));
		json_object_put(o);
		json_tokener_free(tok);
		return ERR_INVALID;
	}
	/* Only whitespace may follow the value. */
	for (i = json_tokener_get_parse_end(tok); i < len; i++)
		if (!body[i] || !strchr(" \t\r\n", body[i])) {
			json_object_put(o);
			json_tokener_free(tok);
			return err_set(e, ERR_INVALID, "body is not valid JSON: trailing characters");
		}
	json_tokener_free(tok);
	if (lenient(body, len, o)) {
		json_object_put(o);
		return err_set(e, ERR_INVALID,
			       "body is not valid JSON: single quotes, NaN and Infinity are not JSON");
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return err_set(e, ERR_INVALID, "body must be a JSON object");
	}
	*out = o;
	return 0;
}

/* 0 and *v when present and not null, 1 when absent and optional, ERR_INVALID otherwise. */
static int field(json_object *o, const char *name, int required, json_object **v, struct err *e)
{
	if (!json_object_object_get_ex(o, name, v) || json_object_is_type(*v, json_type_null)) {
		if (required)
			return err_set(e, ERR_INVALID, "field '%s' is required", name);
		return 1;
	}
	return 0;
}

int json_field_string(json_object *o, const char *name, int required, size_t maxlen,
		      const char **out, struct err *e)
{
	json_object *v;
	int rc = field(o, name, required, &v, e);

	if (rc)
		return rc;
	if (!json_object_is_type(v, json_type_string))
		return err_set(e, ERR_INVALID, "field '%s' must be a string", name);
	if ((size_t)json_object_get_string_len(v) > maxlen)
		return err_set(e, ERR_INVALID, "field '%s' must be at most %zu bytes", name,
			       maxlen);
	*out = json_object_get_string(v);
	if (strlen(*out) != (size_t)json_object_get_string_len(v))
		return err_set(e, ERR_INVALID, "field '%s' must not contain NUL characters", name);
	return 0;
}

int json_field_bool(json_object *o, const char *name, int required, int *out, struct err *e)
{
	json_object *v;
	int rc = field(o, name, required, &v, e);

	if (rc)
		return rc;
	if (!json_object_is_type(v, json_type_boolean))
		return err_set(e, ERR_INVALID, "field '%s' must be a boolean", name);
	*out = json_object_get_boolean(v);
	return 0;
}

int json_field_int(json_object *o, const char *name, int required, int64_t min, int64_t max,
		   int64_t *out, struct err *e)
{
	json_object *v;
	int64_t n;
	int rc = field(o, name, required, &v, e);

	if (rc)
		return rc;
	if (!json_object_is_type(v, json_type_int))
		return err_set(e, ERR_INVALID, "field '%s' must be an integer", name);
	n = json_object_get_int64(v);
	/* json-c clamps out-of-range numbers to INT64_MIN/MAX: those are out of range here. */
	if (n < min || n > max || n == INT64_MAX || n == INT64_MIN)
		return err_set(e, ERR_INVALID, "field '%s' must be an integer between %lld and %lld",
			       name, (long long)min, (long long)max);
	*out = n;
	return 0;
}

int json_field_enum(json_object *o, const char *name, int required, const char *const *choices,
		    const char **out, struct err *e)
{
	const char *s;
	char list[256] = "";
	size_t l = 0;
	int rc = json_field_string(o, name, required, 64, &s, e);

	if (rc)
		return rc;
	for (int i = 0; choices[i]; i++)
		if (strcmp(s, choices[i]) == 0) {
			*out = choices[i];
			return 0;
		}
	for (int i = 0; choices[i] && l < sizeof(list); i++) {
		int w = snprintf(list + l, sizeof(list) - l, "%s'%s'",
				 i == 0 ? "" : choices[i + 1] ? ", " : " or ", choices[i]);
		if (w > 0)
			l += (size_t)w;
	}
	return err_set(e, ERR_INVALID, "field '%s' must be %s", name, list);
}

/* Adds v (NULL only for a JSON null) under key. */
static int add(json_object *o, const char *key, json_object *v, int is_null)
{
	if (!v && !is_null)
		return ERR_NOMEM;
	json_object_object_add(o, key, v);
	return 0;
}

int json_add_str(json_object *o, const char *key, const char *val)
{
	return add(o, key, val ? json_object_new_string(val) : NULL, !val);
}

int json_add_bool(json_object *o, const char *key, int val)
{
	return add(o, key, json_object_new_boolean(val), 0);
}

int json_add_int(json_object *o, const char *key, int64_t val)
{
	return add(o, key, json_object_new_int64(val), 0);
}
