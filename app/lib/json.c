/* json.c: typed access to request bodies, with messages that name the field. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

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

/* ---- the fast path: bodies of plain JSON ----
 * json-c walks a string byte by byte and grows its buffer by doubling: 40 ms for the 14 MB
 * body of a 10 MiB file write. This parser takes the plain cases (objects, arrays, strings
 * of ASCII with the simple escapes, small integers, literals, shallow nesting) and builds
 * the same objects; anything else (a double, a \u escape, a byte >= 0x80, a duplicate key,
 * deep nesting, any error) makes it give up, and json-c parses the body as before, with
 * its own messages. So it accepts a subset of what json-c accepts, and agrees on it: the
 * differential fuzzer (tests/fuzz/fuzz_json.c) holds it to both halves of that sentence.
 * What json-c takes in strict mode though JSON does not, besides what lenient() refuses,
 * still passes through json-c as it always has: a raw control character in a string, and
 * some leading zeros ("00", "-01"; "01" it refuses). */

#define FAST_MAX_DEPTH 16

/* The bytes a string cannot hold as they are: '"', '\\' and controls; when high, also
 * bytes >= 0x80. */
static const unsigned char special[256] = {
	['"'] = 1, ['\\'] = 1,
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
	[0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
	[0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1,
};

/* The length of the run at p[0..n) without a special byte (16 bytes a step with SSE2). */
static size_t plain_run(const unsigned char *p, size_t n, int high)
{
	size_t i = 0;

#if defined(__SSE2__)
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
		      ctl = _mm_set1_epi8(0x1f);

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
					 _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v));
		unsigned mask = (unsigned)_mm_movemask_epi8(m) | (high ? (unsigned)_mm_movemask_epi8(v) : 0);

		if (mask)
			return i + (size_t)__builtin_ctz(mask);
	}
#endif
	for (; i < n && !special[p[i]] && !(high && p[i] >= 0x80); i++)
		;
	return i;
}

struct fast {
	const unsigned char *p, *end;
	int depth;
};

static void fast_ws(struct fast *f)
{
	while (f->p < f->end && (*f->p == ' ' || *f->p == '\t' || *f->p == '\n' || *f->p == '\r'))
		f->p++;
}

/* A string at f->p (just past its opening quote): *out and *outlen. Without escapes *out
 * points into the body and *owned is NULL; with them, *out is *owned, malloc'd and
 * NUL-terminated (the caller frees it). 0, or -1 to give up. */
static int fast_string(struct fast *f, const char **out, size_t *outlen, char **owned)
{
	size_t run = plain_run(f->p, (size_t)(f->end - f->p), 1), n = 0;
	char *s;

	*owned = NULL;
	if (f->p + run < f->end && f->p[run] == '"') {
		*out = (const char *)f->p;
		*outlen = run;
		f->p += run + 1;
		return 0;
	}
	/* Escapes: the text only shrinks. */
	if (!(s = malloc((size_t)(f->end - f->p) + 1)))
		return -1;
	for (;;) {
		run = plain_run(f->p, (size_t)(f->end - f->p), 1);
		memcpy(s + n, f->p, run);
		n += run;
		f->p += run;
		if (f->p >= f->end || *f->p != '\\' || f->p + 1 >= f->end)
			break;
		switch (f->p[1]) {
		case '"': s[n++] = '"'; break;
		case '\\': s[n++] = '\\'; break;
		case '/': s[n++] = '/'; break;
		case 'b': s[n++] = '\b'; break;
		case 'f': s[n++] = '\f'; break;
		case 'n': s[n++] = '\n'; break;
		case 'r': s[n++] = '\r'; break;
		case 't': s[n++] = '\t'; break;
		default: goto give_up;  /* \u and anything else: json-c's business */
		}
		f->p += 2;
	}
	if (f->p < f->end && *f->p == '"') {
		f->p++;
		s[n] = 0;
		*out = *owned = s;
		*outlen = n;
		return 0;
	}
give_up:
	free(s);
	return -1;
}

static json_object *fast_value(struct fast *f, int *ok);

/* Just past an opening '{' or '[': 1, and the closing byte consumed, when it is empty. */
static int fast_empty(struct fast *f, char close)
{
	fast_ws(f);
	if (f->p < f->end && *f->p == close) {
		f->p++;
		return 1;
	}
	return 0;
}

/* After a member or an item, the byte that follows is consumed: 1 for a ',' (another
 * follows), 0 for the closing byte, -1 (nothing consumed) for anything else. */
static int fast_next(struct fast *f, char close)
{
	fast_ws(f);
	if (f->p < f->end && (*f->p == ',' || *f->p == close))
		return *f->p++ == ',';
	return -1;
}

static json_object *fast_object(struct fast *f, int *ok)
{
	json_object *o = json_object_new_object(), *v;
	const char *k;
	char *key, *owned;
	size_t klen;
	int more;

	if (!o)
		goto fail;
	if (fast_empty(f, '}'))
		return o;
	for (;;) {
		fast_ws(f);
		if (f->p >= f->end || *f->p != '"')
			goto fail;
		f->p++;
		if (fast_string(f, &k, &klen, &owned))
			goto fail;
		key = owned ? owned : strndup(k, klen);
		if (!key)
			goto fail;
		fast_ws(f);
		if (f->p >= f->end || *f->p != ':' || json_object_object_get_ex(o, key, NULL)) {
			free(key);
			goto fail;
		}
		f->p++;
		fast_ws(f);
		v = fast_value(f, ok);
		if (!*ok || json_object_object_add(o, key, v)) {
			json_object_put(v);
			free(key);
			goto fail;
		}
		free(key);
		if ((more = fast_next(f, '}')) == 0)
			return o;
		if (more < 0)
			goto fail;
	}
fail:
	*ok = 0;
	json_object_put(o);
	return NULL;
}

static json_object *fast_array(struct fast *f, int *ok)
{
	json_object *a = json_object_new_array(), *v;
	int more;

	if (!a)
		goto fail;
	if (fast_empty(f, ']'))
		return a;
	for (;;) {
		fast_ws(f);
		v = fast_value(f, ok);
		if (!*ok || json_object_array_add(a, v)) {
			json_object_put(v);
			goto fail;
		}
		if ((more = fast_next(f, ']')) == 0)
			return a;
		if (more < 0)
			goto fail;
	}
fail:
	*ok = 0;
	json_object_put(a);
	return NULL;
}

static int literal(struct fast *f, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(f->end - f->p) < n || memcmp(f->p, word, n) != 0)
		return 0;
	f->p += n;
	return 1;
}

/* An integer: -?(0|[1-9][0-9]{0,17}), and not followed by what would make it a double. */
static json_object *fast_number(struct fast *f, int *ok)
{
	const unsigned char *q = f->p;
	int neg = *q == '-';
	int64_t n = 0;
	size_t digits = 0;
	json_object *v;

	q += neg;
	/* 18 digits always fit an int64_t; a 19th digit sends the body to json-c. */
	while (q < f->end && *q >= '0' && *q <= '9' && digits < 18) {
		n = n * 10 + (*q++ - '0');
		digits++;
	}
	if (digits == 0 || (digits > 1 && q[-(long)digits] == '0') ||
	    (q < f->end && (*q == '.' || *q == 'e' || *q == 'E' || (*q >= '0' && *q <= '9')))) {
		*ok = 0;
		return NULL;
	}
	f->p = q;
	if (!(v = json_object_new_int64(neg ? -n : n)))
		*ok = 0;
	return v;
}

/* A value; *ok is 1 on entry and 0 when the fast path gives up (the result is then NULL
 * and means nothing). A JSON null is NULL with *ok still 1. */
static json_object *fast_value(struct fast *f, int *ok)
{
	json_object *v = NULL;

	if (f->p >= f->end) {
		*ok = 0;
		return NULL;
	}
	switch (*f->p) {
	case '{':
	case '[':
		if (++f->depth > FAST_MAX_DEPTH) {
			*ok = 0;
			return NULL;
		}
		f->p++;
		v = f->p[-1] == '{' ? fast_object(f, ok) : fast_array(f, ok);
		f->depth--;
		return v;
	case '"': {
		const char *s;
		char *owned;
		size_t n;

		f->p++;
		if (fast_string(f, &s, &n, &owned)) {
			*ok = 0;
			return NULL;
		}
		v = json_object_new_string_len(s, (int)n);
		free(owned);
		if (!v)
			*ok = 0;
		return v;
	}
	case 't':
		if (literal(f, "true") && (v = json_object_new_boolean(1)))
			return v;
		break;
	case 'f':
		if (literal(f, "false") && (v = json_object_new_boolean(0)))
			return v;
		break;
	case 'n':
		if (literal(f, "null"))
			return NULL;
		break;
	default:
		return fast_number(f, ok);
	}
	*ok = 0;
	return NULL;
}

/* The whole body as one object, or NULL to let json-c do it (json.h). */
json_object *json_parse_fast(const char *body, size_t len)
{
	struct fast f = { (const unsigned char *)body, (const unsigned char *)body + len, 0 };
	json_object *o;
	int ok = 1;

	fast_ws(&f);
	if (f.p >= f.end || *f.p != '{')
		return NULL;
	o = fast_value(&f, &ok);
	if (!ok)
		return NULL;
	fast_ws(&f);
	if (f.p != f.end) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* json-c keeps object keys as C strings, so "A\u0000B" would silently become "A": find a
 * key holding an escaped NUL, and name the top-level field it is in. One pass, run only when
 * the body holds "\u0000" at all. */
static int key_with_nul(const char *b, size_t n, struct err *e)
{
	size_t depth = 0, top = 0, topn = 0;
	int nul = 0;

	for (size_t i = 0; i < n; i++) {
		if (b[i] == '{' || b[i] == '[') {
			depth++;
		} else if (b[i] == '}' || b[i] == ']') {
			depth -= depth > 0;
		} else if (b[i] == '"') {
			size_t start = ++i;
			for (nul = 0; i < n && b[i] != '"'; i++)
				if (b[i] == '\\' && i + 1 < n) {
					nul |= n - i >= 6 && memcmp(b + i, "\\u0000", 6) == 0;
					i++;
				}
			size_t j = i + 1;
			while (j < n && strchr(" \t\r\n", b[j]) && b[j])
				j++;
			if (j >= n || b[j] != ':')
				continue;
			if (depth == 1) {
				top = start;
				topn = i - start;
			}
			if (nul && depth <= 1)
				return err_set(e, ERR_INVALID, "a field name contains a NUL character");
			if (nul)
				return err_set(e, ERR_INVALID, "field '%.*s' has a name inside it that "
					       "contains a NUL character", (int)(topn < 64 ? topn : 64),
					       b + top);
		}
	}
	return 0;
}

/* A body whose first byte past the whitespace, body[i], is not '{': say whether it was
 * JSON at all. json-c cannot tell that a bare number at the end of input is complete, so
 * that case parses as a string. Always ERR_INVALID. */
static int not_an_object(const char *body, size_t len, size_t i, struct err *e)
{
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

/* json-c over a body the fast path gave up on: strict, bounded in depth, only whitespace
 * after the value, none of what lenient() finds, and an object. */
static int parse_json_c(const char *body, size_t len, json_object **out, struct err *e)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	enum json_tokener_error jerr;
	json_object *o = NULL;
	int rc = ERR_INVALID;

	if (!tok)
		return ERR_NOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, body, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o && jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	if (jerr != json_tokener_success) {
		err_set(e, rc, "body is not valid JSON: %s", json_tokener_error_desc(jerr));
		goto out;
	}
	/* Only whitespace may follow the value. */
	for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
		if (!body[i] || !strchr(" \t\r\n", body[i])) {
			err_set(e, rc, "body is not valid JSON: trailing characters");
			goto out;
		}
	if (lenient(body, len, o)) {
		err_set(e, rc, "body is not valid JSON: single quotes, NaN and Infinity are not JSON");
		goto out;
	}
	if (!json_object_is_type(o, json_type_object)) {
		err_set(e, rc, "body must be a JSON object");
		goto out;
	}
	*out = o;
	o = NULL;
	rc = 0;
out:
	json_object_put(o);
	json_tokener_free(tok);
	return rc;
}

int json_parse_object(const char *body, size_t len, json_object **out, struct err *e)
{
	size_t i;

	*out = NULL;
	for (i = 0; i < len && body[i] && strchr(" \t\r\n", body[i]); i++)
		;
	if (i == len) {
		*out = json_object_new_object();
		return *out ? 0 : ERR_NOMEM;
	}
	if (body[i] != '{' && body[i] != 0)
		return not_an_object(body, len, i, e);
	if (len > (size_t)INT32_MAX)
		return err_set(e, ERR_TOOBIG, "request body is too large");
	if (memmem(body, len, "\\u0000", 6) && key_with_nul(body, len, e))
		return ERR_INVALID;
	if ((*out = json_parse_fast(body, len)))
		return 0;
	if (memchr(body, 0, len))
		return err_set(e, ERR_INVALID, "body is not valid JSON: it contains a NUL byte");
	return parse_json_c(body, len, out, e);
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
static void add(json_object *o, const char *key, json_object *v, int is_null)
{
	if (!o || (!v && !is_null) || json_object_object_add(o, key, v)) {
		log_error("out of memory adding '%s' to a JSON object", key);
		abort();
	}
}

void json_add_str(json_object *o, const char *key, const char *val)
{
	add(o, key, val ? json_object_new_string(val) : NULL, !val);
}

void json_add_bool(json_object *o, const char *key, int val)
{
	add(o, key, json_object_new_boolean(val), 0);
}

void json_add_int(json_object *o, const char *key, int64_t val)
{
	add(o, key, json_object_new_int64(val), 0);
}

/* ---- writing ---- */

int json_write_string(struct buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	int rc;

	if ((rc = buf_append(out, "\"", 1)))
		return rc;
	while (n > 0) {
		size_t run = plain_run(p, n, 0);
		/* Each special byte takes at most 6; a block of them at a time. */
		char esc[6 * 256];
		size_t k = 0;

		if (run && (rc = buf_append(out, p, run)))
			return rc;
		p += run;
		n -= run;
		for (; n > 0 && k < sizeof(esc) - 6 && special[*p]; p++, n--) {
			unsigned char c = *p;

			esc[k++] = '\\';
			switch (c) {
			case '"': esc[k++] = '"'; break;
			case '\\': esc[k++] = '\\'; break;
			case '\b': esc[k++] = 'b'; break;
			case '\t': esc[k++] = 't'; break;
			case '\n': esc[k++] = 'n'; break;
			case '\f': esc[k++] = 'f'; break;
			case '\r': esc[k++] = 'r'; break;
			default:
				esc[k++] = 'u';
				esc[k++] = '0';
				esc[k++] = '0';
				esc[k++] = hex[c >> 4];
				esc[k++] = hex[c & 15];
			}
		}
		if (k && (rc = buf_append(out, esc, k)))
			return rc;
	}
	return buf_append(out, "\"", 1);
}

int json_write(struct buf *out, json_object *o)
{
	int rc = 0, first = 1;

	switch (json_object_get_type(o)) {
	case json_type_null:
		return buf_append(out, "null", 4);
	case json_type_boolean:
		return json_object_get_boolean(o) ? buf_append(out, "true", 4)
						  : buf_append(out, "false", 5);
	case json_type_string:
		return json_write_string(out, json_object_get_string(o),
					 (size_t)json_object_get_string_len(o));
	case json_type_object:
		if ((rc = buf_append(out, "{", 1)))
			return rc;
		json_object_object_foreach(o, k, v) {
			if ((!first && (rc = buf_append(out, ",", 1))) ||
			    (rc = json_write_string(out, k, strlen(k))) ||
			    (rc = buf_append(out, ":", 1)) || (rc = json_write(out, v)))
				return rc;
			first = 0;
		}
		return buf_append(out, "}", 1);
	case json_type_array:
		if ((rc = buf_append(out, "[", 1)))
			return rc;
		for (size_t i = 0, n = json_object_array_length(o); i < n; i++)
			if ((i && (rc = buf_append(out, ",", 1))) ||
			    (rc = json_write(out, json_object_array_get_idx(o, i))))
				return rc;
		return buf_append(out, "]", 1);
	default: {
		/* Numbers: json-c's own text (doubles keep the form they were parsed in). */
		const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
		return t ? buf_puts(out, t) : ERR_NOMEM;
	}
	}
}
