/* test_hostaddr.c: which address the sandboxes' git endpoint is, and whether it is this
 * host's (getifaddrs on the machine that runs the tests: loopback is always there, the
 * TEST-NET-1 192.0.2.1 of RFC 5737 never is). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/core/config.h"
#include "sandboxd/common/err.h"
#include "sandboxd/engine/hostaddr.h"
#include "sandboxd/common/banned.h"

static void cfg_with(struct config *c, const char *url, const char *addr)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->sandbox_git_url, sizeof(c->sandbox_git_url), "%s", url);
	snprintf(c->sandbox_git_addr, sizeof(c->sandbox_git_addr), "%s", addr);
}

static void addr_is(const char *url, const char *setting, const char *want, const char *host)
{
	struct config c;
	struct err e = { .msg = "" };
	char out[HOSTADDR_MAX], h[256];

	cfg_with(&c, url, setting);
	assert_int_equal(hostaddr_git_addr(&c, out, h, sizeof(h), &e), 0);
	assert_string_equal(out, want);
	assert_string_equal(h, host);
}

static void test_git_addr(void **state)
{
	struct config c;
	struct err e = { .msg = "" };
	char out[HOSTADDR_MAX];

	(void)state;
	addr_is("http://sandboxd.internal", "", HOSTADDR_DOCKER_GATEWAY, "sandboxd.internal");
	addr_is("http://sandboxd.internal:8080/git", "", "172.17.0.1", "sandboxd.internal");
	addr_is("http://SANDBOXD.INTERNAL:8080", "", "172.17.0.1", "SANDBOXD.INTERNAL");
	/* The setting wins over the default; a literal needs no setting. */
	addr_is("http://sandboxd.internal:8080", "10.201.7.1", "10.201.7.1", "sandboxd.internal");
	addr_is("http://10.9.8.7:81", "", "10.9.8.7", "10.9.8.7");
	addr_is("https://u:p@10.9.8.7/x", "", "10.9.8.7", "10.9.8.7");
	addr_is("http://[fd00::1]:8080/", "", "fd00::1", "fd00::1");
	cfg_with(&c, "http:///x", "");
	assert_int_equal(hostaddr_git_addr(&c, out, NULL, 0, &e), ERR_INVALID);
	cfg_with(&c, "http://[fd00::1", "");
	assert_int_equal(hostaddr_git_addr(&c, out, NULL, 0, &e), ERR_INVALID);
	/* Other names go to getaddrinfo: not tried here, a unit test sends no DNS query. */
}

static void test_is_local(void **state)
{
	struct err e = { .msg = "" };

	(void)state;
	assert_int_equal(hostaddr_is_local("127.0.0.1", &e), 0);
	assert_int_equal(hostaddr_is_local("192.0.2.1", &e), ERR_NOTFOUND);
	assert_string_equal(e.msg, "192.0.2.1 is not an address of this host");
	assert_int_equal(hostaddr_is_local("127.0.0.2", &e), ERR_NOTFOUND); /* routed, not assigned */
	assert_int_equal(hostaddr_is_local("sandboxd.internal", &e), ERR_INVALID);
	assert_int_equal(hostaddr_is_local("", &e), ERR_INVALID);
}

static void test_check(void **state)
{
	struct config c;
	struct err e = { .msg = "" };

	(void)state;
	cfg_with(&c, "http://sandboxd.internal:8080", "127.0.0.1");
	assert_int_equal(hostaddr_check(&c, &e), 0);
	cfg_with(&c, "http://sandboxd.internal:8080", "192.0.2.1");
	assert_int_equal(hostaddr_check(&c, &e), ERR_NOTFOUND);
	assert_string_equal(e.msg, "the sandboxes' git endpoint sandboxd.internal (192.0.2.1) is not "
				   "an address of this host");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_git_addr),
		cmocka_unit_test(test_is_local),
		cmocka_unit_test(test_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
