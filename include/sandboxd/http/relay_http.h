/* relay_http.h: the worker's side of the relay between sandboxd hosts (relay.h, SPEC §8
 * "Several hosts"). A request that reaches this host for a sandbox another host owns is
 * answered with nginx's X-Accel-Redirect to that host's relay listener (relay_http_redirect:
 * no row here, the owner writes it); a request that arrives through this host's relay
 * listener carries its token in the parameter SANDBOXD_RELAY, which only that listener's
 * nginx sets (clients' headers arrive as HTTP_*): relay_http_accept checks it before
 * anything else, and serves it as the client's own. */
#ifndef SANDBOXD_RELAY_HTTP_H
#define SANDBOXD_RELAY_HTTP_H
#include "sandboxd/http/http.h"

/* The FastCGI parameter the relay listener sets from the X-Sandboxd-Relay header (empty
 * when the header is missing). */
#define RELAY_HTTP_PARAM "SANDBOXD_RELAY"

/* Reads the hosts' shared key (SANDBOXD_RELAY_KEY_FILE: 64 hex digits, a file of the
 * service's user alone, keyfile.h) once, before the workers fork. ERR_INVALID naming the
 * file and what is wrong. */
int relay_http_key_load(const char *path, struct err *e) __attribute__((warn_unused_result));

/* A request that came through the relay listener with token: 0 when the token is good for
 * this request (method, URI, this host's SANDBOXD_RELAY_URL, within RELAY_WINDOW of its
 * first arrival: a parked call's replay counts from then); r->relayed is set and
 * r->remote_addr and r->request_id are the client's, from the token. Else ERR_DENIED
 * "relay refused: …" (relay.h's texts; "relay refused: this host takes no relays" without a
 * key), and r is as it came. */
int relay_http_accept(struct req *r, const char *token, struct err *e)
	__attribute__((warn_unused_result));

/* The answer to a handler's ERR_RELAY: 0 with the redirect to r->relay_to written (status
 * 200, no body, X-Accel-Redirect; r->relay_out set). Else the answer's code with why it
 * cannot go: a request that came by relay is never relayed again (no loops), a message of
 * an MCP batch, a host without SANDBOXD_RELAY_URL (all 503). */
int relay_http_redirect(struct req *r, struct err *e) __attribute__((warn_unused_result));

#endif
