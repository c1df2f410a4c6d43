/* test_scan.c: the secret scanner: every rule family (a true and a false positive each),
 * boundaries, lines, binary and UTF-16 blobs, bounds.
 * The secrets below are split across string literals so that this file, pushed to a
 * sandboxd, does not trip the scanner it tests. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/proto/scan.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/common/banned.h"

#define PEM(type) "-----BEGIN " type "PRIVATE" " KEY-----"
#define PGP "-----BEGIN PGP PRIVATE" " KEY BLOCK-----"
#define RSA_BODY "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
#define AWS_ID "AKIA" "QZ7X2MLP4RT6VW3Y"
#define GH_36 "R8cTqW2nZk5yHb0mXv7LpD4sJf9aGe3uNi6o"
#define GHP "ghp" "_" GH_36
#define GH_82 "11ABCDEFG0abcdefghij_klmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefgh"
#define GH_PAT "github" "_pat_" GH_82

static int contains(const void *hay, size_t n, const void *needle, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (memcmp((const char *)hay + i, needle, m) == 0)
			return 1;
	return 0;
}

/* Scans s; checks the hit never holds the secret nor points into the data. */
static int scan_n(const char *s, size_t n, struct scan_hit *h)
{
	int found;
	int known = 0;

	memset(h, 0x5a, sizeof(*h));
	found = scan_buffer((const unsigned char *)s, n, h);
	if (!found) {
		assert_null(h->rule);
		assert_int_equal(h->line, 0);
		return 0;
	}
	assert_int_equal(found, 1);
	assert_non_null(h->rule);
	assert_true(h->line >= 1);
	assert_true(h->rule < s || h->rule >= s + n);
	for (size_t i = 0; scan_rule_name(i); i++)
		known |= h->rule == scan_rule_name(i);
	assert_true(known);
	return 1;
}

static int scan(const char *s, struct scan_hit *h)
{
	return scan_n(s, strlen(s), h);
}

static void expect_hit(const char *s, const char *rule, size_t line)
{
	struct scan_hit h;

	if (!scan(s, &h))
		fail_msg("no %s found in:\n%s", rule, s);
	assert_string_equal(h.rule, rule);
	assert_int_equal(h.line, line);
}

static void expect_none(const char *s)
{
	struct scan_hit h;

	if (scan(s, &h))
		fail_msg("unexpected %s on line %zu in:\n%s", h.rule, h.line, s);
}

static void test_empty_and_clean(void **state)
{
	struct scan_hit h;

	assert_int_equal(scan_n(NULL, 0, &h), 0);
	assert_int_equal(scan_n("", 0, &h), 0);
	assert_int_equal(scan_buffer(NULL, 0, NULL), 0);
	expect_none("int main(void)\n{\n\treturn 0;\n}\n");
	expect_none("-");
	expect_none("A");
	expect_none("g");
	expect_none("d");
	expect_none("-----BEGIN ");
	expect_none("dfy_");
}

static void test_private_key_each_type(void **state)
{
	static const char *const keys[] = {
		PEM("") "\n" RSA_BODY "\n",
		PEM("RSA ") "\n" RSA_BODY "\n",
		PEM("EC ") "\n" "MHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\n",
		PEM("DSA ") "\n" "MIIBuwIBAAKBgQD2lJ8I\n",
		PEM("OPENSSH ") "\n" "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n",
		PEM("ENCRYPTED ") "\n" "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI\n",
		PEM("SSH2 ENCRYPTED ") "\n" "P2/56wAAA\n",
		PGP "\n\n" "lQdGBGRyc2ABEADGm4j\n",
		PGP "\n" "Version: GnuPG v2\n\n" "lQdGBGRyc2ABEADGm4j\n",
		/* legacy encrypted PEM: armour headers first */
		PEM("RSA ") "\n" "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,1A2B\n\n" RSA_BODY,
	};
	char buf[512];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(buf, sizeof(buf), "# deploy key\n\n%s-----END PRIVATE KEY-----\n", keys[i]);
		expect_hit(buf, "private key", 3);
		expect_hit(keys[i], "private key", 1);
	}
}

static void test_private_key_encodings(void **state)
{
	/* CRLF */
	expect_hit("a\r\nb\r\n" PEM("RSA ") "\r\n" RSA_BODY "\r\n", "private key", 3);
	/* a service-account JSON file: the key is one escaped string */
	expect_hit("{\n  \"type\": \"service_account\",\n  \"private_key\": \"" PEM("")
		   "\\n" RSA_BODY "\\n-----END PRIVATE KEY-----\\n\"\n}\n", "private key", 3);
	expect_hit("k = \"" PEM("EC ") "\\r\\nMHcCAQEEII\"", "private key", 1);
	/* YAML block scalar: indented */
	expect_hit("tls:\n  key: |\n    " PEM("RSA ") "\n    " RSA_BODY "\n", "private key", 3);
	/* blanks after the header */
	expect_hit(PEM("") "  \t\n" RSA_BODY, "private key", 1);
	/* in the middle of a line */
	expect_hit("x=" PEM("") "\n" RSA_BODY, "private key", 1);
	/* first byte to last byte: a key cut right after its first base64 character */
	expect_hit(PEM("") "\nM", "private key", 1);
	expect_hit(PGP "\n\nl", "private key", 1);
	/* kept on one line, as environment variables hold keys */
	expect_hit("KEY='" PEM("RSA ") RSA_BODY "-----END RSA'", "private key", 1);
	expect_hit("KEY=\"" PEM("RSA ") " " RSA_BODY " -----END RSA\"", "private key", 1);
	expect_hit(PEM("") "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMx", "private key", 1);  /* 32 */
	expect_hit(PEM("") "+/IEowIBAAKCAQEAu1SU1LfVLPHCo+/x", "private key", 1);
	expect_hit(PEM("") "\n/9j4AAQSkZJRgABAQ", "private key", 1);
}

static void test_private_key_header_alone_is_not_a_key(void **state)
{
	/* code and documentation that quote the headers */
	expect_none("if (strcmp(line, \"" PEM("RSA ") "\") == 0)\n\treturn 1;\n");
	expect_none("static const char hdr[] = \"" PEM("") "\\n\";\n");
	expect_none("const h = '" PEM("EC ") "\\n' + body;\n");
	expect_none("A key file starts with `" PEM("OPENSSH ") "`.\n");
	expect_none(PEM("RSA ") "\n...\n-----END RSA PRIVATE KEY-----\n");
	expect_none(PEM("RSA ") "\n<your key here>\n");
	expect_none(PEM("RSA ") "\n\n\n" RSA_BODY "\n");  /* three line breaks: not a key */
	expect_none(PEM("RSA "));
	expect_none(PEM("RSA ") "\n");
	expect_none(PEM("RSA ") "\n\n");
	expect_none(PEM("RSA ") "\\n");
	expect_none("A file that starts with " PEM("RSA ") " is a key: keep it out of git.\n");
	expect_none(PEM("") "MIIEowIBAAKCAQEAu1SU1LfVLPHCozM");  /* 31 */
	expect_none(PEM("") "MIIEowIBAAKCAQEAu1SU1LfVLPHCozM-");
	/* not private keys at all */
	expect_none("-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n");
	expect_none("-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUF\n");
	expect_none("-----BEGIN rsa PRIVATE" " KEY-----\n" RSA_BODY);  /* lower case */
	expect_none("-----BEGIN RSA PRIVATE" " KEY----\n" RSA_BODY);  /* four dashes */
	expect_none("-----BEGINRSA PRIVATE" " KEY-----\n" RSA_BODY);
	expect_none("-----BEGIN RSA/PRIVATE" " KEY-----\n" RSA_BODY);
}

static void test_private_key_type_is_bounded(void **state)
{
	char buf[400];
	char type[120];

	memset(type, 'X', 100);
	type[99] = ' ';
	type[100] = 0;  /* 100 characters between "BEGIN " and "PRIVATE KEY": the most */
	snprintf(buf, sizeof(buf), "-----BEGIN %sPRIVATE" " KEY-----\n" RSA_BODY, type);
	expect_hit(buf, "private key", 1);
	memset(type, 'X', 101);
	type[100] = ' ';
	type[101] = 0;
	snprintf(buf, sizeof(buf), "-----BEGIN %sPRIVATE" " KEY-----\n" RSA_BODY, type);
	expect_none(buf);
}

static void test_aws_each_prefix(void **state)
{
	static const char *const ids[] = {
		"AKIA" "QZ7X2MLP4RT6VW3Y", "ASIA" "QZ7X2MLP4RT6VW3Y", "ABIA" "QZ7X2MLP4RT6VW3Y",
		"ACCA" "QZ7X2MLP4RT6VW3Y", "A3TX" "QZ7X2MLP4RT6VW3Y", "A3T9" "QZ7X2MLP4RT6VW3Y",
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(buf, sizeof(buf), "[default]\naws_access_key_id = %s\n", ids[i]);
		expect_hit(buf, "AWS access key id", 2);
		expect_hit(ids[i], "AWS access key id", 1);
	}
	expect_none("AKIB" "QZ7X2MLP4RT6VW3Y");
	expect_none("A3T-" "QZ7X2MLP4RT6VW3Y");
	expect_none("A3Tx" "QZ7X2MLP4RT6VW3Y");
}

static void test_aws_boundaries(void **state)
{
	/* inside a longer alphanumeric run: not a key id */
	expect_none("x" AWS_ID);
	expect_none("0" AWS_ID);
	expect_none(AWS_ID "A");
	expect_none(AWS_ID "8");
	expect_none(AWS_ID "a");
	expect_none("XAKIA" "QZ7X2MLP4RT6VW3YQ");
	/* the body is base32: 0, 1, 8, 9 and lower case are not in it */
	expect_none("AKIA" "QZ7X2MLP4RT6VW3" "0");
	expect_none("AKIA" "QZ7X2MLP4RT6VW3" "8");
	expect_none("AKIA" "QZ7X2MLP4RT6VW3" "y");
	expect_none("AKIA" "QZ7X2MLP4RT6VW3");  /* 15, at the very end */
	expect_none("AKIA" "QZ7X2MLP4RT6VW3 ");
	/* punctuation on either side is a boundary */
	expect_hit("\"" AWS_ID "\"", "AWS access key id", 1);
	expect_hit("key=" AWS_ID ";", "AWS access key id", 1);
	expect_hit("KEY_" AWS_ID "_2", "AWS access key id", 1);
	expect_hit("a\nb\nc\n" AWS_ID, "AWS access key id", 4);  /* the very end */
	/* AWS's documentation example ids are not secrets */
	expect_none("aws_access_key_id = AKIA" "IOSFODNN7EXAMPLE\n");
	expect_none("ASIA" "XXXXXXXXXEXAMPLE");
}

static void test_github_tokens(void **state)
{
	static const char *const kinds = "pousr";
	char buf[200];

	for (size_t i = 0; kinds[i]; i++) {
		snprintf(buf, sizeof(buf), "export GH_TOKEN=gh%c_%s\n", kinds[i], GH_36);
		expect_hit(buf, "GitHub token", 1);
		snprintf(buf, sizeof(buf), "\n\ngh%c_%s", kinds[i], GH_36);
		expect_hit(buf, "GitHub token", 3);  /* the very end */
	}
	expect_none("ghx_" GH_36);
	expect_none("ghp-" GH_36);
	expect_none("GHP_" GH_36);
	expect_none("x" GHP);
	expect_none("9" GHP);
	expect_none(GHP "Z");              /* 37 alphanumerics */
	expect_none("ghp" "_" "R8cTqW2nZk5yHb0mXv7LpD4sJf9aGe3uNi6");  /* 35 */
	expect_none("ghp" "_" "R8cTqW2nZk5yHb0mXv7LpD4sJf9aGe3uNi6_");
	expect_hit("(" GHP ")", "GitHub token", 1);
	expect_hit("_" GHP "_", "GitHub token", 1);

	expect_hit("token: " GH_PAT "\n", "GitHub token", 1);
	expect_hit("\n" GH_PAT, "GitHub token", 2);
	expect_none("x" GH_PAT);
	expect_none(GH_PAT "x");
	expect_none("github" "_pat_" "11ABCDEFG0abcdefghij_klmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefg");
	expect_none("github" "_pat_" "11ABCDEFG0abcdefghij-klmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefgh");
}

static void check_sandboxd_token(enum token_kind kind)
{
	char tok[TOKEN_LEN + 1], buf[256];
	struct scan_hit h;

	assert_int_equal(token_mint(kind, tok), 0);
	snprintf(buf, sizeof(buf), "[credential]\n\thelper = store\n# %s\nurl = http://t:%s@h/\n",
		 token_kind_name(kind), tok);
	expect_hit(buf, "sandboxd token", 4);
	expect_hit(tok, "sandboxd token", 1);
	snprintf(buf, sizeof(buf), "\n%s", tok);
	expect_hit(buf, "sandboxd token", 2);  /* the very end */
	snprintf(buf, sizeof(buf), "\"%s\"", tok);
	expect_hit(buf, "sandboxd token", 1);
	snprintf(buf, sizeof(buf), "x%s", tok);
	expect_none(buf);
	snprintf(buf, sizeof(buf), "%sx", tok);
	expect_none(buf);
	expect_none(tok + 1);
	/* the hit never holds any part of the token */
	snprintf(buf, sizeof(buf), "token: %s\n", tok);
	assert_true(scan(buf, &h));
	assert_false(contains(&h, sizeof(h), tok + 4, 8));
	assert_null(strstr(h.rule, tok + 4));

	/* a wrong checksum is not a token: tests and docs are full of such strings */
	tok[TOKEN_LEN - 1] = tok[TOKEN_LEN - 1] == 'a' ? 'b' : 'a';
	expect_none(tok);
	tok[TOKEN_LEN - 1] = 0;  /* one short */
	expect_none(tok);
}

static void test_sandboxd_tokens(void **state)
{
	check_sandboxd_token(TOKEN_PERSONAL);
	check_sandboxd_token(TOKEN_JOB);
	check_sandboxd_token(TOKEN_SANDBOX);
	expect_none("Authorization: Bearer dfy_" "0123456789abcdefghijklmnopqrstuvwxyzABCDEF\n");
	expect_none("dfy_" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	expect_none("dxy_" "0123456789abcdefghijklmnopqrstuvwxyzABCDEF");
}

static void test_first_secret_wins(void **state)
{
	char tok[TOKEN_LEN + 1], buf[512];

	assert_int_equal(token_mint(TOKEN_JOB, tok), 0);
	snprintf(buf, sizeof(buf), "one\n%s\n" AWS_ID "\n" GHP "\n", tok);
	expect_hit(buf, "sandboxd token", 2);
	snprintf(buf, sizeof(buf), "one\ntwo " AWS_ID " %s\n" GHP "\n", tok);
	expect_hit(buf, "AWS access key id", 2);
	snprintf(buf, sizeof(buf), "one\ntwo %s " AWS_ID "\n", tok);
	expect_hit(buf, "sandboxd token", 2);
	/* a quoted header does not hide a secret after it */
	expect_hit("\"" PEM("RSA ") "\"\n" GHP, "GitHub token", 2);
}

static void test_lines(void **state)
{
	expect_hit(AWS_ID, "AWS access key id", 1);
	expect_hit("\n" AWS_ID, "AWS access key id", 2);
	expect_hit("\r\n\r\n\r\n" AWS_ID, "AWS access key id", 4);
	expect_hit("\r\r\r" AWS_ID, "AWS access key id", 1);  /* lines end in \n only */
	expect_hit("no newline at all, then " AWS_ID " and more", "AWS access key id", 1);
}

/* A NUL byte (git's sign of a binary file) does not turn the scan off: every rule is
 * high-confidence, so binary files are scanned as text is. */
static void test_binary_scanned(void **state)
{
	char buf[9000];
	struct scan_hit h;

	assert_true(scan_n("\0\n" AWS_ID "\n", 23, &h));
	assert_string_equal(h.rule, "AWS access key id");
	assert_int_equal(h.line, 2);
	assert_true(scan_n(AWS_ID "\0", 21, &h));
	memset(buf, 0, sizeof(buf));
	memcpy(buf + 8500, GHP, strlen(GHP));
	assert_true(scan_n(buf, sizeof(buf), &h));
	assert_string_equal(h.rule, "GitHub token");
	/* false positive: binary noise around a near miss */
	buf[8500 + 10] = '-';
	assert_false(scan_n(buf, sizeof(buf), &h));
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7919 % 251);
	assert_false(scan_n(buf, sizeof(buf), &h));
}

/* Writes s as UTF-16 (le: little-endian) into out, with a byte-order mark if bom. */
static size_t utf16(const char *s, int le, int bom, char *out)
{
	size_t n = 0;

	if (bom) {
		out[n++] = le ? (char)0xff : (char)0xfe;
		out[n++] = le ? (char)0xfe : (char)0xff;
	}
	for (; *s; s++) {
		out[n++] = le ? *s : 0;
		out[n++] = le ? 0 : *s;
	}
	return n;
}

static void test_utf16(void **state)
{
	char text[128], buf[40000];
	struct scan_hit h;
	size_t n;

	snprintf(text, sizeof(text), "line one\r\nKEY=%s\r\n", AWS_ID);
	for (int le = 0; le < 2; le++)
		for (int bom = 0; bom < 2; bom++) {
			n = utf16(text, le, bom, buf);
			assert_true(scan_n(buf, n, &h));
			assert_string_equal(h.rule, "AWS access key id");
			assert_int_equal(h.line, 2);
		}
	/* false positive: the same text with the key cut short */
	snprintf(text, sizeof(text), "line one\r\nKEY=%.19s\r\n", AWS_ID);
	n = utf16(text, 1, 1, buf);
	assert_false(scan_n(buf, n, &h));
	/* a secret across the decoder's chunk boundary (16384 code units), far in */
	memset(text, 0, sizeof(text));
	n = utf16("", 1, 1, buf);
	for (size_t i = 0; i < 16380; i++) {
		buf[n++] = i % 50 == 49 ? '\n' : 'x';
		buf[n++] = 0;
	}
	buf[n - 2] = ' ';
	n += utf16(GHP " end", 1, 0, buf + n);
	assert_true(scan_n(buf, n, &h));
	assert_string_equal(h.rule, "GitHub token");
	assert_int_equal(h.line, 16380 / 50 + 1);
}

struct family_case {
	const char *rule, *tp, *fp;
};

/* One true and one false positive per family beyond the four above (generated so that
 * every literal is split: this file holds no secret). */
static const struct family_case families[] = {
	{ "GitLab token",
	  "glp" "at-aB3_dE5-fG7hJ9kL1mN2",
	  "glp" "at-aB3_dE5-fG7hJ9kL1mN" },
	{ "Slack token",
	  "xox" "b-1234567890-1234567890123-aB3dE5fG7hJ9kL1mN2pQ4rS6",
	  "xox" "b-12345-aB3dE5fG7hJ9kL1mN2pQ4rS6" },
	{ "Slack webhook URL",
	  "https://hooks." "slack.com/services/T0000000/B00000000/aB3dE5fG7hJ9kL1mN2pQ4rS6",
	  "https://hooks." "slack.com/services/T0000000/B0000" },
	{ "Stripe key",
	  "sk_" "live_aB3dE5fG7hJ9kL1mN2pQ4rS6",
	  "sk_" "test_validation_fixture" },
	{ "Google API key",
	  "AI" "zaaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYz",
	  "AI" "zaaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xY" },
	{ "GCP service account key",
	  "{\"type\": \"service_account\", \"p" "rivate_key_id\": \"0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d\"}",
	  "{\"private_key_id\": \"0a1b2c3d4e" "5f67890a1b2c3d4e5f67890a1b2c3\"}" },
	{ "npm token",
	  "np" "m_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3",
	  "np" "m_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB" },
	{ "PyPI token",
	  "pypi-A" "gEIcHlwaS5vcmcaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS",
	  "pypi-A" "gEIcHlwaS5vcmcaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9" },
	{ "Azure storage account key",
	  "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=aB3dE5fG7hJ9kL" "1mN2pQ4rS6tU8vW0xYz+/aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz+/aB3dE5fG7hJ9kL1m==;EndpointSuffix=core.windows.net",
	  "AccountKey=aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU" "8vW0xYzaB3dE5fG7hJ9kL1mN2pQ;" },
	{ "Twilio API key",
	  "S" "K0a1b2c3d4e5f67890a1b2c3d4e5f6789",
	  "S" "K0a1b2c3d4e5f67890a1b2c3d4e5f678" },
	{ "SendGrid API key",
	  "SG" ".aB3_dE5-fG7hJ9kL1mN2pQ.aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-",
	  "SG" ".aB3_dE5-fG7hJ9kL1mN2pQ.aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5" },
	{ "OpenAI API key",
	  "sk-p" "roj-aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_T3BlbkFJaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_",
	  "sk-p" "roj-aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3T3BlbkFJaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_" },
	{ "Anthropic API key",
	  "sk-an" "t-api03-aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4AA",
	  "sk-an" "t-api03-aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4AB" },
	{ "Shopify token",
	  "shp" "at_0a1b2c3d4e5f67890a1b2c3d4e5f6789",
	  "shp" "at_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY" },
	{ "Doppler token",
	  "dp." "pt.aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7h",
	  "dp." "pt.aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7" },
	{ "Hugging Face token",
	  "hf" "_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH",
	  "hf" "_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYza" },
	{ "DigitalOcean token",
	  "dop" "_v1_0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f6789",
	  "dop" "_v1_0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f678" },
	{ "Databricks token",
	  "da" "pi0a1b2c3d4e5f67890a1b2c3d4e5f6789",
	  "da" "pi0a1b2c3d4e5f67890a1b2c3d4e5f678" },
	{ "age secret key",
	  "AGE-SE" "CRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE",
	  "AGE-SE" "CRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHC" },
	{ "Postman API key",
	  "PMA" "K-0a1b2c3d4e5f67890a1b2c3d-0a1b2c3d4e5f67890a1b2c3d4e5f67890a",
	  "PMA" "K-0a1b2c3d4e5f67890a1b2c3d-0a1b2c3d4e5f67890a1b2c3d4e5f67890" },
	{ "Pulumi token",
	  "pu" "l-0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d",
	  "pu" "l-0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3" },
	{ "Sentry token",
	  "snt" "ryu_0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f6789",
	  "snt" "ryu_0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f678" },
	{ "Linear API key",
	  "lin" "_api_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5f",
	  "lin" "_api_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5" },
	{ "HashiCorp Vault token",
	  "hv" "s.aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS",
	  "hv" "s.aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN" },
	{ "Grafana token",
	  "gls" "a_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY_0a1b2c3d",
	  "gls" "a_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY_0a1b2c3" },
	{ "Square token",
	  "sq0" "csp-aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-",
	  "sq0" "csp-aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5" },
	{ "Dynatrace token",
	  "dt0" "c01.aB3dE5fG7hJ9kL1mN2pQ4rS6.aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0x",
	  "dt0" "c01.aB3dE5fG7hJ9kL1mN2pQ4rS6.aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0" },
	{ "PlanetScale token",
	  "psca" "le_tkn_aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_d",
	  "psca" "le_tkn_aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW" },
	{ "RubyGems token",
	  "ruby" "gems_0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f6789",
	  "ruby" "gems_0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f678" },
	{ "Shippo token",
	  "ship" "po_live_0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d",
	  "ship" "po_live_0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3" },
	{ "Perplexity API key",
	  "pp" "lx-aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1",
	  "pp" "lx-aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL" },
	{ "Notion token",
	  "nt" "n_01234567890aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB",
	  "nt" "n_0123456789aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB_" },
	{ "Brevo API key",
	  "xke" "ysib-0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f6789-aB3dE5fG7hJ9kL1m",
	  "xke" "ysib-0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d4e5f6789-aB3dE5fG7hJ9kL1" },
	{ "Heroku API key",
	  "HRK" "U-AAaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4",
	  "HRK" "U-AAaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ" },
	{ "Fly.io token",
	  "fo" "1_aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-",
	  "fo" "1_aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5" },
	{ "Alibaba access key id",
	  "LT" "AIaB3dE5fG7hJ9kL1mN2pQ",
	  "LT" "AIaB3dE5fG7hJ9kL1mN2p" },
	{ "Atlassian API token",
	  "ATA" "TT3aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7",
	  "ATA" "TT3aB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3_dE5-fG" },
	{ "1Password service account token",
	  "ops" "_eyJaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW",
	  "ops" "_eyJaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2" },
	{ "Artifactory API key",
	  "AK" "CpaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3",
	  "AK" "CpaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB" },
	{ "EasyPost API key",
	  "EZ" "AKaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ4",
	  "EZ" "AKaB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaB3dE5fG7hJ9kL1mN2pQ" },
	{ "New Relic key",
	  "NRA" "K-aB3dE5fG7hJ9kL1mN2pQ4rS6tU8",
	  "NRA" "K-aB3dE5fG7hJ9kL1mN2pQ4rS6tU" },
};

static void test_each_family(void **state)
{
	char buf[1024];
	size_t seen = 0;

	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		const struct family_case *c = &families[i];
		int known = 0;

		for (size_t k = 0; scan_rule_name(k); k++)
			known |= strcmp(c->rule, scan_rule_name(k)) == 0;
		if (!known)
			fail_msg("no rule family named %s", c->rule);
		expect_hit(c->tp, c->rule, 1);
		snprintf(buf, sizeof(buf), "# config\n\nexport X=\"%s\"\n", c->tp);
		expect_hit(buf, c->rule, 3);
		expect_none(c->fp);
		snprintf(buf, sizeof(buf), "# config\nexport X=\"%s\"\n", c->fp);
		expect_none(buf);
		seen++;
	}
	/* the four original families have their own tests above */
	assert_true(seen + 4 >= 25);
	assert_null(scan_rule_name(1000));
}

static void test_family_details(void **state)
{
	/* a Stripe-like name (keys have 24 or more characters); an OpenAI key of the older shape */
	expect_none("sk_" "test_" "validation_helper_functions");
	expect_hit("sk-" "aB3dE5fG7hJ9kL1mN2pQ" "T3BlbkFJ" "aB3dE5fG7hJ9kL1mN2pQ", "OpenAI API key", 1);
	expect_none("sk-" "aB3dE5fG7hJ9kL1mN2p" "T3BlbkFJ" "aB3dE5fG7hJ9kL1mN2pQ");
	expect_none("task-" "aB3dE5fG7hJ9kL1mN2pQ" "T3BlbkFJ" "aB3dE5fG7hJ9kL1mN2pQ");
	/* Twilio: glued to a word is not a key */
	expect_none("DESK" "0a1b2c3d4e5f67890a1b2c3d4e5f6789");
	expect_hit("SK" "0a1b2c3d4e5f67890a1b2c3d4e5f6789", "Twilio API key", 1);
	/* GitLab routable tokens are longer than 20 and end in .xx */
	expect_hit("glpat-" "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0x.01.abcdefg", "GitLab token", 1);
	expect_none("myglpat-" "aB3dE5fG7hJ9kL1mN2pQ");
	/* a service-account key id with spacing */
	expect_hit("{\n  \"private_key_id\" :  \"" "0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3d\"",
		   "GCP service account key", 2);
	expect_none("\"private_key_id\": \"" "0a1b2c3d4e5f67890a1b2c3d4e5f67890a1b2c3G\"");
}

static void test_not_nul_terminated(void **state)
{
	/* The buffer ends exactly after the secret: nothing is read past n. */
	static const char *const secrets[] = { AWS_ID, GHP, GH_PAT, PEM("") "\nM" };
	struct scan_hit h;

	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		size_t n = strlen(secrets[i]);
		char *p = malloc(n);

		assert_non_null(p);
		memcpy(p, secrets[i], n);
		assert_true(scan_n(p, n, &h));
		assert_int_equal(h.line, 1);
		assert_false(scan_n(p, n - 1, &h));  /* cut by one: no longer a secret */
		free(p);
	}
}

static void test_pathological_inputs_complete(void **state)
{
	static const char *const units[] = { "-----BEGIN ", "-----BEGIN -", "A", "AKIA",
					     "ghp_", "github_pat_", "dfy_", "dfy_a",
					     "-----BEGIN X PRIVATE" " KEY-----\\n\\n",
					     "pypi-", "ops_eyJ", "xoxb-1", "sk-proj-",
					     "A3T", "SK" };
	size_t n = 1 << 20;
	char *buf = malloc(n);
	struct scan_hit h;

	assert_non_null(buf);
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t len = strlen(units[u]);

		for (size_t i = 0; i < n; i++)
			buf[i] = units[u][i % len];
		assert_false(scan_n(buf, n, &h));
	}
	free(buf);
}

/* The prefilter steps over four positions at a time: a secret is found at every offset
 * from the buffer's start and up to its very end, whatever the step's alignment. */
static void test_every_offset(void **state)
{
	char buf[64 + sizeof(AWS_ID)];
	struct scan_hit h;

	(void)state;
	for (size_t off = 0; off <= 64; off++) {
		memset(buf, ' ', off);
		memcpy(buf + off, AWS_ID, strlen(AWS_ID));
		assert_true(scan_n(buf, off + strlen(AWS_ID), &h));
		assert_string_equal(h.rule, "AWS access key id");
		/* one byte short at the end: no key */
		assert_false(scan_n(buf, off + strlen(AWS_ID) - 1, &h));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_clean),
		cmocka_unit_test(test_private_key_each_type),
		cmocka_unit_test(test_private_key_encodings),
		cmocka_unit_test(test_private_key_header_alone_is_not_a_key),
		cmocka_unit_test(test_private_key_type_is_bounded),
		cmocka_unit_test(test_aws_each_prefix),
		cmocka_unit_test(test_aws_boundaries),
		cmocka_unit_test(test_github_tokens),
		cmocka_unit_test(test_sandboxd_tokens),
		cmocka_unit_test(test_first_secret_wins),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_binary_scanned),
		cmocka_unit_test(test_utf16),
		cmocka_unit_test(test_each_family),
		cmocka_unit_test(test_family_details),
		cmocka_unit_test(test_not_nul_terminated),
		cmocka_unit_test(test_pathological_inputs_complete),
		cmocka_unit_test(test_every_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
