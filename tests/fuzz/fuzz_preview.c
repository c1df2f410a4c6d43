/* fuzz_preview.c: preview_host_id, which reads a preview's id out of the Host a browser
 * sends to <id>.<SANDBOXD_PREVIEW_DOMAIN> (nginx's $host, the client's to choose), and
 * preview_addr_ok, which guards what nginx is told to connect to.
 *
 * Input: domain '\n' host (C strings: a NUL ends them). Invariants: the id found is
 * PREVIEW_ID_LEN valid characters, and the host is that id (in any case), '.', the domain
 * (in any case), an optional '.', then nothing or ':' and digits; a refused host leaves the
 * id empty. An address accepted is a dotted quad that inet_pton reads back to itself. */
#include <arpa/inet.h>
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/preview.h"
#include "sandboxd/common/banned.h"

static int same_ci(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] + 32) : a[i];
		char y = b[i] >= 'A' && b[i] <= 'Z' ? (char)(b[i] + 32) : b[i];
		if (x != y)
			return 0;
	}
	return 1;
}

static void check_host(const char *domain, const char *host)
{
	char id[PREVIEW_ID_LEN + 1];
	size_t dl = strlen(domain), n;
	const char *rest;
	int rc = preview_host_id(host, domain, id);

	if (rc) {
		FUZZ_CHECK(rc == ERR_NOTFOUND && id[0] == 0);
		return;
	}
	FUZZ_CHECK(preview_id_valid(id));
	FUZZ_CHECK(same_ci(host, id, PREVIEW_ID_LEN) && host[PREVIEW_ID_LEN] == '.');
	FUZZ_CHECK(strlen(host) >= PREVIEW_ID_LEN + 1 + dl);
	FUZZ_CHECK(same_ci(host + PREVIEW_ID_LEN + 1, domain, dl));
	rest = host + PREVIEW_ID_LEN + 1 + dl;
	if (*rest == '.')
		rest++;
	if (*rest == ':') {
		n = strspn(rest + 1, "0123456789");
		FUZZ_CHECK(n > 0 && rest[1 + n] == 0);
	} else {
		FUZZ_CHECK(*rest == 0);
	}
}

static void check_addr(const char *s)
{
	struct in_addr a;
	char back[INET_ADDRSTRLEN];

	if (!preview_addr_ok(s))
		return;
	FUZZ_CHECK(strspn(s, "0123456789.") == strlen(s));
	FUZZ_CHECK(inet_pton(AF_INET, s, &a) == 1);
	FUZZ_CHECK(inet_ntop(AF_INET, &a, back, sizeof(back)) && strcmp(back, s) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size), *nl = strchr(s, '\n');

	if (nl) {
		*nl = 0;
		check_host(s, nl + 1);
		check_addr(nl + 1);
	} else {
		check_host("preview.localhost", s);
		check_addr(s);
	}
	free(s);
	return 0;
}
