/* hostaddr.h: is the sandboxes' git endpoint one of this host's own addresses?
 *
 * Sandboxes reach git at SANDBOXD_SANDBOX_GIT_URL, normally http://sandboxd.internal:…,
 * which Docker maps to its host-gateway address (the default bridge's, 172.17.0.1 on a
 * stock engine). Their clones and pushes carry the sandbox's token in clear HTTP. When that
 * address stops being one of the host's (a deleted bridge: DESIGN.md), the host routes
 * their packets out of its default route to whatever answers there. So the service checks
 * it at start (a log line), in /healthz and before every create, and creates nothing
 * while it fails; deploy/egress.sh refuses such forwarded packets too.
 *
 * The address: SANDBOXD_SANDBOX_GIT_ADDR when set (the local stack sets it to the bridge
 * address its nginx listens on); else the URL's host when it is an address literal; else,
 * for sandboxd.internal, Docker's stock host-gateway 172.17.0.1; else the name as this host
 * resolves it (its first address). deploy/egress.sh applies the same rule.
 *
 * Pure but for getifaddrs and getaddrinfo: no allocation is kept, nothing to free. */
#ifndef SANDBOXD_HOSTADDR_H
#define SANDBOXD_HOSTADDR_H
#include <stddef.h>
#include "sandboxd/core/config.h"
#include "sandboxd/common/err.h"

#define HOSTADDR_DOCKER_GATEWAY "172.17.0.1"
#define HOSTADDR_MAX 64 /* INET6_ADDRSTRLEN and more */

/* The address sandboxes send git traffic to, as text, into out[HOSTADDR_MAX]; host (may be
 * NULL) gets the URL's host name, for messages. 0; ERR_INVALID when the URL has no host;
 * ERR_NOTFOUND (message naming it) when a name does not resolve. */
int hostaddr_git_addr(const struct config *cfg, char out[HOSTADDR_MAX], char *host, size_t hostlen,
		      struct err *e) __attribute__((warn_unused_result));

/* 0 when addr (IPv4 or IPv6 text) is an address of one of this host's interfaces, up or
 * not; ERR_NOTFOUND when it is none of them; ERR_INVALID when addr is not an address;
 * ERR_FAIL when the interfaces cannot be listed. */
int hostaddr_is_local(const char *addr, struct err *e) __attribute__((warn_unused_result));

/* Both: 0 when the git endpoint is an address of this host. Otherwise ERR_NOTFOUND with
 * "the sandboxes' git endpoint <host> (<addr>) is not an address of this host", or the
 * failure above; the message is what /healthz and a refused create (503) say. */
int hostaddr_check(const struct config *cfg, struct err *e) __attribute__((warn_unused_result));

#endif
