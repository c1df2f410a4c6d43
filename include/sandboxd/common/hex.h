/* hex.h: hexadecimal text of bytes, both ways, and the check of a hex string. Pure and
 * libc only, so that the in-sandbox agent links it too (one codec on both ends). Written
 * once here: it was written by hand in nine places. */
#ifndef SANDBOXD_HEX_H
#define SANDBOXD_HEX_H
#include <stddef.h>

/* out gets 2 * n lower-case hex digits of bytes and a NUL (room for 2 * n + 1). */
void hex_encode(char *out, const void *bytes, size_t n);

/* The value of one hex digit (0-9, a-f, A-F), or -1. */
int hex_value(int c) __attribute__((warn_unused_result));

/* 1 when s[0..n) are n lower-case hex digits (the form hex_encode writes and git's object
 * names take), else 0. n == 0 is 0. */
int hex_is(const char *s, size_t n) __attribute__((warn_unused_result));

/* out gets n bytes from the 2 * n hex digits at s (either case): 0, or -1 at the first
 * character that is not a hex digit (out is then partly written). */
int hex_decode(unsigned char *out, const char *s, size_t n) __attribute__((warn_unused_result));

#endif
