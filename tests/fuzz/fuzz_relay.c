/* fuzz_relay.c: relay_parse on arbitrary bytes (an X-Sandboxd-Relay header is anyone's to
 * send to a relay listener), and relay_url_parse on arbitrary text. A token that parses
 * is written back by relay_sign's format byte for byte (one spelling per token), and no
 * MAC but the key's own verifies; a URL that parses is its scheme and authority again. */
#include <inttypes.h>
#include "fuzz.h"
#include "sandboxd/proto/relay.h"
#include "sandboxd/common/banned.h"

static void token(const uint8_t *data, size_t size)
{
	static const unsigned char key[RELAY_KEY_LEN] = { 7 };
	const struct relay_request q = { "GET", "/x", "http://127.0.0.1:1" };
	char *text = fuzz_dup(data, size), again[RELAY_TOKEN_MAX + 80], hex[65];
	struct relay_claims c;
	struct err e;

	if (relay_parse(text, size, &c, &e) == 0) {
		FUZZ_CHECK(strlen(c.addr) <= RELAY_ADDR_MAX && strlen(c.request_id) <= RELAY_ID_MAX);
		for (size_t i = 0; i < SHA256_LEN; i++)
			snprintf(hex + 2 * i, 3, "%02x", c.mac[i]);
		int n = snprintf(again, sizeof(again), "v1_%" PRId64 "_%s_%s_%s", c.time, c.addr,
				 c.request_id, hex);
		FUZZ_CHECK(n > 0 && (size_t)n == size && memcmp(again, data, size) == 0);
		/* Only the MAC the key gives verifies; a fuzzed one would be a forgery. */
		char good[RELAY_TOKEN_MAX + 1];
		struct relay_claims g;
		if (relay_sign(key, &q, c.time, c.addr, c.request_id, good, &e) == 0) {
			FUZZ_CHECK(relay_parse(good, strlen(good), &g, &e) == 0);
			FUZZ_CHECK(relay_verify(key, &q, &g, c.time, &e) == 0);
			FUZZ_CHECK((relay_verify(key, &q, &c, c.time, &e) == 0) ==
				   (memcmp(g.mac, c.mac, SHA256_LEN) == 0));
		}
	} else {
		FUZZ_CHECK(strncmp(e.msg, "relay refused: ", 15) == 0);
	}
	free(text);
}

static void url(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size), scheme[8], auth[RELAY_URL_MAX + 1], again[128];
	struct err e;

	if (relay_url_parse(text, scheme, auth, &e) == 0) {
		snprintf(again, sizeof(again), "%s://%s", scheme, auth);
		FUZZ_CHECK(strcmp(again, text) == 0 && strlen(text) <= RELAY_URL_MAX);
		FUZZ_CHECK(!strchr(auth, '/'));
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The first byte picks the parser, so that one corpus serves both. */
	if (size == 0)
		return 0;
	if (data[0] & 1)
		url(data + 1, size - 1);
	else
		token(data + 1, size - 1);
	return 0;
}
