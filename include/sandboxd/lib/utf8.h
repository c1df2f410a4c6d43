/* utf8.h: UTF-8, decoded strictly (RFC 3629, the WHATWG decoder's bounds): what text may go
 * into JSON as a string, and how bytes that are not UTF-8 are repaired on their way there
 * (exec output, git's names and messages). One decoder for every module. Pure; only
 * utf8_append_repaired allocates (through the caller's buf). */
#ifndef SANDBOXD_UTF8_H
#define SANDBOXD_UTF8_H
#include <stddef.h>
#include "sandboxd/lib/buf.h"

enum utf8_state {
	UTF8_OK,     /* a whole, valid sequence */
	UTF8_BAD,    /* an ill-formed one */
	UTF8_SHORT,  /* a valid start cut by the end of the input */
};

/* The sequence at p[0..n), n > 0: UTF8_OK and its length (1 to 4); UTF8_BAD and the length
 * of its maximal subpart (the bytes that are a valid start, at least 1); UTF8_SHORT and n
 * when p[0..n) is a valid start cut by the end. Overlong forms, UTF-16 surrogates and code
 * points past U+10FFFF are ill-formed. A NUL byte is a valid sequence of 1. */
size_t utf8_scan(const unsigned char *p, size_t n, enum utf8_state *state);

/* The length (1 to 4) of the one valid UTF-8 sequence that starts s[0..n), or 0 when none
 * does (ill-formed or cut; n == 0 too). */
size_t utf8_seq(const unsigned char *s, size_t n);

/* 1 when s[0..n) is valid UTF-8 without NUL bytes (text that a JSON string carries as
 * it is), else 0. */
int utf8_text_ok(const unsigned char *s, size_t n) __attribute__((warn_unused_result));

/* Appends p[0..n) to out as valid UTF-8: each maximal subpart of an ill-formed sequence,
 * including one cut by the end, becomes U+FFFD (the WHATWG decoder's replacement; NUL
 * bytes stay). 0, or buf_append's ERR_TOOBIG/ERR_NOMEM (out then holds a prefix). */
int utf8_append_repaired(struct buf *out, const unsigned char *p, size_t n)
	__attribute__((warn_unused_result));

#endif
