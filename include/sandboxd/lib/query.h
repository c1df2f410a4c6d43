/* query.h: one parameter of a request's query string (the part after '?', as nginx passes
 * it), for the routes that take one: name=value pairs between '&', the first pair of that
 * name wins, the value as it stands (no percent-decoding: the callers' values are numbers
 * and modes, which have no reason to be encoded). Pure; untrusted input. */
#ifndef SANDBOXD_QUERY_H
#define SANDBOXD_QUERY_H
#include <stddef.h>

/* The value of name in query (NULL: none) into out[size], NUL-terminated: 1 when found,
 * 0 when absent (out ""), -1 when the value does not fit. */
int query_param(const char *query, const char *name, char *out, size_t size)
	__attribute__((warn_unused_result));

/* in[0..n) percent-encoded into out (3 * n bytes at most) as RFC 3986 does, every byte
 * but the unreserved ones, with hex digits from digits ("0123456789ABCDEF" or the lower
 * case); returns the length. */
size_t query_percent_encode(const void *in, size_t n, const char *digits, char *out);

#endif
