/* preview.h: previews' names (SPEC.md §4 "Previews"): a new preview id (26 random
 * lower-case base32 characters, the capability), the id a request's host names
 * (<id>.<SANDBOXD_PREVIEW_DOMAIN>), the URL a client is given, and the one form of address
 * nginx is ever told to proxy to. Pure but for the id's randomness (OpenSSL's RAND_bytes);
 * the routes are api_previews.c's. */
#ifndef SANDBOXD_PREVIEW_H
#define SANDBOXD_PREVIEW_H
#include <stddef.h>

#define PREVIEW_ID_LEN 26
#define PREVIEW_TTL_DEFAULT 3600
#define PREVIEW_TTL_MAX 86400
/* Live previews one sandbox may have at a time (a bound of ours, README "Previews"). */
#define PREVIEW_MAX_PER_SANDBOX 64

/* A new id into out, NUL-terminated. 0, or ERR_FAIL when the RNG fails (out is then ""). */
int preview_id_new(char out[PREVIEW_ID_LEN + 1]) __attribute__((warn_unused_result));
/* 1 when id is PREVIEW_ID_LEN characters of a-z and 2-7, else 0. */
int preview_id_valid(const char *id) __attribute__((warn_unused_result));
/* The preview id in host, a Host header's value ("<id>.<domain>", optionally ":port",
 * ASCII case ignored, one trailing dot allowed), into id. 0, or ERR_NOTFOUND when host is
 * not exactly one valid id label in front of domain. */
int preview_host_id(const char *host, const char *domain, char id[PREVIEW_ID_LEN + 1])
	__attribute__((warn_unused_result));
/* "<scheme>://<id>.<domain>[:<port>]/", scheme and port those of public_url (the port only
 * when it names one). 0, or ERR_TOOBIG when it does not fit n bytes, ERR_INVALID when
 * public_url has no scheme. */
int preview_url(const char *public_url, const char *domain, const char *id, char *out, size_t n)
	__attribute__((warn_unused_result));
/* 1 when addr is a dotted-quad IPv4 address in canonical form (what nginx may be told to
 * connect to: no name, no port, nothing else), else 0. */
int preview_addr_ok(const char *addr) __attribute__((warn_unused_result));

#endif
