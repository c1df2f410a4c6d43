/* fuzz_sniff.c: sniff_tls_sni and sniff_http_host (proto/sniff.h), which read the first
 * bytes a sandbox sends out, for egress by domain name.
 *
 * Input: those bytes, read both ways. Invariants: a name found is a DNS name of at most 253
 * bytes (never an address), a port is 1..65535; a refusal leaves the name empty and says
 * why; "more" is only asked below the bound; a ClientHello's answer does not change with
 * bytes after its record, nor a request's with bytes after its head. */
#include "fuzz.h"
#include "sandboxd/proto/sniff.h"
#include "sandboxd/common/banned.h"

static void check_found(const char *name)
{
	FUZZ_CHECK(strlen(name) <= SNIFF_NAME_MAX);
	FUZZ_CHECK(sniff_name_valid(name));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[SNIFF_NAME_MAX + 1], again[SNIFF_NAME_MAX + 1];
	const char *why = NULL, *why2 = NULL;
	uint8_t *more = malloc(size + 1);
	int port = 0, port2 = 0;
	enum sniff_result r;

	if (!more)
		abort();
	memcpy(more, data, size);
	more[size] = 'x';

	r = sniff_tls_sni(data, size, name, sizeof(name), &why);
	FUZZ_CHECK(why != NULL);
	if (r == SNIFF_FOUND) {
		check_found(name);
		FUZZ_CHECK(sniff_tls_sni(more, size + 1, again, sizeof(again), &why2) == SNIFF_FOUND);
		FUZZ_CHECK(strcmp(name, again) == 0);
	} else if (r == SNIFF_BAD) {
		FUZZ_CHECK(name[0] == '\0' && why[0] != '\0');
	} else {
		FUZZ_CHECK(r == SNIFF_MORE && size < SNIFF_HELLO_MAX);
	}

	r = sniff_http_host(data, size, name, sizeof(name), &port, &why);
	FUZZ_CHECK(why != NULL);
	if (r == SNIFF_FOUND) {
		check_found(name);
		FUZZ_CHECK(port >= 1 && port <= 65535);
		FUZZ_CHECK(sniff_http_host(more, size + 1, again, sizeof(again), &port2, &why2) ==
			   SNIFF_FOUND);
		FUZZ_CHECK(strcmp(name, again) == 0 && port == port2);
	} else if (r == SNIFF_BAD) {
		FUZZ_CHECK(name[0] == '\0' && why[0] != '\0');
	} else {
		FUZZ_CHECK(r == SNIFF_MORE && size < SNIFF_HEAD_MAX);
	}
	free(more);
	return 0;
}
