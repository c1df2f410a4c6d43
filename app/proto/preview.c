/* preview.c: previews' names (preview.h). */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <openssl/rand.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/preview.h"
#include "sandboxd/common/banned.h"

static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";

int preview_id_new(char out[PREVIEW_ID_LEN + 1])
{
	unsigned char rnd[PREVIEW_ID_LEN];

	out[0] = 0;
	if (RAND_bytes(rnd, (int)sizeof(rnd)) != 1)
		return ERR_FAIL;
	/* 5 random bits per character (256 is a multiple of 32: no bias): 130 bits. */
	for (size_t i = 0; i < PREVIEW_ID_LEN; i++)
		out[i] = b32[rnd[i] & 31];
	out[PREVIEW_ID_LEN] = 0;
	return 0;
}

int preview_id_valid(const char *id)
{
	size_t i;

	for (i = 0; i < PREVIEW_ID_LEN; i++)
		if (!id[i] || !strchr(b32, id[i]))
			return 0;
	return id[i] == 0;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int preview_host_id(const char *host, const char *domain, char id[PREVIEW_ID_LEN + 1])
{
	size_t n = strcspn(host, ":"), dl = strlen(domain), i;
	const char *port = host[n] == ':' ? host + n + 1 : NULL;

	id[0] = 0;
	/* What follows the name: nothing, or ':' and a port's digits. */
	if (port && (!*port || strspn(port, "0123456789") != strlen(port)))
		return ERR_NOTFOUND;
	if (n && host[n - 1] == '.')
		n--;
	if (n != PREVIEW_ID_LEN + 1 + dl || host[PREVIEW_ID_LEN] != '.')
		return ERR_NOTFOUND;
	for (i = 0; i < dl; i++)
		if (lower(host[PREVIEW_ID_LEN + 1 + i]) != lower(domain[i]))
			return ERR_NOTFOUND;
	for (i = 0; i < PREVIEW_ID_LEN; i++)
		id[i] = lower(host[i]);
	id[PREVIEW_ID_LEN] = 0;
	if (!preview_id_valid(id)) {
		id[0] = 0;
		return ERR_NOTFOUND;
	}
	return 0;
}

int preview_url(const char *public_url, const char *domain, const char *id, char *out, size_t n)
{
	const char *auth = strstr(public_url, "://"), *port;
	size_t hostlen;
	int len;

	if (n)
		out[0] = 0;
	if (!auth || auth == public_url)
		return ERR_INVALID;
	auth += 3;
	hostlen = strcspn(auth, "/");
	/* The authority's port: after the last ':' that is not inside an IPv6 literal. */
	port = memchr(auth, ']', hostlen);
	port = memchr(port ? port : auth, ':', hostlen - (size_t)((port ? port : auth) - auth));
	len = snprintf(out, n, "%.*s://%s.%s%s%.*s/", (int)(auth - 3 - public_url), public_url, id,
		       domain, port ? ":" : "",
		       port ? (int)(hostlen - (size_t)(port + 1 - auth)) : 0, port ? port + 1 : "");
	if (len < 0 || (size_t)len >= n) {
		if (n)
			out[0] = 0;
		return ERR_TOOBIG;
	}
	return 0;
}

int preview_addr_ok(const char *addr)
{
	struct in_addr a;
	char back[INET_ADDRSTRLEN];

	if (!addr || inet_pton(AF_INET, addr, &a) != 1 || !inet_ntop(AF_INET, &a, back, sizeof(back)))
		return 0;
	return strcmp(back, addr) == 0;
}
