/* test_valscan.c: a sandbox's secret values found in pushed bytes (valscan.h): each form
 * (raw, percent-encoded both ways, base64 at the three alignments), the first one in the
 * bytes named with its line, never a near miss; the hand-over lines and what they refuse. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/proto/valscan.h"
#include "sandboxd/common/banned.h"

#define VALUE "npm_s3cr3t/value+42"

static struct valscan v;

static int setup(void **state)
{
	struct err e;

	valscan_init(&v);
	assert_int_equal(valscan_add(&v, "NPM_TOKEN", VALUE, strlen(VALUE), &e), 0);
	return 0;
}

static int teardown(void **state)
{
	valscan_free(&v);
	return 0;
}

/* The rule valscan_find names in text, or NULL; its line in *line. */
static const char *found(const char *text, size_t *line)
{
	struct scan_hit hit;

	if (!valscan_find(&v, text, strlen(text), &hit)) {
		assert_null(hit.rule);
		return NULL;
	}
	if (line)
		*line = hit.line;
	return hit.rule;
}

static void test_raw(void **state)
{
	size_t line = 0;

	assert_string_equal(found("//registry.npmjs.org/:_authToken=" VALUE "\n", &line),
			    "sandbox secret NPM_TOKEN");
	assert_int_equal(line, 1);
	assert_string_equal(found("a\nb\r\nc " VALUE, &line), "sandbox secret NPM_TOKEN");
	assert_int_equal(line, 3);
	/* At the very start and the very end. */
	assert_non_null(found(VALUE, NULL));
	/* One byte short, or one byte changed: not it. */
	assert_null(found("npm_s3cr3t/value+4", NULL));
	assert_null(found("npm_s3cr3t/valuE+42", NULL));
	assert_null(found("", NULL));
}

static void test_percent(void **state)
{
	size_t line = 0;

	assert_string_equal(found("https://me:npm_s3cr3t%2Fvalue%2B42@host/\n", &line),
			    "sandbox secret NPM_TOKEN (percent-encoded)");
	assert_string_equal(found("x\nnpm_s3cr3t%2fvalue%2b42", &line),
			    "sandbox secret NPM_TOKEN (percent-encoded)");
	assert_int_equal(line, 2);
}

/* base64 of VALUE after 0, 1 and 2 bytes of anything: a user name, "_auth" of .npmrc. */
static void test_base64_every_alignment(void **state)
{
	static const char *const users[] = { "", "u:", "me:", "user:", "x-access-token:" };
	char in[128], out[256], text[300];

	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		size_t n = (size_t)snprintf(in, sizeof(in), "%s%s", users[i], VALUE);

		base64_encode((const unsigned char *)in, n, out);
		snprintf(text, sizeof(text), "[auth]\nAuthorization: Basic %s\n", out);
		const char *rule = found(text, NULL);
		if (!rule || strcmp(rule, "sandbox secret NPM_TOKEN (base64)"))
			fail_msg("base64 of '%s…' gave %s", users[i], rule ? rule : "nothing");
	}
}

/* Two secrets: the one that starts first is named; at one position, the first added. */
static void test_first_in_the_bytes(void **state)
{
	struct err e;
	size_t line = 0;

	assert_int_equal(valscan_add(&v, "OTHER", "another-value", 13, &e), 0);
	assert_string_equal(found("x another-value y " VALUE, &line), "sandbox secret OTHER");
	assert_string_equal(found("x " VALUE " another-value", &line), "sandbox secret NPM_TOKEN");
	/* Adding one again is a second entry, not an error: still found. */
	assert_int_equal(valscan_add(&v, "OTHER", "another-value", 13, &e), 0);
	assert_non_null(found("another-value", NULL));
}

static void test_bad_input(void **state)
{
	struct valscan w;
	struct err e;
	char big[VALSCAN_VALUE_MAX + 2];

	valscan_init(&w);
	assert_int_equal(valscan_add(&w, "SHORT", "1234567", 7, &e), ERR_INVALID);
	assert_string_equal(e.msg, "secret SHORT: its value must be 8 to 4096 bytes");
	memset(big, 'a', sizeof(big));
	assert_int_equal(valscan_add(&w, "LONG", big, VALSCAN_VALUE_MAX + 1, &e), ERR_INVALID);
	assert_int_equal(valscan_add(&w, "1BAD", "12345678", 8, &e), ERR_INVALID);
	assert_int_equal(valscan_add(&w, "", "12345678", 8, &e), ERR_INVALID);
	/* Exactly the bounds pass; the 17th secret does not. */
	assert_int_equal(valscan_add(&w, "MIN", "12345678", 8, &e), 0);
	assert_int_equal(valscan_add(&w, "MAX", big, VALSCAN_VALUE_MAX, &e), 0);
	for (int i = 2; i < VALSCAN_SECRETS_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "S%d", i);
		assert_int_equal(valscan_add(&w, name, "abcdefgh", 8, &e), 0);
	}
	assert_int_equal(valscan_add(&w, "ONE_TOO_MANY", "abcdefgh", 8, &e), ERR_INVALID);
	assert_string_equal(e.msg, "more than 16 secrets");
	assert_int_equal(valscan_find(&w, "..12345678..", 12, NULL), 1);
	valscan_free(&w);
	/* Empty: nothing is found. */
	assert_int_equal(valscan_find(&w, "12345678", 8, NULL), 0);
}

static void test_hand_over(void **state)
{
	struct valscan w;
	struct buf b;
	struct err e;
	static const char bin[] = "a\nb\0c d\xff" "efgh";   /* newline, NUL, space, 0xff */

	buf_init(&b, 1 << 16);
	assert_int_equal(valscan_encode(&b, "A", "12345678", 8), 0);
	assert_int_equal(valscan_encode(&b, "B_2", bin, sizeof(bin) - 1), 0);
	assert_string_equal(b.data, "A 3132333435363738\nB_2 610a6200632064ff65666768\n");
	valscan_init(&w);
	assert_int_equal(valscan_decode(&w, b.data, b.len, &e), 0);
	assert_int_equal(w.nsecrets, 2);
	assert_int_equal(valscan_find(&w, "x\nd\xff" "e a\nb\0c d\xff" "efgh", 18, NULL), 1);
	valscan_free(&w);
	assert_int_equal(valscan_decode(&w, "", 0, &e), 0);
	assert_int_equal(w.nsecrets, 0);
	/* Every malformed line is refused by its number. */
	static const char *const bad[] = {
		"A 3132333435363738",            /* no newline */
		"A3132333435363738\n",           /* no space */
		"A 31323334353637\n",            /* 7 bytes */
		"A 313233343536373\n",           /* odd */
		"A 31323334353637zz\n",          /* not hex */
		"1A 3132333435363738\n",         /* bad name */
		" 3132333435363738\n",           /* no name */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		valscan_init(&w);
		if (valscan_decode(&w, bad[i], strlen(bad[i]), &e) != ERR_INVALID)
			fail_msg("'%s' was taken", bad[i]);
		valscan_free(&w);
	}
	valscan_init(&w);
	assert_int_equal(valscan_decode(&w, "A 3132333435363738\nB 12\n", 24, &e), ERR_INVALID);
	assert_non_null(strstr(e.msg, "line 2"));
	valscan_free(&w);
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_percent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base64_every_alignment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_in_the_bytes, setup, teardown),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_hand_over),
	};
	return cmocka_run_group_tests_name("valscan", tests, NULL, NULL);
}
