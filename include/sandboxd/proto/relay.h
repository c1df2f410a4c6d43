/* relay.h: the relay between sandboxd hosts (SPEC §8 "Several hosts"), as bytes. Pure: no
 * I/O, no allocation; the worker's side is relay_http.h.
 *
 * A worker that finds a request's sandbox on another host's engine answers nginx with
 *     X-Accel-Redirect: /_relay/<scheme>/<authority>/<METHOD>/<token>
 * (relay_redirect). nginx's internal location sends the request as the client sent it
 * (method, $request_uri, headers, the body it buffered) to <scheme>://<authority>, the
 * owner's relay listener, with the token as the header X-Sandboxd-Relay; that nginx gives
 * the header to its worker as the parameter SANDBOXD_RELAY, which relay_parse reads and
 * relay_verify checks. The token is
 *     v1_<unix time>_<client address>_<request id>_<64 hex digits of MAC>
 * where the MAC is HMAC-SHA256, under the hosts' shared key, of the version, the method,
 * the URI as the client sent it, the target's relay URL, the time, the client's address and
 * the request id, each as "<decimal length>:<bytes>" (no field can run into the next). So a
 * relayed request cannot be turned into another (method, path, query, target host), its
 * client's address and request id (the audit row's) are the first host's word, and it is
 * good for RELAY_WINDOW seconds of either host's clock. */
#ifndef SANDBOXD_RELAY_H
#define SANDBOXD_RELAY_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/err.h"
#include "sandboxd/common/sha256.h"

#define RELAY_KEY_LEN 32
#define RELAY_WINDOW 30               /* seconds either way */
#define RELAY_URL_MAX 80              /* http(s)://<address literal>[:port] */
#define RELAY_ADDR_MAX 45             /* an IPv6 address as text */
#define RELAY_ID_MAX 64               /* a request id: 8 to 64 of [0-9A-Fa-f-] */
#define RELAY_METHOD_MAX 16
#define RELAY_TOKEN_MAX 192           /* v1_, 12 digits, address, id, MAC and the '_'s */
#define RELAY_PATH_MAX (RELAY_URL_MAX + RELAY_METHOD_MAX + RELAY_TOKEN_MAX + 16)
#define RELAY_PREFIX "/_relay/"       /* nginx's internal location */

/* What a token says. */
struct relay_claims {
	int64_t time;
	char addr[RELAY_ADDR_MAX + 1];
	char request_id[RELAY_ID_MAX + 1];
	unsigned char mac[SHA256_LEN];
};

/* What the MAC binds besides the claims: the request as the client sent it, and the
 * relay URL of the host it is for. */
struct relay_request {
	const char *method;        /* [A-Z]{1,16} */
	const char *uri;           /* $request_uri: path and query, raw */
	const char *target;        /* the owner's SANDBOXD_RELAY_URL */
};

/* 0 when url is http:// or https:// and an IPv4 literal or a bracketed IPv6 literal with
 * an optional port (1 to 65535), no path, at most RELAY_URL_MAX bytes; else ERR_INVALID
 * naming the problem. nginx proxies to it from a variable, and a variable's host name
 * would need a resolver: a literal needs none. scheme and authority (may be NULL) get
 * "http"/"https" and what follows "://". */
int relay_url_parse(const char *url, char scheme[8], char authority[RELAY_URL_MAX + 1],
		    struct err *e) __attribute__((warn_unused_result));

/* The token for q from addr with request id, at time now, into out (NUL-terminated).
 * ERR_INVALID when a field is not of its form (the method, the address, the id). */
int relay_sign(const unsigned char key[RELAY_KEY_LEN], const struct relay_request *q,
	       int64_t now, const char *addr, const char *request_id,
	       char out[RELAY_TOKEN_MAX + 1], struct err *e) __attribute__((warn_unused_result));

/* The token text[0..n) (from outside: any bytes) into c. ERR_DENIED "relay refused: …"
 * naming what is wrong: empty, or not of the form above (each field bounded and of its
 * alphabet, nothing after the MAC). */
int relay_parse(const char *text, size_t n, struct relay_claims *c, struct err *e)
	__attribute__((warn_unused_result));

/* 0 when c's MAC is the one key gives q and c, and c's time is within RELAY_WINDOW of now;
 * else ERR_DENIED "relay refused: the signature does not match" or "relay refused: the
 * signature's time is not within 30 s of this host's clock" (the MAC is checked first, in
 * constant time). */
int relay_verify(const unsigned char key[RELAY_KEY_LEN], const struct relay_request *q,
		 const struct relay_claims *c, int64_t now, struct err *e)
	__attribute__((warn_unused_result));

/* The X-Accel-Redirect path for a request of method to the host at target with token:
 * RELAY_PREFIX <scheme>/<authority>/<method>/<token>, into out. ERR_INVALID when target is
 * not a relay URL or the method not of its form. */
int relay_redirect(const char *target, const char *method, const char *token,
		   char out[RELAY_PATH_MAX + 1], struct err *e) __attribute__((warn_unused_result));

/* 0 when key_hex is exactly 64 hex digits (a final newline allowed at n - 1): the key
 * into key; else ERR_INVALID. */
int relay_key_parse(const char *key_hex, size_t n, unsigned char key[RELAY_KEY_LEN],
		    struct err *e) __attribute__((warn_unused_result));

#endif
