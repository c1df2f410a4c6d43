/* test_sniff.c: the host name of a connection's first bytes (proto/sniff.h): real
 * ClientHellos made by OpenSSL, crafted ones for every refusal, HTTP request heads, the
 * names and the allow-list. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include <openssl/ssl.h>
#include "sandboxd/proto/sniff.h"
#include "sandboxd/common/banned.h"

static char name[SNIFF_NAME_MAX + 1];
static const char *why;

/* The first flight of an OpenSSL client asking for host (NULL: no SNI): a ClientHello as
 * curl, git and npm send it. Returns its length. */
static size_t real_hello(const char *host, uint8_t *out, size_t cap)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = SSL_new(ctx);
	BIO *rd = BIO_new(BIO_s_mem()), *wr = BIO_new(BIO_s_mem());
	int n;

	SSL_set_bio(ssl, rd, wr);
	if (host)
		SSL_set_tlsext_host_name(ssl, host);
	SSL_set_connect_state(ssl);
	SSL_do_handshake(ssl); /* wants to read: the hello is written */
	n = BIO_read(wr, out, (int)cap);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	assert_true(n > 0);
	return (size_t)n;
}

static void test_real_hellos(void **state)
{
	uint8_t h[4096];
	size_t n = real_hello("Registry.NPMJS.org", h, sizeof(h));

	assert_int_equal(sniff_tls_sni(h, n, name, sizeof(name), &why), SNIFF_FOUND);
	assert_string_equal(name, "registry.npmjs.org");
	/* Any prefix asks for more, never a wrong answer. */
	for (size_t k = 0; k < n; k++)
		assert_int_equal(sniff_tls_sni(h, k, name, sizeof(name), &why), SNIFF_MORE);
	/* Bytes after the record (the next record) do not matter. */
	memcpy(h + n, "\x17\x03\x03\x00\x01x", 6);
	assert_int_equal(sniff_tls_sni(h, n + 6, name, sizeof(name), &why), SNIFF_FOUND);

	n = real_hello(NULL, h, sizeof(h));
	assert_int_equal(sniff_tls_sni(h, n, name, sizeof(name), &why), SNIFF_BAD);
	assert_string_equal(why, "a ClientHello without a server name");
	assert_string_equal(name, "");
}

/* A ClientHello with the extensions ext[0..elen), in one record. */
static size_t hello(uint8_t *o, const uint8_t *ext, size_t elen)
{
	size_t body = 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + elen, hs = 4 + body, i = 0;

	o[i++] = 0x16, o[i++] = 3, o[i++] = 1, o[i++] = (uint8_t)(hs >> 8), o[i++] = (uint8_t)hs;
	o[i++] = 1, o[i++] = 0, o[i++] = (uint8_t)(body >> 8), o[i++] = (uint8_t)body;
	o[i++] = 3, o[i++] = 3;
	memset(o + i, 0xab, 32), i += 32;
	o[i++] = 0;                           /* session id */
	o[i++] = 0, o[i++] = 2, o[i++] = 0x13, o[i++] = 0x01; /* one cipher suite */
	o[i++] = 1, o[i++] = 0;               /* null compression */
	o[i++] = (uint8_t)(elen >> 8), o[i++] = (uint8_t)elen;
	memcpy(o + i, ext, elen);
	return i + elen;
}

/* A server_name extension naming host (type 0), at o; its length. */
static size_t sni_ext(uint8_t *o, const char *host, size_t hl)
{
	o[0] = 0, o[1] = 0, o[2] = (uint8_t)((hl + 5) >> 8), o[3] = (uint8_t)(hl + 5);
	o[4] = (uint8_t)((hl + 3) >> 8), o[5] = (uint8_t)(hl + 3);
	o[6] = 0, o[7] = (uint8_t)(hl >> 8), o[8] = (uint8_t)hl;
	memcpy(o + 9, host, hl);
	return 9 + hl;
}

static enum sniff_result crafted(const char *host)
{
	uint8_t ext[512], h[1024];
	size_t e = sni_ext(ext, host, strlen(host));

	return sniff_tls_sni(h, hello(h, ext, e), name, sizeof(name), &why);
}

static void test_crafted_hellos(void **state)
{
	uint8_t ext[1024], h[2048];
	size_t e, n;

	assert_int_equal(crafted("deb.debian.org"), SNIFF_FOUND);
	assert_string_equal(name, "deb.debian.org");
	/* Names that are not DNS names: addresses, a trailing dot, a NUL, bytes of no name. */
	const char *bad[] = { "169.254.169.254", "10.0.0.1", "0x7f.1", "127.1", "deb.debian.org.",
			      "a..b", "-a.org", "a-.org", "a b.org", "a_b.org", "", "[::1]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(crafted(bad[i]), SNIFF_BAD);
		assert_string_equal(name, "");
	}
	e = sni_ext(ext, "good.org\0evil.org", 17);
	assert_int_equal(sniff_tls_sni(h, hello(h, ext, e), name, sizeof(name), &why), SNIFF_BAD);
	assert_string_equal(why, "the server name is not a DNS name (an address, or bytes a name cannot hold)");
	/* Two server_name extensions: refused, whichever comes first. */
	e = sni_ext(ext, "a.org", 5);
	e += sni_ext(ext + e, "b.org", 5);
	assert_int_equal(sniff_tls_sni(h, hello(h, ext, e), name, sizeof(name), &why), SNIFF_BAD);
	assert_string_equal(why, "two server_name extensions");
	/* An extension whose length runs past the hello. */
	e = sni_ext(ext, "a.org", 5);
	ext[3] = 200;
	assert_int_equal(sniff_tls_sni(h, hello(h, ext, e), name, sizeof(name), &why), SNIFF_BAD);
	assert_string_equal(why, "a malformed ClientHello");
	/* Not TLS, not a hello, a hello longer than its record. */
	assert_int_equal(sniff_tls_sni((const uint8_t *)"GET / HTTP/1.1\r\n", 16, name,
				       sizeof(name), &why), SNIFF_BAD);
	assert_string_equal(why, "not a TLS handshake");
	e = sni_ext(ext, "a.org", 5);
	n = hello(h, ext, e);
	h[5] = 2;
	assert_int_equal(sniff_tls_sni(h, n, name, sizeof(name), &why), SNIFF_BAD);
	assert_string_equal(why, "the first handshake message is not a ClientHello");
	h[5] = 1;
	h[7] += 1;
	assert_int_equal(sniff_tls_sni(h, n, name, sizeof(name), &why), SNIFF_BAD);
	assert_string_equal(why, "a ClientHello split across TLS records");
	/* A name of 254 bytes: too long. */
	char longname[300];
	memset(longname, 'a', sizeof(longname));
	for (int i = 60; i < 254; i += 61)
		longname[i] = '.';
	longname[254] = '\0';
	assert_int_equal(crafted(longname), SNIFF_BAD);
	longname[253] = '\0';
	assert_int_equal(crafted(longname), SNIFF_FOUND);
}

static enum sniff_result head(const char *s, int *port)
{
	return sniff_http_host((const uint8_t *)s, strlen(s), name, sizeof(name), port, &why);
}

static void test_http(void **state)
{
	int port;

	assert_int_equal(head("GET /simple/ HTTP/1.1\r\nUser-Agent: pip\r\nHost:  PyPI.org \r\n\r\n", &port),
			 SNIFF_FOUND);
	assert_string_equal(name, "pypi.org");
	assert_int_equal(port, 80);
	assert_int_equal(head("GET http://deb.debian.org:8080/x HTTP/1.1\r\nHost: deb.debian.org:8080\r\n\r\nbody", &port),
			 SNIFF_FOUND);
	assert_int_equal(port, 8080);
	assert_int_equal(head("GET /x HTTP/1.1\r\nHost: a.org\r\n", &port), SNIFF_MORE);
	assert_int_equal(head("GE", &port), SNIFF_MORE);
	struct { const char *req, *why; } bad[] = {
		{ "GET / HTTP/1.1\r\nHost: a.org\r\nHost: b.org\r\n\r\n", "two Host headers" },
		{ "GET / HTTP/1.1\r\nhost: a.org\r\nHOST: a.org\r\n\r\n", "two Host headers" },
		{ "GET / HTTP/1.0\r\nAccept: */*\r\n\r\n", "a request without a Host header" },
		{ "GET http://evil.org/ HTTP/1.1\r\nHost: good.org\r\n\r\n",
		  "a request target that names another host than its Host header" },
		{ "GET http://good.org:81/ HTTP/1.1\r\nHost: good.org\r\n\r\n",
		  "a request target that names another host than its Host header" },
		{ "GET http://u@good.org/ HTTP/1.1\r\nHost: good.org\r\n\r\n",
		  "a request target with user information" },
		{ "GET / HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n",
		  "the server name is not a DNS name (an address, or bytes a name cannot hold)" },
		{ "GET / HTTP/1.1\r\nHost: [fd00:ec2::254]\r\n\r\n",
		  "the server name is not a DNS name (an address, or bytes a name cannot hold)" },
		{ "GET / HTTP/1.1\r\nHost: a.org:0\r\n\r\n", "a Host whose port is not a number from 1 to 65535" },
		{ "GET / HTTP/1.1\r\nHost: a.org:99999\r\n\r\n", "a Host whose port is not a number from 1 to 65535" },
		{ "GET / HTTP/1.1\r\nX: y\r\n  folded\r\nHost: a.org\r\n\r\n", "a folded header line" },
		{ "GET / HTTP/1.1\r\nHost: a.org\nX: y\r\n\r\n", "a header line not ended by CRLF" },
		{ "CONNECT a.org:443 HTTP/1.1\r\nHost: a.org:443\r\n\r\n", "CONNECT is not asked of this proxy" },
		{ "GET / HTTP/2.0\r\nHost: a.org\r\n\r\n", "not an HTTP/1.x request line" },
		{ "GET a.org HTTP/1.1\r\nHost: a.org\r\n\r\n",
		  "a request target that is neither a path nor an http:// URL" },
		{ "\x16\x03\x01\x02\x00", "not an HTTP request" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(head(bad[i].req, &port), SNIFF_BAD);
		assert_string_equal(why, bad[i].why);
		assert_string_equal(name, "");
	}
	char big[SNIFF_HEAD_MAX + 16];
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "GET /", 5);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(head(big, &port), SNIFF_BAD);
	assert_string_equal(why, "an HTTP request head longer than 8 KiB");
}

static void test_names_and_list(void **state)
{
	const char *allow[] = { "registry.npmjs.org", "*.pypi.org", "deb.debian.org" };

	assert_true(sniff_name_valid("localhost"));
	assert_true(sniff_name_valid("1password.com"));
	assert_false(sniff_name_valid("1.2.3.4"));
	assert_false(sniff_name_valid("Upper.org"));
	assert_true(sniff_allowed("registry.npmjs.org", allow, 3));
	assert_true(sniff_allowed("files.pypi.org", allow, 3));
	assert_true(sniff_allowed("a.b.pypi.org", allow, 3));
	assert_false(sniff_allowed("pypi.org", allow, 3));
	assert_false(sniff_allowed("evilpypi.org", allow, 3));
	assert_false(sniff_allowed("registry.npmjs.org.evil.com", allow, 3));
	assert_false(sniff_allowed("x.registry.npmjs.org", allow, 3));
	assert_false(sniff_allowed("debian.org", allow, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_hellos),
		cmocka_unit_test(test_crafted_hellos),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_names_and_list),
	};

	return cmocka_run_group_tests_name("sniff", tests, NULL, NULL);
}
