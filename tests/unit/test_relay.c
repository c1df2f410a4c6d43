/* test_relay.c: the relay token between hosts (relay.h): a known vector (its MAC computed
 * apart, with `openssl dgst -sha256 -mac HMAC`), what a change to each bound field does,
 * the parser's refusals, relay URLs, the redirect path and the key's text. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "sandboxd/proto/relay.h"
#include "sandboxd/common/banned.h"

#define URI "/api/v3/repos/o/r/diffinery/sandboxes/sb_1/exec?x=1"
#define TARGET "http://127.0.0.1:8081"
#define ID "0123456789abcdef0123456789abcdef"
#define NOW 1700000000
/* printf '%d:%s' for each of v1, POST, URI, TARGET, NOW, 127.0.0.1, ID, concatenated, then
 * openssl dgst -sha256 -mac HMAC -macopt hexkey:000102…1f */
#define MAC "6fb3d6011f01715a355f5b754ba394112d2da22ea775105a3dde151c9257d67b"
#define TOKEN "v1_1700000000_127.0.0.1_" ID "_" MAC

static unsigned char key[RELAY_KEY_LEN];

static int setup(void **state)
{
	for (int i = 0; i < RELAY_KEY_LEN; i++)
		key[i] = (unsigned char)i;
	return 0;
}

static const struct relay_request q = { "POST", URI, TARGET };

static void test_known_vector(void **state)
{
	char tok[RELAY_TOKEN_MAX + 1];
	struct relay_claims c;
	struct err e;

	assert_int_equal(relay_sign(key, &q, NOW, "127.0.0.1", ID, tok, &e), 0);
	assert_string_equal(tok, TOKEN);
	assert_int_equal(relay_parse(tok, strlen(tok), &c, &e), 0);
	assert_int_equal(c.time, NOW);
	assert_string_equal(c.addr, "127.0.0.1");
	assert_string_equal(c.request_id, ID);
	assert_int_equal(relay_verify(key, &q, &c, NOW, &e), 0);
	/* Within the window either way, not past it. */
	assert_int_equal(relay_verify(key, &q, &c, NOW + RELAY_WINDOW, &e), 0);
	assert_int_equal(relay_verify(key, &q, &c, NOW - RELAY_WINDOW, &e), 0);
	assert_int_equal(relay_verify(key, &q, &c, NOW + RELAY_WINDOW + 1, &e), ERR_DENIED);
	assert_string_equal(e.msg, "relay refused: the signature's time is not within 30 s of "
			    "this host's clock");
	assert_int_equal(relay_verify(key, &q, &c, NOW - RELAY_WINDOW - 1, &e), ERR_DENIED);
	/* IPv6 clients. */
	assert_int_equal(relay_sign(key, &q, NOW, "2001:db8::1", ID, tok, &e), 0);
	assert_int_equal(relay_parse(tok, strlen(tok), &c, &e), 0);
	assert_string_equal(c.addr, "2001:db8::1");
	assert_int_equal(relay_verify(key, &q, &c, NOW, &e), 0);
}

/* Each bound field changed: the MAC no longer matches. */
static void test_bound(void **state)
{
	struct relay_request other[] = {
		{ "GET", URI, TARGET },
		{ "POST", "/api/v3/repos/o/r/diffinery/sandboxes/sb_2/exec?x=1", TARGET },
		{ "POST", URI "&y=2", TARGET },
		{ "POST", URI, "http://127.0.0.1:8082" },
	};
	struct relay_claims c, forged;
	unsigned char other_key[RELAY_KEY_LEN] = { 1 };
	struct err e;

	assert_int_equal(relay_parse(TOKEN, strlen(TOKEN), &c, &e), 0);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		assert_int_equal(relay_verify(key, &other[i], &c, NOW, &e), ERR_DENIED);
		assert_string_equal(e.msg, "relay refused: the signature does not match");
	}
	assert_int_equal(relay_verify(other_key, &q, &c, NOW, &e), ERR_DENIED);
	forged = c;
	forged.time++;
	assert_int_equal(relay_verify(key, &q, &forged, NOW, &e), ERR_DENIED);
	assert_string_equal(e.msg, "relay refused: the signature does not match");
	forged = c;
	memcpy(forged.addr, "10.0.0.1", 9);
	assert_int_equal(relay_verify(key, &q, &forged, NOW, &e), ERR_DENIED);
	forged = c;
	forged.request_id[0] = '1';
	assert_int_equal(relay_verify(key, &q, &forged, NOW, &e), ERR_DENIED);
	forged = c;
	forged.mac[31] ^= 1;
	assert_int_equal(relay_verify(key, &q, &forged, NOW, &e), ERR_DENIED);
	/* A MAC that matches and a time far off: the time's text. */
	assert_int_equal(relay_verify(key, &q, &c, NOW + 600, &e), ERR_DENIED);
	assert_string_equal(e.msg, "relay refused: the signature's time is not within 30 s of "
			    "this host's clock");
}

static void refused(const char *text, const char *msg)
{
	struct relay_claims c;
	struct err e;

	assert_int_equal(relay_parse(text, strlen(text), &c, &e), ERR_DENIED);
	assert_string_equal(e.msg, msg);
}

#define BAD "relay refused: a malformed X-Sandboxd-Relay header"

static void test_parse_refusals(void **state)
{
	struct relay_claims c;
	struct err e;

	refused("", "relay refused: no X-Sandboxd-Relay header");
	refused("v2_1700000000_127.0.0.1_" ID "_" MAC,
		"relay refused: an X-Sandboxd-Relay header of another version than v1");
	refused("v1", "relay refused: an X-Sandboxd-Relay header of another version than v1");
	refused("v1_", BAD);
	refused("v1__127.0.0.1_" ID "_" MAC, BAD);                      /* no time */
	refused("v1_-5_127.0.0.1_" ID "_" MAC, BAD);
	refused("v1_01700000000_127.0.0.1_" ID "_" MAC, BAD);           /* a leading zero */
	refused("v1_1234567890123_127.0.0.1_" ID "_" MAC, BAD);         /* 13 digits */
	refused("v1_1700000000_127.0.0.x_" ID "_" MAC, BAD);            /* address alphabet */
	refused("v1_1700000000__" ID "_" MAC, BAD);
	refused("v1_1700000000_127.0.0.1_0123_" MAC, BAD);              /* id too short */
	refused("v1_1700000000_127.0.0.1_" ID "z_" MAC, BAD);
	refused("v1_1700000000_127.0.0.1_" ID "_" MAC "0", BAD);        /* MAC too long */
	refused("v1_1700000000_127.0.0.1_" ID "_" MAC "_", BAD);        /* a field too many */
	refused("v1_1700000000_127.0.0.1_" ID, BAD);                    /* no MAC */
	refused("v1_1700000000_127.0.0.1_" ID "_6FB3D6011F01715A355F5B754BA394112D2DA22EA775105A"
		"3DDE151C9257D67B", BAD);                                /* upper-case hex */
	refused("v1_1700000000_127.0.0.1_" ID "_" MAC "\r\nX: y", BAD);
	/* A NUL inside: the length given counts, not the C string's. */
	char with_nul[] = TOKEN;
	with_nul[30] = 0;
	assert_int_equal(relay_parse(with_nul, sizeof(with_nul) - 1, &c, &e), ERR_DENIED);
	assert_string_equal(e.msg, BAD);
	/* Cut short, by any number of bytes: never a success. */
	for (size_t n = 1; n < strlen(TOKEN); n++)
		assert_int_equal(relay_parse(TOKEN, n, &c, &e), ERR_DENIED);
	/* Longer than any token. */
	char big[RELAY_TOKEN_MAX + 2];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	refused(big, BAD);
}

static void test_sign_refusals(void **state)
{
	struct relay_request lower = { "post", URI, TARGET }, none = { "", URI, TARGET };
	char tok[RELAY_TOKEN_MAX + 1];
	struct err e;

	assert_int_equal(relay_sign(key, &lower, NOW, "127.0.0.1", ID, tok, &e), ERR_INVALID);
	assert_int_equal(relay_sign(key, &none, NOW, "127.0.0.1", ID, tok, &e), ERR_INVALID);
	assert_int_equal(relay_sign(key, &q, NOW, "localhost", ID, tok, &e), ERR_INVALID);
	assert_int_equal(relay_sign(key, &q, NOW, "127.0.0.1", "short", tok, &e), ERR_INVALID);
	assert_int_equal(relay_sign(key, &q, NOW, "127.0.0.1", "../" ID, tok, &e), ERR_INVALID);
	assert_int_equal(relay_sign(key, &q, -1, "127.0.0.1", ID, tok, &e), ERR_INVALID);
}

static void test_urls(void **state)
{
	char scheme[8], auth[RELAY_URL_MAX + 1];
	struct err e;

	assert_int_equal(relay_url_parse("http://127.0.0.1:8081", scheme, auth, &e), 0);
	assert_string_equal(scheme, "http");
	assert_string_equal(auth, "127.0.0.1:8081");
	assert_int_equal(relay_url_parse("https://[2001:db8::2]:443", scheme, auth, &e), 0);
	assert_string_equal(scheme, "https");
	assert_string_equal(auth, "[2001:db8::2]:443");
	assert_int_equal(relay_url_parse("http://10.0.0.2", scheme, auth, &e), 0);
	assert_string_equal(auth, "10.0.0.2");
	const char *bad[] = { "", "ftp://127.0.0.1", "http://", "http://host.example:80",
			      "http://127.0.0.1:0", "http://127.0.0.1:65536", "http://127.0.0.1:08",
			      "http://127.0.0.1:80/x", "http://127.0.0.1/", "http://[::1:80",
			      "http://[zz::1]:80", "http://127.0.0.1:80:81", "http://1.2.3:80",
			      "127.0.0.1:80",
			      "http://[2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff]:65535/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(relay_url_parse(bad[i], scheme, auth, &e), ERR_INVALID);
	assert_string_equal(e.msg, "a relay URL is at most 80 characters");
	assert_int_equal(relay_url_parse("ftp://127.0.0.1", NULL, NULL, &e), ERR_INVALID);
	assert_string_equal(e.msg, "a relay URL starts with http:// or https://");
	assert_int_equal(relay_url_parse("http://sandboxd-b:8081", NULL, NULL, &e), ERR_INVALID);
	assert_string_equal(e.msg, "a relay URL names an IP address (IPv6 in brackets) and "
			    "optionally a port, and no path");
}

static void test_redirect(void **state)
{
	char path[RELAY_PATH_MAX + 1];
	struct err e;

	assert_int_equal(relay_redirect(TARGET, "PUT", TOKEN, path, &e), 0);
	assert_string_equal(path, "/_relay/http/127.0.0.1:8081/PUT/" TOKEN);
	assert_int_equal(relay_redirect("https://[::1]:9", "GET", "t", path, &e), 0);
	assert_string_equal(path, "/_relay/https/[::1]:9/GET/t");
	assert_int_equal(relay_redirect("http://x:1", "GET", "t", path, &e), ERR_INVALID);
	assert_int_equal(relay_redirect(TARGET, "get", "t", path, &e), ERR_INVALID);
	assert_int_equal(relay_redirect(TARGET, "GET", "a/b", path, &e), ERR_INVALID);
}

static void test_key(void **state)
{
	unsigned char k[RELAY_KEY_LEN];
	const char *hex = "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F\n";
	struct err e;

	assert_int_equal(relay_key_parse(hex, strlen(hex), k, &e), 0);
	assert_memory_equal(k, key, RELAY_KEY_LEN);
	assert_int_equal(relay_key_parse(hex, strlen(hex) - 1, k, &e), 0);
	assert_int_equal(relay_key_parse(hex, strlen(hex) - 2, k, &e), ERR_INVALID);
	assert_string_equal(e.msg, "it must hold 64 hex digits (openssl rand -hex 32)");
	assert_int_equal(relay_key_parse("zz0102030405060708090a0b0c0d0e0f101112131415161718191a"
					 "1b1c1d1e1f", 64, k, &e), ERR_INVALID);
	assert_int_equal(relay_key_parse("", 0, k, &e), ERR_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_vector),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_parse_refusals),
		cmocka_unit_test(test_sign_refusals),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_redirect),
		cmocka_unit_test(test_key),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
