/* utf8.h: UTF-8 sequences, decoded strictly (RFC 3629): what text may go into JSON as a
 * string. Pure; no allocation. */
#ifndef SANDBOXD_UTF8_H
#define SANDBOXD_UTF8_H
#include <stddef.h>

/* The length (1 to 4) of the one UTF-8 sequence that starts s[0..n), or 0 when none does: a
 * bad lead or continuation byte, a cut sequence, an overlong form, a UTF-16 surrogate or a
 * code point past U+10FFFF. n == 0 is 0. A NUL byte is a sequence of 1 (callers that
 * refuse NUL check for it). */
size_t utf8_seq(const unsigned char *s, size_t n);

/* 1 when s[0..n) is valid UTF-8 without NUL bytes (text that a JSON string carries as
 * it is), else 0. */
int utf8_text_ok(const unsigned char *s, size_t n) __attribute__((warn_unused_result));

#endif
