/* addrlist.c: IP address and network lists (addrlist.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "sandboxd/lib/addrlist.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/common/banned.h"

/* An address in 16 bytes (IPv4 mapped as ::ffff:a.b.c.d) and its prefix length in bits. */
struct net {
	unsigned char a[16];
	int bits;
};

static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* s[0..n) as an address with an optional /prefix; 0, or -1 when it is not one. */
static int parse(const char *s, size_t n, struct net *out, int prefix_ok)
{
	char text[64];
	const char *slash;
	int64_t bits = -1;
	int v4;

	if (n == 0 || n >= sizeof(text))
		return -1;
	memcpy(text, s, n);
	text[n] = 0;
	slash = strchr(text, '/');
	if (slash) {
		if (!prefix_ok || num_parse(slash + 1, 0, 128, &bits))
			return -1;
		text[slash - text] = 0;
	}
	memset(out, 0, sizeof(*out));
	v4 = inet_pton(AF_INET, text, out->a + 12) == 1;
	if (v4) {
		if (bits > 32)
			return -1;
		memcpy(out->a, v4mapped, sizeof(v4mapped));
		out->bits = bits < 0 ? 128 : 96 + (int)bits;
		return 0;
	}
	if (inet_pton(AF_INET6, text, out->a) != 1)
		return -1;
	out->bits = bits < 0 ? 128 : (int)bits;
	return 0;
}

static int contains(const struct net *n, const unsigned char a[16])
{
	int full = n->bits / 8, rest = n->bits % 8;

	if (memcmp(n->a, a, (size_t)full))
		return 0;
	if (!rest)
		return 1;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (n->a[full] & mask) == (a[full] & mask);
}

#define SEP ", \t"

int addrlist_check(const char *list, struct err *e)
{
	struct net n;

	for (const char *p = list; p && *p;) {
		p += strspn(p, SEP);
		size_t len = strcspn(p, SEP);
		if (len && parse(p, len, &n, 1))
			return err_set(e, ERR_INVALID, "'%.*s' is not an IP address or network "
				       "(like 10.0.0.0/8 or ::1)", (int)(len > 64 ? 64 : len), p);
		p += len;
	}
	return 0;
}

int addrlist_match(const char *list, const char *addr)
{
	struct net a, n;

	if (!addr || parse(addr, strlen(addr), &a, 0))
		return 0;
	for (const char *p = list; p && *p;) {
		p += strspn(p, SEP);
		size_t len = strcspn(p, SEP);
		if (len && parse(p, len, &n, 1) == 0 && contains(&n, a.a))
			return 1;
		p += len;
	}
	return 0;
}
