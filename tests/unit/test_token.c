/* test_token.c: token minting, checksums, classification, hashing, Authorization parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/common/banned.h"

static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* The checksum computed independently of token.c: base62 of zlib's crc32 of the first 40
 * characters, six digits, most significant first. */
static void expected_checksum(const char *s, char out[TOKEN_CHECK_LEN + 1])
{
	unsigned long crc = crc32(0L, (const Bytef *)s, 4 + TOKEN_RANDOM_LEN);

	for (int i = TOKEN_CHECK_LEN - 1; i >= 0; i--) {
		out[i] = b62[crc % 62];
		crc /= 62;
	}
	out[TOKEN_CHECK_LEN] = 0;
}

static int is_b62(char c)
{
	return c && strchr(b62, c) != NULL;
}

static void check_minted(enum token_kind kind, const char *prefix)
{
	char t[TOKEN_LEN + 1];
	char sum[TOKEN_CHECK_LEN + 1];

	memset(t, 'X', sizeof(t));
	assert_int_equal(token_mint(kind, t), 0);
	assert_int_equal(strlen(t), TOKEN_LEN);
	assert_int_equal(TOKEN_LEN, 46);
	assert_memory_equal(t, prefix, 4);
	for (size_t i = 4; i < TOKEN_LEN; i++)
		assert_true(is_b62(t[i]));
	expected_checksum(t, sum);
	assert_string_equal(t + 4 + TOKEN_RANDOM_LEN, sum);
	assert_int_equal(token_classify(t, strlen(t)), kind);
}

static void test_mint_personal(void **state)
{
	check_minted(TOKEN_PERSONAL, "dfy_");
}

static void test_mint_job(void **state)
{
	check_minted(TOKEN_JOB, "djt_");
}

static void test_mint_sandbox(void **state)
{
	check_minted(TOKEN_SANDBOX, "dst_");
}

static void test_mint_not_a_mintable_kind(void **state)
{
	char t[TOKEN_LEN + 1];

	assert_int_equal(token_mint(TOKEN_JWT, t), ERR_INVALID);
	assert_int_equal(token_mint(TOKEN_INVALID, t), ERR_INVALID);
}

static void test_mint_random_and_whole_alphabet(void **state)
{
	char a[TOKEN_LEN + 1], b[TOKEN_LEN + 1];
	int seen[256] = { 0 };

	assert_int_equal(token_mint(TOKEN_PERSONAL, a), 0);
	assert_int_equal(token_mint(TOKEN_PERSONAL, b), 0);
	assert_string_not_equal(a, b);
	/* 300 * 36 characters: every base62 digit shows up (a miss has odds below 1e-40). */
	for (int n = 0; n < 300; n++) {
		assert_int_equal(token_mint(TOKEN_JOB, a), 0);
		for (size_t i = 4; i < 4 + TOKEN_RANDOM_LEN; i++)
			seen[(unsigned char)a[i]]++;
	}
	for (size_t i = 0; i < 62; i++)
		assert_true(seen[(unsigned char)b62[i]] > 0);
}

/* Vectors computed outside C (Python zlib.crc32). */
static void test_known_vectors(void **state)
{
	static const struct {
		const char *tok;
		enum token_kind kind;
	} v[] = {
		{ "dfy_" "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ2l5oRd", TOKEN_PERSONAL },
		{ "djt_" "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ0HUTqa", TOKEN_JOB },
		{ "dst_" "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ1y4NIi", TOKEN_SANDBOX },
		{ "dfy_" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1KTNlh", TOKEN_PERSONAL },
	};
	char sum[TOKEN_CHECK_LEN + 1];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(strlen(v[i].tok), TOKEN_LEN);
		assert_int_equal(token_classify(v[i].tok, TOKEN_LEN), v[i].kind);
		expected_checksum(v[i].tok, sum);
		assert_string_equal(v[i].tok + 40, sum);
	}
}

static void test_kind_names(void **state)
{
	assert_string_equal(token_kind_name(TOKEN_PERSONAL), "personal");
	assert_string_equal(token_kind_name(TOKEN_JOB), "job");
	assert_string_equal(token_kind_name(TOKEN_SANDBOX), "sandbox");
	assert_string_equal(token_kind_name(TOKEN_JWT), "git-url");
}

static void test_any_changed_character_invalid(void **state)
{
	char t[TOKEN_LEN + 1];

	assert_int_equal(token_mint(TOKEN_PERSONAL, t), 0);
	for (size_t i = 0; i < TOKEN_LEN; i++) {
		char saved = t[i];
		/* another base62 digit (or another letter in the prefix) */
		t[i] = saved == 'a' ? 'b' : 'a';
		assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_INVALID);
		t[i] = saved;
	}
	assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_PERSONAL);
}

static void test_checksum_covers_prefix(void **state)
{
	char t[] = "dfy_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ2l5oRd";

	memcpy(t, "djt_", 4);
	assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_INVALID);
	memcpy(t, "dst_", 4);
	assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_INVALID);
	memcpy(t, "DFY_", 4);
	assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_INVALID);
	memcpy(t, "dfy-", 4);
	assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_INVALID);
}

static void test_checksum_swapped_digits_invalid(void **state)
{
	char t[] = "dfy_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ2l5oRd";

	/* swap two random characters: same multiset, other CRC */
	t[4] = '1';
	t[5] = '0';
	assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_INVALID);
	/* a checksum that is one off */
	memcpy(t, "dfy_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ2l5oRe", TOKEN_LEN);
	assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_INVALID);
}

static void test_wrong_length_invalid(void **state)
{
	const char *good = "dfy_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ2l5oRd";
	char longer[TOKEN_LEN + 2];

	assert_int_equal(token_classify(good, TOKEN_LEN - 1), TOKEN_INVALID);
	assert_int_equal(token_classify(good, 40), TOKEN_INVALID);
	assert_int_equal(token_classify(good, 4), TOKEN_INVALID);
	assert_int_equal(token_classify(good, 0), TOKEN_INVALID);
	assert_int_equal(token_classify("", 0), TOKEN_INVALID);
	memcpy(longer, good, TOKEN_LEN);
	longer[TOKEN_LEN] = 'a';
	longer[TOKEN_LEN + 1] = 0;
	assert_int_equal(token_classify(longer, TOKEN_LEN + 1), TOKEN_INVALID);
	/* a NUL after the token counted in n */
	longer[TOKEN_LEN] = 0;
	assert_int_equal(token_classify(longer, TOKEN_LEN + 1), TOKEN_INVALID);
}

static void test_non_base62_invalid(void **state)
{
	static const char bad[] = { '-', '_', '.', ' ', '+', '/', '=', '\0', '\n', (char)0x80,
				    (char)0xc3, '~' };
	char t[] = "dfy_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ2l5oRd";
	size_t pos[] = { 4, 20, 39, 40, 45 };

	for (size_t p = 0; p < sizeof(pos) / sizeof(pos[0]); p++)
		for (size_t b = 0; b < sizeof(bad); b++) {
			char saved = t[pos[p]];
			t[pos[p]] = bad[b];
			assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_INVALID);
			t[pos[p]] = saved;
		}
	assert_int_equal(token_classify(t, TOKEN_LEN), TOKEN_PERSONAL);
}

static void test_jwt_shape(void **state)
{
	static const char *ok[] = {
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"a.b.c",
		"A-_.0.z",
		"-.-._",
	};
	static const char *bad[] = {
		"a.b", "a", "a.b.c.d", ".b.c", "a..c", "a.b.", "..", "...", "",
		"a.b+.c", "a.b/.c", "a.b=.c", "a.b.c=", "a b.c.d", "a.b.c ", " a.b.c",
		"a.b.c\n", "a.\xc3\xa9.c", "a.b.c.",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(token_classify(ok[i], strlen(ok[i])), TOKEN_JWT);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(token_classify(bad[i], strlen(bad[i])), TOKEN_INVALID);
	/* an embedded NUL counted in n */
	assert_int_equal(token_classify("a.b\0.c", 6), TOKEN_INVALID);
	assert_int_equal(token_classify("a.b.c\0", 6), TOKEN_INVALID);
}

static void test_jwt_length_bound(void **state)
{
	static char s[TOKEN_MAX + 2];

	memset(s, 'a', sizeof(s) - 1);
	s[10] = '.';
	s[20] = '.';
	s[TOKEN_MAX] = 0;
	assert_int_equal(token_classify(s, TOKEN_MAX), TOKEN_JWT);
	s[TOKEN_MAX] = 'a';
	s[TOKEN_MAX + 1] = 0;
	assert_int_equal(token_classify(s, TOKEN_MAX + 1), TOKEN_INVALID);
}

static void test_hash_vectors(void **state)
{
	char h[TOKEN_HASH_LEN + 1];

	memset(h, 'X', sizeof(h));
	token_hash("abc", 3, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	token_hash("", 0, h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	token_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* n, not the NUL, bounds the input */
	token_hash("abcdef", 3, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	token_hash("a\0b", 3, h);
	assert_string_equal(h, "59b271ae1bbcb1d31d41929817f4b16fb439eb4f31520b5ad1d5ce98920a7138");
	assert_int_equal(strlen(h), TOKEN_HASH_LEN);
}

/* --- Authorization header --- */

static void check_auth(const char *header, int rc, enum auth_scheme scheme, const char *cred)
{
	char out[128];
	enum auth_scheme s = (enum auth_scheme)99;

	memset(out, 'X', sizeof(out));
	assert_int_equal(token_parse_authorization(header, &s, out, sizeof(out)), rc);
	if (rc == 0) {
		assert_int_equal(s, scheme);
		assert_string_equal(out, cred);
	} else {
		/* nothing of a refused credential is left in out */
		assert_string_equal(out, "");
	}
}

static void test_auth_none(void **state)
{
	check_auth(NULL, 0, AUTH_NONE, "");
	check_auth("", 0, AUTH_NONE, "");
}

static void test_auth_bearer(void **state)
{
	check_auth("Bearer dfy_abc", 0, AUTH_BEARER, "dfy_abc");
	check_auth("bearer dfy_abc", 0, AUTH_BEARER, "dfy_abc");
	check_auth("BEARER dfy_abc", 0, AUTH_BEARER, "dfy_abc");
	check_auth("bEaReR dfy_abc", 0, AUTH_BEARER, "dfy_abc");
	check_auth("Bearer    dfy_abc   ", 0, AUTH_BEARER, "dfy_abc");
	check_auth("Bearer a.b.c", 0, AUTH_BEARER, "a.b.c");
}

static void test_auth_bearer_malformed(void **state)
{
	check_auth("Bearer", ERR_INVALID, AUTH_NONE, "");
	check_auth("Bearer ", ERR_INVALID, AUTH_NONE, "");
	check_auth("Bearer     ", ERR_INVALID, AUTH_NONE, "");
	check_auth("Bearerdfy_abc", ERR_INVALID, AUTH_NONE, "");
	check_auth(" Bearer dfy_abc", ERR_INVALID, AUTH_NONE, "");
	check_auth("Bear dfy_abc", ERR_INVALID, AUTH_NONE, "");
}

static void test_auth_unknown_scheme(void **state)
{
	check_auth("Token dfy_abc", ERR_INVALID, AUTH_NONE, "");
	check_auth("Digest username=x", ERR_INVALID, AUTH_NONE, "");
	check_auth("dfy_abc", ERR_INVALID, AUTH_NONE, "");
	check_auth(" ", ERR_INVALID, AUTH_NONE, "");
}

static void test_auth_basic(void **state)
{
	char header[256], enc[128];
	const char *pair = "x-access-token:dfy_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ2l5oRd";

	/* "user:dfy_tok", encoded outside C */
	check_auth("Basic dXNlcjpkZnlfdG9r", 0, AUTH_BASIC, "dfy_tok");
	check_auth("basic dXNlcjpkZnlfdG9r", 0, AUTH_BASIC, "dfy_tok");
	check_auth("BASIC   dXNlcjpkZnlfdG9r  ", 0, AUTH_BASIC, "dfy_tok");
	/* ":tok": an empty user is fine, the password is the token */
	check_auth("Basic OnRvaw==", 0, AUTH_BASIC, "tok");
	/* "user:pa:ss": the first colon splits */
	check_auth("Basic dXNlcjpwYTpzcw==", 0, AUTH_BASIC, "pa:ss");
	/* encoded here */
	assert_true(base64_encoded_size(strlen(pair)) <= sizeof(enc));
	base64_encode((const unsigned char *)pair, strlen(pair), enc);
	snprintf(header, sizeof(header), "Basic %s", enc);
	check_auth(header, 0, AUTH_BASIC, "dfy_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ2l5oRd");
}

static void test_auth_basic_malformed(void **state)
{
	check_auth("Basic dXNlcg==", ERR_INVALID, AUTH_NONE, "");       /* "user": no colon */
	check_auth("Basic dXNlcjo=", ERR_INVALID, AUTH_NONE, "");       /* "user:" */
	check_auth("Basic dXNlcjphAGI=", ERR_INVALID, AUTH_NONE, "");   /* "user:a\0b" */
	check_auth("Basic !!!!", ERR_INVALID, AUTH_NONE, "");
	check_auth("Basic dXNlcjpkZnlfdG9", ERR_INVALID, AUTH_NONE, ""); /* bad length */
	check_auth("Basic dXNlcjpk ZnlfdG9r", ERR_INVALID, AUTH_NONE, "");
	check_auth("Basic dXNlcjpkZnlfdG9r=", ERR_INVALID, AUTH_NONE, "");
	check_auth("Basic OnRvaw", ERR_INVALID, AUTH_NONE, "");           /* no padding */
	check_auth("Basic OnRvax==", ERR_INVALID, AUTH_NONE, "");         /* non-canonical */
	check_auth("Basic", ERR_INVALID, AUTH_NONE, "");
	check_auth("Basic ", ERR_INVALID, AUTH_NONE, "");
	check_auth("Basic ====", ERR_INVALID, AUTH_NONE, "");
}

static void test_auth_out_bounds(void **state)
{
	char out[8];
	enum auth_scheme s;

	/* 7 characters fit in 8 bytes, 8 do not */
	assert_int_equal(token_parse_authorization("Bearer 1234567", &s, out, sizeof(out)), 0);
	assert_int_equal(s, AUTH_BEARER);
	assert_string_equal(out, "1234567");
	assert_int_equal(token_parse_authorization("Bearer 12345678", &s, out, sizeof(out)),
			 ERR_INVALID);
	assert_string_equal(out, "");
	/* "u:1234567" and "u:12345678" */
	assert_int_equal(token_parse_authorization("Basic dToxMjM0NTY3", &s, out, sizeof(out)), 0);
	assert_int_equal(s, AUTH_BASIC);
	assert_string_equal(out, "1234567");
	assert_int_equal(token_parse_authorization("Basic dToxMjM0NTY3OA==", &s, out,
						   sizeof(out)), ERR_INVALID);
	assert_string_equal(out, "");
	/* outsz 1: only the empty string would fit */
	assert_int_equal(token_parse_authorization("Bearer x", &s, out, 1), ERR_INVALID);
	assert_int_equal(out[0], 0);
}

static void test_auth_long_credentials(void **state)
{
	static char header[16 + 2 * (TOKEN_MAX + 8)], out[TOKEN_MAX + 1], pair[TOKEN_MAX + 8];
	static char enc[2 * (TOKEN_MAX + 8)];
	enum auth_scheme s;
	size_t n;

	/* a Bearer credential of TOKEN_MAX characters into a TOKEN_MAX + 1 buffer */
	memcpy(header, "Bearer ", 7);
	memset(header + 7, 'a', TOKEN_MAX);
	header[7 + TOKEN_MAX] = 0;
	assert_int_equal(token_parse_authorization(header, &s, out, sizeof(out)), 0);
	assert_int_equal(strlen(out), TOKEN_MAX);
	header[7 + TOKEN_MAX] = 'a';
	header[8 + TOKEN_MAX] = 0;
	assert_int_equal(token_parse_authorization(header, &s, out, sizeof(out)), ERR_INVALID);

	/* Basic with a TOKEN_MAX-character password */
	memcpy(pair, "u:", 2);
	memset(pair + 2, 'b', TOKEN_MAX);
	n = 2 + TOKEN_MAX;
	base64_encode((const unsigned char *)pair, n, enc);
	snprintf(header, sizeof(header), "Basic %s", enc);
	assert_int_equal(token_parse_authorization(header, &s, out, sizeof(out)), 0);
	assert_int_equal(s, AUTH_BASIC);
	assert_int_equal(strlen(out), TOKEN_MAX);
	/* one more byte does not fit */
	pair[n++] = 'b';
	base64_encode((const unsigned char *)pair, n, enc);
	snprintf(header, sizeof(header), "Basic %s", enc);
	assert_int_equal(token_parse_authorization(header, &s, out, sizeof(out)), ERR_INVALID);
	assert_string_equal(out, "");
}

static void test_auth_huge_basic(void **state)
{
	/* far more base64 than any credential: refused without overflowing anything */
	static char header[6 + 8192 + 1];
	static char out[TOKEN_MAX + 1];
	enum auth_scheme s;

	for (size_t len = 6136; len <= 8192; len += 4) {
		memcpy(header, "Basic ", 6);
		memset(header + 6, 'Q', len);
		header[6 + len] = 0;
		/* "QQQQ" decodes to bytes without a colon */
		assert_int_equal(token_parse_authorization(header, &s, out, sizeof(out)),
				 ERR_INVALID);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mint_personal),
		cmocka_unit_test(test_mint_job),
		cmocka_unit_test(test_mint_sandbox),
		cmocka_unit_test(test_mint_not_a_mintable_kind),
		cmocka_unit_test(test_mint_random_and_whole_alphabet),
		cmocka_unit_test(test_known_vectors),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_any_changed_character_invalid),
		cmocka_unit_test(test_checksum_covers_prefix),
		cmocka_unit_test(test_checksum_swapped_digits_invalid),
		cmocka_unit_test(test_wrong_length_invalid),
		cmocka_unit_test(test_non_base62_invalid),
		cmocka_unit_test(test_jwt_shape),
		cmocka_unit_test(test_jwt_length_bound),
		cmocka_unit_test(test_hash_vectors),
		cmocka_unit_test(test_auth_none),
		cmocka_unit_test(test_auth_bearer),
		cmocka_unit_test(test_auth_bearer_malformed),
		cmocka_unit_test(test_auth_unknown_scheme),
		cmocka_unit_test(test_auth_basic),
		cmocka_unit_test(test_auth_basic_malformed),
		cmocka_unit_test(test_auth_out_bounds),
		cmocka_unit_test(test_auth_long_credentials),
		cmocka_unit_test(test_auth_huge_basic),
	};

	return cmocka_run_group_tests_name("token", tests, NULL, NULL);
}
