/* test_engine_list.c: engine names, URLs and SANDBOXD_DOCKER_HOSTS (engine_list.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/proto/engine_list.h"
#include "sandboxd/common/banned.h"

static void test_names(void **state)
{
	char longest[ENGINE_NAME_MAX + 2];

	assert_true(engine_name_valid("a"));
	assert_true(engine_name_valid("host-1.docker_b"));
	assert_true(engine_name_valid("9lives"));
	assert_false(engine_name_valid(""));
	assert_false(engine_name_valid("-a"));
	assert_false(engine_name_valid(".a"));
	assert_false(engine_name_valid("A"));
	assert_false(engine_name_valid("a b"));
	assert_false(engine_name_valid("a/b"));
	assert_false(engine_name_valid("a=b"));
	memset(longest, 'a', sizeof(longest));
	longest[ENGINE_NAME_MAX] = 0;
	assert_true(engine_name_valid(longest));
	longest[ENGINE_NAME_MAX] = 'a';
	longest[ENGINE_NAME_MAX + 1] = 0;
	assert_false(engine_name_valid(longest));
}

static void test_urls(void **state)
{
	char sock[120] = "unix:///";

	assert_true(engine_url_valid("unix:///run/docker.sock"));
	assert_true(engine_url_valid("tcp://127.0.0.1:2376"));
	assert_true(engine_url_valid("https://docker-b.example:2376"));
	assert_true(engine_url_valid("tcp://[::1]:2376"));
	assert_false(engine_url_valid("tcp://127.0.0.1"));          /* no port */
	assert_false(engine_url_valid("tcp://127.0.0.1:0"));
	assert_false(engine_url_valid("tcp://127.0.0.1:65536"));
	assert_false(engine_url_valid("tcp://127.0.0.1:23x"));
	assert_false(engine_url_valid("tcp://:2376"));
	assert_false(engine_url_valid("tcp://h:2376/v1.41"));        /* no path */
	assert_false(engine_url_valid("https://h@evil:2376"));       /* no userinfo */
	assert_false(engine_url_valid("http://h:2375"));
	assert_false(engine_url_valid("unix://relative.sock"));
	assert_false(engine_url_valid("unix:///a b.sock"));
	memset(sock + 8, 'a', 100);
	sock[108] = 0;                                               /* a 101-byte path */
	assert_true(engine_url_valid(sock));
	memset(sock + 8, 'a', 108);
	sock[116] = 0;                                               /* 109: past sun_path */
	assert_false(engine_url_valid(sock));
}

static void test_list(void **state)
{
	const char *list = " b=tcp://10.0.0.2:2376 ,c=unix:///run/c.sock,, ";
	char name[ENGINE_NAME_MAX + 1], url[ENGINE_URL_MAX + 1];
	struct err e;
	size_t pos = 0;

	assert_int_equal(engine_list_next(list, &pos, name, url, &e), 1);
	assert_string_equal(name, "b");
	assert_string_equal(url, "tcp://10.0.0.2:2376");
	assert_int_equal(engine_list_next(list, &pos, name, url, &e), 1);
	assert_string_equal(name, "c");
	assert_string_equal(url, "unix:///run/c.sock");
	assert_int_equal(engine_list_next(list, &pos, name, url, &e), 0);
	assert_int_equal(engine_list_next(list, &pos, name, url, &e), 0);
	pos = 0;
	assert_int_equal(engine_list_next("", &pos, name, url, &e), 0);
	pos = 0;
	assert_int_equal(engine_list_next("=tcp://h:1", &pos, name, url, &e), -1);
	assert_string_equal(e.msg, "SANDBOXD_DOCKER_HOSTS: '=tcp://h:1' is not name=url");
	assert_int_equal(engine_list_check("b=tcp://h:1,c=tcp://h:2", "a", 1, 0, &e), 0);
	assert_int_equal(engine_list_check("", "a", 1, 0, &e), 0);
	assert_int_equal(engine_list_check("b=tcp://h:1,b=tcp://h:2", "a", 1, 0, &e), ERR_INVALID);
	assert_string_equal(e.msg, "SANDBOXD_DOCKER_HOSTS: the engine name b is used twice");
	assert_int_equal(engine_list_check("a=tcp://h:1", "a", 1, 0, &e), ERR_INVALID);
	assert_int_equal(engine_list_check("b=https://h:1", "a", 1, 0, &e), 0);
	assert_int_equal(engine_list_check("b=https://h:1", "a", 0, 0, &e), ERR_INVALID);
	/* Plain tcp:// (no TLS files): root on the engine's machine for whoever reaches it. */
	assert_int_equal(engine_list_check("b=unix:///run/b.sock,c=tcp://h:2", "a", 0, 0, &e),
			 ERR_INVALID);
	assert_string_equal(e.msg, "SANDBOXD_DOCKER_HOSTS: engine c is plain tcp:// (whoever "
			    "reaches it is root on its machine): set SANDBOXD_DOCKER_CA, "
			    "SANDBOXD_DOCKER_CERT and SANDBOXD_DOCKER_KEY, or SANDBOXD_DOCKER_INSECURE=1");
	assert_int_equal(engine_list_check("b=unix:///run/b.sock,c=tcp://h:2", "a", 0, 1, &e), 0);
	assert_int_equal(engine_list_check("b=unix:///run/b.sock", "a", 0, 0, &e), 0);
	assert_int_equal(engine_url_plain_tcp("tcp://h:2"), 1);
	assert_int_equal(engine_url_plain_tcp("https://h:2"), 0);
}

/* More entries than a host registers is refused, not cut. */
static void test_too_many(void **state)
{
	char list[ENGINE_LIST_MAX * 24 + 32] = "";
	struct err e;
	size_t o = 0;

	for (int i = 0; i < ENGINE_LIST_MAX; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "e%d=tcp://h:%d,", i, 1000 + i);
	assert_int_equal(engine_list_check(list, "own", 1, 0, &e), 0);
	snprintf(list + o, sizeof(list) - o, "x=tcp://h:1");
	assert_int_equal(engine_list_check(list, "own", 1, 0, &e), ERR_INVALID);
	assert_string_equal(e.msg, "SANDBOXD_DOCKER_HOSTS: at most 32 engines");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_too_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
