/* sniff.h: the host name an outgoing connection of a sandbox asks for, read from its first
 * bytes, for egress by domain name (issue 32 D): the server name of a TLS ClientHello, or
 * the Host of an HTTP/1.x request. The bytes are the sandbox's: every length is checked
 * against what was read, nothing is trusted, and a name is only ever a DNS name (never an
 * address literal), lower-cased. Tested in tests/unit/test_sniff.c, fuzzed by
 * tests/fuzz/fuzz_sniff.c. */
#ifndef SANDBOXD_PROTO_SNIFF_H
#define SANDBOXD_PROTO_SNIFF_H
#include <stddef.h>
#include <stdint.h>

#define SNIFF_NAME_MAX 253    /* a DNS name's text, without a trailing dot */
#define SNIFF_HELLO_MAX (5 + 16384) /* one TLS record: the ClientHello must fit in it */
#define SNIFF_HEAD_MAX 8192   /* an HTTP request's line and headers */

enum sniff_result {
	SNIFF_FOUND = 0, /* name holds the host */
	SNIFF_MORE = 1,  /* not whole yet: read more (up to the bound), then ask again */
	SNIFF_BAD = -1,  /* refused: *why says why, in words for a log or an answer */
};

/* The host_name of the ClientHello at buf[0..len), into name (namesz >= SNIFF_NAME_MAX + 1). */
enum sniff_result sniff_tls_sni(const uint8_t *buf, size_t len, char *name, size_t namesz,
				const char **why);
/* The Host of the HTTP/1.0 or 1.1 request head at buf[0..len), into name; *port its port
 * (80 when the header names none). An absolute-form target must name the same host. */
enum sniff_result sniff_http_host(const uint8_t *buf, size_t len, char *name, size_t namesz,
				  int *port, const char **why);
/* 1 when name (lower case) is a DNS name: labels of a-z, 0-9 and '-', 1 to 63 bytes, none
 * starting or ending with '-', at most SNIFF_NAME_MAX in all, and a last label that is not
 * all digits (so no IPv4 literal in any of its spellings passes). */
int sniff_name_valid(const char *name) __attribute__((warn_unused_result));
/* 1 when name is on the list: "example.org" is that name, "*.example.org" any name below it
 * (not example.org itself, as a TLS wildcard). */
int sniff_allowed(const char *name, const char *const *allow, size_t n)
	__attribute__((warn_unused_result));

#endif
