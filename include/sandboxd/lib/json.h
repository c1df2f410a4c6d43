/* json.h: json-c helpers for request bodies. Every failure fills the struct err with a
 * message that names the field, as clients are promised. Getters return 0 when the field is
 * present and valid, 1 when it is absent (or null) and optional, ERR_INVALID otherwise. */
#ifndef SANDBOXD_JSON_H
#define SANDBOXD_JSON_H
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"

#define JSON_MAX_DEPTH 32

/* Parses a request body that must be one JSON object (an empty body counts as {}). The
 * caller frees *out with json_object_put. */
int json_parse_object(const char *body, size_t len, json_object **out, struct err *e)
	__attribute__((warn_unused_result));
/* json_parse_object's fast path, public for its differential fuzzer (tests/fuzz/fuzz_json.c):
 * body[0..len) as one object when it is plain JSON of the subset json.c describes, else
 * NULL, which says nothing about the body (json_parse_object then hands it to json-c). What
 * it accepts, json-c accepts as the same value. */
json_object *json_parse_fast(const char *body, size_t len);

int json_field_string(json_object *o, const char *name, int required, size_t maxlen,
		      const char **out, struct err *e) __attribute__((warn_unused_result));
int json_field_bool(json_object *o, const char *name, int required, int *out, struct err *e)
	__attribute__((warn_unused_result));
int json_field_int(json_object *o, const char *name, int required, int64_t min, int64_t max,
		   int64_t *out, struct err *e) __attribute__((warn_unused_result));
/* A string that must be one of the NULL-terminated choices. */
int json_field_enum(json_object *o, const char *name, int required, const char *const *choices,
		    const char **out, struct err *e) __attribute__((warn_unused_result));

/* Small builders. Out of memory (a few bytes not to be had, or o itself never made) they
 * log and abort, as git's xmalloc dies: a process that cannot allocate that much cannot
 * answer anyway, and a worker's master starts another; an answer or a Docker request
 * silently missing a field would be worse. */
void json_add_str(json_object *o, const char *key, const char *val);   /* NULL -> null */
void json_add_bool(json_object *o, const char *key, int val);
void json_add_int(json_object *o, const char *key, int64_t val);

/* Appends o as json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
 * JSON_C_TO_STRING_NOSLASHESCAPE) writes it, byte for byte, but with long strings copied
 * in runs instead of byte by byte (an exec's output, a file's base64). 0, ERR_TOOBIG past
 * out's max, ERR_NOMEM; out may then hold part of the text. */
int json_write(struct buf *out, json_object *o) __attribute__((warn_unused_result));
/* Appends s[0..n) as a quoted JSON string, escaped as json_write escapes it. */
int json_write_string(struct buf *out, const char *s, size_t n) __attribute__((warn_unused_result));

#endif
