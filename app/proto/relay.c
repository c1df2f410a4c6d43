/* relay.c: the relay token between sandboxd hosts and the redirect that carries it
 * (relay.h). Pure: bounded parsing, HMAC-SHA256 from sha256.c. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "sandboxd/lib/num.h"
#include "sandboxd/proto/relay.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

#define VERSION "v1"
#define TIME_DIGITS 12                 /* to the year 33658: far enough */
#define ADDR_CHARS "0123456789abcdefABCDEF.:"
#define ID_CHARS "0123456789abcdefABCDEF-"

static int method_ok(const char *m)
{
	size_t n = m ? strlen(m) : 0;

	return n >= 1 && n <= RELAY_METHOD_MAX && strspn(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == n;
}

static int addr_ok(const char *a, size_t n)
{
	return n >= 2 && n <= RELAY_ADDR_MAX && strspn(a, ADDR_CHARS) >= n;
}

static int id_ok(const char *id, size_t n)
{
	return n >= 8 && n <= RELAY_ID_MAX && strspn(id, ID_CHARS) >= n;
}

/* host[:port] after the scheme: an IPv4 literal, or [IPv6]; the port 1 to 65535. */
static int authority_ok(const char *a)
{
	char host[64];
	unsigned char bin[16];
	const char *port;
	size_t hl;
	int64_t p;

	if (a[0] == '[') {
		const char *end = strchr(a, ']');
		if (!end || (size_t)(end - a - 1) >= sizeof(host))
			return 0;
		hl = (size_t)(end - a - 1);
		memcpy(host, a + 1, hl);
		host[hl] = 0;
		if (inet_pton(AF_INET6, host, bin) != 1)
			return 0;
		port = end + 1;
	} else {
		hl = strcspn(a, ":");
		if (hl >= sizeof(host))
			return 0;
		memcpy(host, a, hl);
		host[hl] = 0;
		if (inet_pton(AF_INET, host, bin) != 1)
			return 0;
		port = a + hl;
	}
	if (!*port)
		return 1;
	return port[0] == ':' && num_parse(port + 1, 1, 65535, &p) == 0 && port[1] != '0';
}

int relay_url_parse(const char *url, char scheme[8], char authority[RELAY_URL_MAX + 1],
		    struct err *e)
{
	size_t skip = strncmp(url, "https://", 8) == 0 ? 8 : strncmp(url, "http://", 7) == 0 ? 7 : 0;

	if (strlen(url) > RELAY_URL_MAX)
		return err_set(e, ERR_INVALID, "a relay URL is at most %d characters", RELAY_URL_MAX);
	if (!skip)
		return err_set(e, ERR_INVALID, "a relay URL starts with http:// or https://");
	if (!authority_ok(url + skip))
		return err_set(e, ERR_INVALID, "a relay URL names an IP address (IPv6 in brackets) "
			       "and optionally a port, and no path");
	if (scheme)
		snprintf(scheme, 8, "%.*s", (int)skip - 3, url);
	if (authority)
		snprintf(authority, RELAY_URL_MAX + 1, "%s", url + skip);
	return 0;
}

/* One field of the MAC's text: its length in decimal, ':', its bytes (the lengths make the
 * concatenation unambiguous: no field can run into the next). */
static void field(struct sha256_part *parts, size_t *np, char len[][24], const char *s)
{
	size_t n = strlen(s);

	snprintf(len[*np / 2], 24, "%zu:", n);
	parts[*np].p = len[*np / 2];
	parts[*np].n = strlen(len[*np / 2]);
	parts[*np + 1].p = s;
	parts[*np + 1].n = n;
	*np += 2;
}

static void mac_of(const unsigned char key[RELAY_KEY_LEN], const struct relay_request *q,
		   const char *time, const char *addr, const char *id, unsigned char out[SHA256_LEN])
{
	const char *fields[] = { VERSION, q->method, q->uri, q->target, time, addr, id };
	struct sha256_part parts[2 * 7];
	char len[7][24];
	size_t np = 0;

	for (size_t i = 0; i < 7; i++)
		field(parts, &np, len, fields[i]);
	hmac_sha256(key, RELAY_KEY_LEN, parts, np, out);
}

int relay_sign(const unsigned char key[RELAY_KEY_LEN], const struct relay_request *q,
	       int64_t now, const char *addr, const char *request_id,
	       char out[RELAY_TOKEN_MAX + 1], struct err *e)
{
	unsigned char mac[SHA256_LEN];
	char time[TIME_DIGITS + 8], hex[2 * SHA256_LEN + 1];

	if (!method_ok(q->method))
		return err_set(e, ERR_INVALID, "a relayed method is 1 to %d capital letters",
			       RELAY_METHOD_MAX);
	if (!addr || !addr_ok(addr, strlen(addr)))
		return err_set(e, ERR_INVALID, "the client's address is not an IP address");
	if (!request_id || !id_ok(request_id, strlen(request_id)))
		return err_set(e, ERR_INVALID, "the request id is not 8 to %d hex digits", RELAY_ID_MAX);
	if (now < 0 || now > 999999999999LL)
		return err_set(e, ERR_INVALID, "the clock is out of range");
	snprintf(time, sizeof(time), "%lld", (long long)now);
	mac_of(key, q, time, addr, request_id, mac);
	hex_encode(hex, mac, SHA256_LEN);
	snprintf(out, RELAY_TOKEN_MAX + 1, VERSION "_%s_%s_%s_%s", time, addr, request_id, hex);
	return 0;
}

/* The next '_'-separated field of text[*pos..n) into out (at most max bytes): its length,
 * or -1 when there is none or it is longer. The last field ends at n. */
static long next_field(const char *text, size_t n, size_t *pos, char *out, size_t max, int last)
{
	size_t start = *pos, end = start;

	while (end < n && text[end] != '_')
		end++;
	if ((last ? end != n : end == n) || end - start > max)
		return -1;
	memcpy(out, text + start, end - start);
	out[end - start] = 0;
	*pos = end + 1;
	return (long)(end - start);
}

#define BAD "relay refused: a malformed X-Sandboxd-Relay header"

int relay_parse(const char *text, size_t n, struct relay_claims *c, struct err *e)
{
	char version[4], time[TIME_DIGITS + 1], mac[2 * SHA256_LEN + 1];
	size_t pos = 0;
	long l;

	memset(c, 0, sizeof(*c));
	if (n == 0)
		return err_set(e, ERR_DENIED, "relay refused: no X-Sandboxd-Relay header");
	if (n > RELAY_TOKEN_MAX || memchr(text, 0, n))
		return err_set(e, ERR_DENIED, BAD);
	if (next_field(text, n, &pos, version, 3, 0) < 0 || strcmp(version, VERSION))
		return err_set(e, ERR_DENIED, "relay refused: an X-Sandboxd-Relay header of another "
			       "version than " VERSION);
	/* One spelling per token: no leading zero. */
	if ((l = next_field(text, n, &pos, time, TIME_DIGITS, 0)) < 1 || (time[0] == '0' && l > 1) ||
	    num_parse(time, 0, 999999999999LL, &c->time))
		return err_set(e, ERR_DENIED, BAD);
	if ((l = next_field(text, n, &pos, c->addr, RELAY_ADDR_MAX, 0)) < 0 ||
	    !addr_ok(c->addr, (size_t)l))
		return err_set(e, ERR_DENIED, BAD);
	if ((l = next_field(text, n, &pos, c->request_id, RELAY_ID_MAX, 0)) < 0 ||
	    !id_ok(c->request_id, (size_t)l))
		return err_set(e, ERR_DENIED, BAD);
	if (next_field(text, n, &pos, mac, 2 * SHA256_LEN, 1) != 2 * SHA256_LEN)
		return err_set(e, ERR_DENIED, BAD);
	/* Lower case only, as relay_sign writes it: one spelling of a token. */
	if (!hex_is(mac, 2 * SHA256_LEN) || hex_decode(c->mac, mac, SHA256_LEN))
		return err_set(e, ERR_DENIED, BAD);
	return 0;
}

int relay_verify(const unsigned char key[RELAY_KEY_LEN], const struct relay_request *q,
		 const struct relay_claims *c, int64_t now, struct err *e)
{
	unsigned char want[SHA256_LEN], diff = 0;
	char time[TIME_DIGITS + 8];

	snprintf(time, sizeof(time), "%lld", (long long)c->time);
	mac_of(key, q, time, c->addr, c->request_id, want);
	for (size_t i = 0; i < SHA256_LEN; i++)
		diff |= (unsigned char)(want[i] ^ c->mac[i]);
	if (diff || !method_ok(q->method))
		return err_set(e, ERR_DENIED, "relay refused: the signature does not match");
	if (c->time < now - RELAY_WINDOW || c->time > now + RELAY_WINDOW)
		return err_set(e, ERR_DENIED, "relay refused: the signature's time is not within "
			       "%d s of this host's clock", RELAY_WINDOW);
	return 0;
}

int relay_redirect(const char *target, const char *method, const char *token,
		   char out[RELAY_PATH_MAX + 1], struct err *e)
{
	char scheme[8], authority[RELAY_URL_MAX + 1];
	int rc = relay_url_parse(target, scheme, authority, e);

	if (rc)
		return rc;
	if (!method_ok(method))
		return err_set(e, ERR_INVALID, "a relayed method is 1 to %d capital letters",
			       RELAY_METHOD_MAX);
	if (strlen(token) > RELAY_TOKEN_MAX || strchr(token, '/'))
		return err_set(e, ERR_INVALID, "the relay token is not one path segment");
	int n = snprintf(out, RELAY_PATH_MAX + 1, RELAY_PREFIX "%s/%s/%s/%s", scheme, authority,
			 method, token);
	if (n < 0 || n > RELAY_PATH_MAX)
		return err_set(e, ERR_INVALID, "the relay path is longer than %d bytes", RELAY_PATH_MAX);
	return 0;
}

int relay_key_parse(const char *key_hex, size_t n, unsigned char key[RELAY_KEY_LEN],
		    struct err *e)
{
	if (n == 2 * RELAY_KEY_LEN + 1 && key_hex[n - 1] == '\n')
		n--;
	if (n != 2 * RELAY_KEY_LEN)
		return err_set(e, ERR_INVALID, "it must hold %d hex digits (openssl rand -hex 32)",
			       2 * RELAY_KEY_LEN);
	if (hex_decode(key, key_hex, RELAY_KEY_LEN))
		return err_set(e, ERR_INVALID, "it must hold %d hex digits (openssl rand -hex 32)",
			       2 * RELAY_KEY_LEN);
	return 0;
}
