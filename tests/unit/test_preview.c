/* test_preview.c: previews' ids, hosts, URLs and the addresses nginx may be told. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/preview.h"
#include "sandboxd/common/banned.h"

#define ID "abcdefghijklmnopqrstuvwxyz"
#define ID2 "234567abcdefghijklmnopqrst"

static void test_id_new(void **state)
{
	char a[PREVIEW_ID_LEN + 1], b[PREVIEW_ID_LEN + 1];

	assert_int_equal(preview_id_new(a), 0);
	assert_int_equal(preview_id_new(b), 0);
	assert_int_equal(strlen(a), PREVIEW_ID_LEN);
	assert_true(preview_id_valid(a));
	assert_true(preview_id_valid(b));
	assert_string_not_equal(a, b);
}

static void test_id_valid(void **state)
{
	assert_true(preview_id_valid(ID));
	assert_true(preview_id_valid(ID2));
	assert_false(preview_id_valid(""));
	assert_false(preview_id_valid(ID "a"));
	assert_false(preview_id_valid("abcdefghijklmnopqrstuvwxy"));
	assert_false(preview_id_valid("Abcdefghijklmnopqrstuvwxyz"));
	assert_false(preview_id_valid("0bcdefghijklmnopqrstuvwxyz"));   /* 0, 1, 8, 9: not base32 */
	assert_false(preview_id_valid("abcdefghijklmnopqrstuvwxy8"));
	assert_false(preview_id_valid("abcdefghijklm.opqrstuvwxyz"));
}

static void test_host_id(void **state)
{
	char id[PREVIEW_ID_LEN + 1];

	assert_int_equal(preview_host_id(ID ".preview.localhost", "preview.localhost", id), 0);
	assert_string_equal(id, ID);
	assert_int_equal(preview_host_id(ID2 ".preview.localhost:8080", "preview.localhost", id), 0);
	assert_string_equal(id, ID2);
	assert_int_equal(preview_host_id("ABCDEFGHIJKLMNOPQRSTUVWXYZ.Preview.LOCALHOST.", "preview.localhost",
					 id), 0);
	assert_string_equal(id, ID);

	static const char *const bad[] = {
		"preview.localhost", ID, ID ".preview.localhost.evil", "x" ID ".preview.localhost",
		"a." ID ".preview.localhost", ID ".previewXlocalhost", ID "xpreview.localhost",
		ID ".preview.localhost:", ID ".preview.localhost:80x", ID ".other.localhost",
		"abcdefghijklmnopqrstuvwxy1.preview.localhost", "", ":80",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(id, 'q', sizeof(id));
		if (preview_host_id(bad[i], "preview.localhost", id) != ERR_NOTFOUND)
			fail_msg("host '%s' accepted", bad[i]);
		assert_string_equal(id, "");
	}
}

static void test_url(void **state)
{
	char url[256];

	assert_int_equal(preview_url("http://127.0.0.1:8080", "preview.localhost", ID, url,
				     sizeof(url)), 0);
	assert_string_equal(url, "http://" ID ".preview.localhost:8080/");
	assert_int_equal(preview_url("https://git.example.com", "p.example.com", ID, url,
				     sizeof(url)), 0);
	assert_string_equal(url, "https://" ID ".p.example.com/");
	assert_int_equal(preview_url("https://git.example.com:8443/sub/path", "p.example.com", ID,
				     url, sizeof(url)), 0);
	assert_string_equal(url, "https://" ID ".p.example.com:8443/");
	assert_int_equal(preview_url("http://[::1]:9000", "preview.localhost", ID, url, sizeof(url)), 0);
	assert_string_equal(url, "http://" ID ".preview.localhost:9000/");
	assert_int_equal(preview_url("http://[::1]", "preview.localhost", ID, url, sizeof(url)), 0);
	assert_string_equal(url, "http://" ID ".preview.localhost/");
	assert_int_equal(preview_url("127.0.0.1", "preview.localhost", ID, url, sizeof(url)),
			 ERR_INVALID);
	assert_int_equal(preview_url("http://127.0.0.1:8080", "preview.localhost", ID, url, 40),
			 ERR_TOOBIG);
	assert_string_equal(url, "");
}

static void test_addr_ok(void **state)
{
	assert_true(preview_addr_ok("172.18.0.5"));
	assert_true(preview_addr_ok("10.0.0.1"));
	static const char *const bad[] = { "", "172.18.0.5:80", "172.18.0.05", "localhost",
					   "::1", "172.18.0", "1.2.3.4 ", "1.2.3.4/32",
					   "256.1.1.1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (preview_addr_ok(bad[i]))
			fail_msg("address '%s' accepted", bad[i]);
	assert_false(preview_addr_ok(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id_new),
		cmocka_unit_test(test_id_valid),
		cmocka_unit_test(test_host_id),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_addr_ok),
	};

	return cmocka_run_group_tests_name("preview", tests, NULL, NULL);
}
