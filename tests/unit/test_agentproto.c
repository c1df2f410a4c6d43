/* test_agentproto.c: the agent's wire codec and its crypto: SHA-256 (FIPS 180-4 examples)
 * and HMAC-SHA256 (RFC 4231) vectors and against OpenSSL, frame headers as bytes, fields
 * round-tripped, and every malformed payload refused with its words. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/hmac.h>
#include "sandboxd/common/agentproto.h"
#include "sandboxd/common/sha256.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

static void check_sha(const void *data, size_t n, const char *want)
{
	unsigned char md[SHA256_LEN];
	char h[2 * SHA256_LEN + 1];
	struct sha256 s;

	sha256_init(&s);
	sha256_update(&s, data, n);
	sha256_final(&s, md);
	hex_encode(h, md, sizeof(md));
	assert_string_equal(h, want);
}

static void test_sha256(void **state)
{
	char *m = malloc(1000000);

	check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_non_null(m);
	memset(m, 'a', 1000000);
	check_sha(m, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(m);
}

static void check_hmac(const unsigned char *key, size_t kn, const char *data, const char *want)
{
	struct sha256_part part = { data, strlen(data) };
	unsigned char md[SHA256_LEN];
	char h[2 * SHA256_LEN + 1];

	hmac_sha256(key, kn, &part, 1, md);
	hex_encode(h, md, sizeof(md));
	assert_string_equal(h, want);
}

static void test_hmac(void **state)
{
	unsigned char k1[20], k6[131], key[200], data[300], a[32], b[32];
	unsigned int blen = 0;

	memset(k1, 0x0b, sizeof(k1));
	memset(k6, 0xaa, sizeof(k6));
	check_hmac(k1, sizeof(k1), "Hi There",
		   "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	check_hmac((const unsigned char *)"Jefe", 4, "what do ya want for nothing?",
		   "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	check_hmac(k6, sizeof(k6), "Test Using Larger Than Block-Size Key - Hash Key First",
		   "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	/* Every key length around the block size, data split in two parts: as OpenSSL. */
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (unsigned char)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 13 + 5);
	for (size_t kn = 1; kn < sizeof(key); kn += 3) {
		size_t dn = (kn * 11) % sizeof(data);
		struct sha256_part parts[2] = { { data, dn / 3 }, { data + dn / 3, dn - dn / 3 } };

		hmac_sha256(key, kn, parts, 2, a);
		HMAC(EVP_sha256(), key, (int)kn, data, dn, b, &blen);
		assert_int_equal(blen, 32);
		assert_memory_equal(a, b, 32);
	}
}

static void test_mac(void **state)
{
	unsigned char key[32] = { 1 }, an[AP_NONCE_LEN] = { 2 }, wn[AP_NONCE_LEN] = { 3 };
	unsigned char w[AP_MAC_LEN], g[AP_MAC_LEN], w2[AP_MAC_LEN];

	agentproto_mac(key, sizeof(key), 1, an, wn, w);
	agentproto_mac(key, sizeof(key), 0, an, wn, g);
	assert_false(agentproto_mac_equal(w, g));      /* one side's proof is not the other's */
	agentproto_mac(key, sizeof(key), 1, an, wn, w2);
	assert_true(agentproto_mac_equal(w, w2));
	key[31] = 1;
	agentproto_mac(key, sizeof(key), 1, an, wn, w2);
	assert_false(agentproto_mac_equal(w, w2));
}

static void test_header(void **state)
{
	unsigned char p[AP_HDR];
	const unsigned char want[AP_HDR] = { 7, 0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0, 1, 0, 0 };
	struct ap_hdr h;
	struct err e = { .msg = "" };

	agentproto_hdr_put(p, AP_T_STDOUT, 0x01020304, 65536);
	assert_memory_equal(p, want, AP_HDR);
	assert_int_equal(agentproto_hdr_parse(p, 0, &h, &e), 0);
	assert_true(h.type == AP_T_STDOUT && h.stream == 0x01020304 && h.len == 65536);
	assert_int_equal(agentproto_hdr_parse(p, 100, &h, &e), ERR_TOOBIG);
	assert_string_equal(e.msg, "frame 'stdout' of 65536 bytes is over its limit of 100");
	agentproto_hdr_put(p, AP_T_STDOUT, 1, 65537);
	assert_int_equal(agentproto_hdr_parse(p, 0, &h, &e), ERR_TOOBIG);
	assert_string_equal(e.msg, "frame 'stdout' of 65537 bytes is over its limit of 65536");
	agentproto_hdr_put(p, AP_T_EXEC, 1, AP_REQ_MAX);
	assert_int_equal(agentproto_hdr_parse(p, 0, &h, &e), 0);
	p[2] = 1;
	assert_int_equal(agentproto_hdr_parse(p, 0, &h, &e), ERR_INVALID);
	assert_string_equal(e.msg, "frame 'exec' has non-zero reserved bytes");
	agentproto_hdr_put(p, AP_T_EXEC, 0, 0);
	assert_int_equal(agentproto_hdr_parse(p, 0, &h, &e), ERR_INVALID);
	assert_string_equal(e.msg, "frame 'exec' has stream id 0");
	agentproto_hdr_put(p, AP_T_COUNT, 1, 0);
	assert_int_equal(agentproto_hdr_parse(p, 0, &h, &e), ERR_INVALID);
	assert_string_equal(e.msg, "unknown frame type 22");
	p[0] = 0;
	assert_int_equal(agentproto_hdr_parse(p, 0, &h, &e), ERR_INVALID);
}

/* What follows STARTED holds the whole run only once a whole EXIT frame is in it. */
static void test_run_ends(void **state)
{
	unsigned char b[64];
	size_t n = 0;

	(void)state;
	agentproto_hdr_put(b, AP_T_STDOUT, 2, 3);
	memcpy(b + AP_HDR, "hi\n", 3);
	n = AP_HDR + 3;
	assert_int_equal(agentproto_run_ends(b, 0), 0);
	assert_int_equal(agentproto_run_ends(b, 5), 0);             /* a header cut */
	assert_int_equal(agentproto_run_ends(b, AP_HDR + 1), 0);    /* a payload cut */
	assert_int_equal(agentproto_run_ends(b, n), 0);             /* output, no end yet */
	agentproto_hdr_put(b + n, AP_T_STDERR, 2, 0);
	n += AP_HDR;
	agentproto_hdr_put(b + n, AP_T_EXIT, 2, 10);
	memset(b + n + AP_HDR, 0, 10);
	assert_int_equal(agentproto_run_ends(b, n + AP_HDR + 9), 0);
	assert_int_equal(agentproto_run_ends(b, n + AP_HDR + 10), 1);
	/* Whatever comes after the end is not looked at. */
	memset(b + n + AP_HDR + 10, 0xff, 12);
	assert_int_equal(agentproto_run_ends(b, n + AP_HDR + 22), 1);
	/* Not a run's frame: a second STARTED, a bad header. */
	agentproto_hdr_put(b, AP_T_STARTED, 2, 3);
	assert_int_equal(agentproto_run_ends(b, n), -1);
	b[0] = 0;
	assert_int_equal(agentproto_run_ends(b, n), -1);
}

static void test_exec_roundtrip(void **state)
{
	unsigned char b[1024];
	const struct ap_rlimit rl = { 7, 100, 200 };
	struct ap_enc w;
	struct ap_msg *m = malloc(sizeof(*m));
	struct ap_hdr h;
	struct err e = { .msg = "" };
	size_t n;

	assert_non_null(m);
	agentproto_enc_init(&w, b, sizeof(b), AP_T_EXEC, 9);
	agentproto_put_str(&w, AP_F_CMD, "echo hi");
	agentproto_put_str(&w, AP_F_CWD, "/workspace/repo");
	agentproto_put_str(&w, AP_F_ENV, "A=1");
	agentproto_put_str(&w, AP_F_ENV, "B=");
	agentproto_put_num(&w, AP_F_TIMEOUT, 1000);
	agentproto_put_rlimit(&w, &rl);
	assert_int_equal(agentproto_enc_end(&w, &n, &e), 0);
	assert_int_equal(agentproto_hdr_parse(b, 0, &h, &e), 0);
	assert_int_equal(h.len, n - AP_HDR);
	/* cmd: tag 5, length 8 ("echo hi" and its NUL). */
	assert_memory_equal(b + AP_HDR, "\x05\x00\x00\x00\x08" "echo hi\0", 13);
	assert_int_equal(agentproto_decode(h.type, b + AP_HDR, h.len, m, &e), 0);
	assert_string_equal(m->str[AP_F_CMD], "echo hi");
	assert_string_equal(m->str[AP_F_CWD], "/workspace/repo");
	assert_int_equal(m->has[AP_F_ENV], 2);
	assert_string_equal(m->env[0], "A=1");
	assert_string_equal(m->env[1], "B=");
	assert_null(m->env[2]);
	assert_int_equal(m->num[AP_F_TIMEOUT], 1000);
	assert_true(m->rlim[0].resource == 7 && m->rlim[0].cur == 100 && m->rlim[0].max == 200);

	/* Too small a buffer, and a string with a NUL in it that the decoder would refuse. */
	agentproto_enc_init(&w, b, 20, AP_T_EXEC, 9);
	agentproto_put_str(&w, AP_F_CMD, "a command longer than the room");
	assert_int_equal(agentproto_enc_end(&w, &n, &e), ERR_TOOBIG);
	free(m);
}

/* Decodes p[0..n) as type: the code, e's message in msg. */
static int dec(uint8_t type, const char *p, size_t n, char *msg)
{
	struct ap_msg *m = malloc(sizeof(*m));
	struct err e = { .msg = "" };
	int rc;

	assert_non_null(m);
	rc = agentproto_decode(type, (const unsigned char *)p, n, m, &e);
	snprintf(msg, 200, "%.199s", e.msg);
	free(m);
	return rc;
}

#define DEC(type, lit, msg) dec(type, lit, sizeof(lit) - 1, msg)

static void test_decode_refusals(void **state)
{
	char msg[200];
	char many[AP_ENV_MAX + 1][9];
	unsigned char b[4096];
	struct ap_enc w;
	size_t n;

	assert_int_equal(DEC(AP_T_END, "", msg), 0);                     /* nothing required */
	assert_int_equal(DEC(AP_T_FREMOVE, "\x16\0\0\0\x02/\0", msg), 0);
	assert_int_equal(DEC(AP_T_FREMOVE, "\x16\0\0\0\x03/\0x", msg), ERR_INVALID);
	assert_string_equal(msg, "field 22 is not a string");
	assert_int_equal(DEC(AP_T_FREMOVE, "\x16\0\0\0\x01x", msg), ERR_INVALID);
	assert_string_equal(msg, "field 22 is not a string");
	assert_int_equal(DEC(AP_T_FREMOVE, "\x16\0\0\0\x00", msg), ERR_INVALID);
	assert_int_equal(DEC(AP_T_FREMOVE, "\x16\0\0\0\x09/\0", msg), ERR_INVALID);
	assert_string_equal(msg, "frame 'fremove' field 22 is cut");
	assert_int_equal(DEC(AP_T_FREMOVE, "\x16\0\0", msg), ERR_INVALID);
	assert_string_equal(msg, "frame 'fremove' ends inside a field");
	assert_int_equal(DEC(AP_T_FREMOVE, "\x05\0\0\0\x02x\0", msg), ERR_INVALID);
	assert_string_equal(msg, "frame 'fremove' has unexpected field 5");
	assert_int_equal(DEC(AP_T_FREMOVE, "\xff\0\0\0\x00", msg), ERR_INVALID);
	assert_string_equal(msg, "frame 'fremove' has unexpected field 255");
	assert_int_equal(DEC(AP_T_FREMOVE, "\x16\0\0\0\x02/\0\x16\0\0\0\x02/\0", msg),
			 ERR_INVALID);
	assert_string_equal(msg, "frame 'fremove' repeats field 22");
	assert_int_equal(DEC(AP_T_FREMOVE, "\x1e\0\0\0\x08\0\0\0\0\0\0\0\1", msg), ERR_INVALID);
	assert_string_equal(msg, "frame 'fremove' lacks a required field");
	assert_int_equal(DEC(AP_T_FREMOVE, "\x16\0\0\0\x02/\0\x1e\0\0\0\x04\0\0\0\1", msg),
			 ERR_INVALID);
	assert_string_equal(msg, "field 30 is not 8 bytes");
	assert_int_equal(DEC(AP_T_AUTH_OK, "\x02\0\0\0\x04" "abcd", msg), ERR_INVALID);
	assert_string_equal(msg, "field 2 is not 32 bytes");
	assert_int_equal(DEC(AP_T_STDOUT, "x", msg), ERR_INVALID);
	assert_string_equal(msg, "frame type 7 carries no fields");
	assert_int_equal(DEC(0, "", msg), ERR_INVALID);

	/* A repeatable field is bounded too. */
	agentproto_enc_init(&w, b, sizeof(b), AP_T_EXEC, 1);
	agentproto_put_num(&w, AP_F_TIMEOUT, 1);
	for (int i = 0; i <= AP_ENV_MAX; i++) {
		snprintf(many[i], sizeof(many[i]), "V%d=1", i);
		agentproto_put_str(&w, AP_F_ENV, many[i]);
	}
	assert_int_equal(agentproto_enc_end(&w, &n, NULL), 0);
	assert_int_equal(dec(AP_T_EXEC, (const char *)b + AP_HDR, n - AP_HDR, msg), ERR_INVALID);
	assert_string_equal(msg, "more than 128 environment variables");
}

static void test_err_and_text(void **state)
{
	char out[8];

	assert_int_equal(agentproto_err_code(ERR_NOTFOUND), ERR_NOTFOUND);
	assert_int_equal(agentproto_err_code(ERR_NOSTART), ERR_NOSTART);
	assert_int_equal(agentproto_err_code(0), ERR_FAIL);        /* never a success */
	assert_int_equal(agentproto_err_code(-1000), ERR_FAIL);
	assert_int_equal(agentproto_err_code(5), ERR_FAIL);
	agentproto_clean_text(out, sizeof(out), "a\x1b[b\xff\ncdef");
	assert_string_equal(out, "a?[b??c");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_hmac),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_run_ends),
		cmocka_unit_test(test_exec_roundtrip),
		cmocka_unit_test(test_decode_refusals),
		cmocka_unit_test(test_err_and_text),
	};

	return cmocka_run_group_tests_name("agentproto", tests, NULL, NULL);
}
