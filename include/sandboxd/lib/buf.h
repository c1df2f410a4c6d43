/* buf.h: growable byte buffers with a required maximum (after curl's dynbuf).
 * Invariants: data is NULL or holds len + 1 bytes with data[len] == 0; len <= max.
 * An append that would pass max fails with ERR_TOOBIG and leaves the buffer as it was. */
#ifndef SANDBOXD_BUF_H
#define SANDBOXD_BUF_H
#include <stddef.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;
};

void buf_init(struct buf *b, size_t max);
/* Frees the contents; the buffer may be used again. */
void buf_release(struct buf *b);
/* Empties the buffer but keeps its memory. */
void buf_clear(struct buf *b);
int buf_append(struct buf *b, const void *data, size_t n) __attribute__((warn_unused_result));
int buf_puts(struct buf *b, const char *s) __attribute__((warn_unused_result));
/* Copies the string src (NULL: "") into dst[n], NUL-terminated. ERR_TOOBIG when it had to
 * be cut (dst then holds its first n - 1 bytes): a caller that trusts a bound says so. */
int str_copy(char *dst, size_t n, const char *src) __attribute__((warn_unused_result));
/* s, or NULL when s is NULL or "" (settings kept as "" for none, passed on as SQL NULL or
 * an absent option). */
const char *str_or_null(const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)))
	__attribute__((warn_unused_result));
/* Makes room for n more bytes (and the NUL) in one allocation of exactly that size, so
 * that a caller who knows the final length writes straight into data + len. ERR_TOOBIG
 * past max (nothing changes), ERR_NOMEM. */
int buf_reserve(struct buf *b, size_t n) __attribute__((warn_unused_result));
/* After writing n bytes at data + len (within what buf_reserve made room for): counts them
 * and puts the NUL after them. */
void buf_advance(struct buf *b, size_t n);
/* Hands the contents (NUL-terminated, possibly NULL when empty) to the caller. */
char *buf_detach(struct buf *b, size_t *len);

#endif
