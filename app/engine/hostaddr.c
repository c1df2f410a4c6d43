/* hostaddr.c: the sandboxes' git endpoint must be an address of this host (hostaddr.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include "sandboxd/engine/hostaddr.h"
#include "sandboxd/common/banned.h"

/* The host of url (scheme://[user@]host[:port][/…], host may be [v6]) into out. */
static int url_host(const char *url, char *out, size_t n, struct err *e)
{
	const char *p = strstr(url, "://"), *end, *at;
	size_t len;

	if (!p)
		return err_set(e, ERR_INVALID, "SANDBOXD_SANDBOX_GIT_URL has no host");
	p += 3;
	end = p + strcspn(p, "/?#");
	/* userinfo, if any, ends at the last '@' before the path */
	for (at = p; at < end; at++)
		if (*at == '@')
			p = at + 1;
	if (*p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));
		if (!close)
			return err_set(e, ERR_INVALID, "SANDBOXD_SANDBOX_GIT_URL has a bad [address]");
		p++;
		len = (size_t)(close - p);
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		len = (size_t)((colon ? colon : end) - p);
	}
	if (len == 0 || len >= n)
		return err_set(e, ERR_INVALID, "SANDBOXD_SANDBOX_GIT_URL has no usable host");
	memcpy(out, p, len);
	out[len] = 0;
	return 0;
}

static int is_literal(const char *s)
{
	unsigned char a[16];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

int hostaddr_git_addr(const struct config *cfg, char out[HOSTADDR_MAX], char *host, size_t hostlen,
		      struct err *e)
{
	char name[256];
	struct addrinfo hints, *res = NULL;
	int rc;

	if ((rc = url_host(cfg->sandbox_git_url, name, sizeof(name), e)))
		return rc;
	if (host && hostlen)
		snprintf(host, hostlen, "%s", name);
	if (cfg->sandbox_git_addr[0]) {
		snprintf(out, HOSTADDR_MAX, "%s", cfg->sandbox_git_addr);
		return 0;
	}
	if (is_literal(name)) {
		snprintf(out, HOSTADDR_MAX, "%.*s", HOSTADDR_MAX - 1, name);
		return 0;
	}
	if (strcasecmp(name, "sandboxd.internal") == 0) {
		snprintf(out, HOSTADDR_MAX, "%s", HOSTADDR_DOCKER_GATEWAY);
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(name, NULL, &hints, &res)) || !res) {
		err_set(e, ERR_NOTFOUND, "the sandboxes' git endpoint %s does not resolve: %s", name,
			rc ? gai_strerror(rc) : "no address");
		goto out;
	}
	rc = getnameinfo(res->ai_addr, res->ai_addrlen, out, HOSTADDR_MAX, NULL, 0, NI_NUMERICHOST);
	if (rc)
		err_set(e, ERR_NOTFOUND, "the sandboxes' git endpoint %s: %s", name, gai_strerror(rc));
out:
	if (res)
		freeaddrinfo(res);
	return rc ? ERR_NOTFOUND : 0;
}

int hostaddr_is_local(const char *addr, struct err *e)
{
	unsigned char want[16];
	struct ifaddrs *ifs = NULL, *i;
	int family, rc = ERR_NOTFOUND;

	if (inet_pton(AF_INET, addr, want) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, addr, want) == 1)
		family = AF_INET6;
	else
		return err_set(e, ERR_INVALID, "%s is not an IP address", addr);
	if (getifaddrs(&ifs))
		return err_set(e, ERR_FAIL, "getifaddrs: %s", strerror(errno));
	for (i = ifs; i && rc; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET &&
		    memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, want, 4) == 0)
			rc = 0;
		if (family == AF_INET6 &&
		    memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, want, 16) == 0)
			rc = 0;
	}
	freeifaddrs(ifs);
	if (rc)
		err_set(e, rc, "%s is not an address of this host", addr);
	return rc;
}

int hostaddr_check(const struct config *cfg, struct err *e)
{
	char addr[HOSTADDR_MAX], host[256];
	int rc;

	if ((rc = hostaddr_git_addr(cfg, addr, host, sizeof(host), e)))
		return rc;
	rc = hostaddr_is_local(addr, e);
	if (rc == ERR_NOTFOUND)
		err_set(e, rc, "the sandboxes' git endpoint %s (%s) is not an address of this host", host,
			addr);
	return rc;
}
