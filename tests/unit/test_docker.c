/* test_docker.c: the Docker client's request building that needs no engine (the rest is
 * tests/docker/docker_smoke.c against the real one). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

static void pull_path_is(const char *image, const char *want)
{
	struct buf b;
	struct err e = { .msg = "" };

	buf_init(&b, 4096);
	if (docker_image_pull_path(image, &b, &e))
		fail_msg("'%s' refused: %s", image, e.msg);
	assert_string_equal(b.data, want);
	buf_release(&b);
}

static void pull_path_refused(const char *image)
{
	struct buf b;
	struct err e = { .msg = "" };

	buf_init(&b, 4096);
	assert_int_equal(docker_image_pull_path(image, &b, &e), ERR_INVALID);
	assert_true(strlen(e.msg) > 0);
	buf_release(&b);
}

static void isolation_is(const char *info, const char *want)
{
	char got[8] = "x";

	assert_int_equal(docker_info_parse_isolation(info, got, sizeof(got)), 0);
	assert_string_equal(got, want);
}

/* /info's SecurityOptions and DefaultRuntime (Docker 20.10's shapes). */
static void test_info_isolation(void **state)
{
	char got[8];

	(void)state;
	isolation_is("{\"SecurityOptions\":[\"name=seccomp,profile=default\",\"name=userns\"],"
		     "\"DefaultRuntime\":\"runc\"}", "userns");
	isolation_is("{\"SecurityOptions\":[\"name=userns,foo=bar\"]}", "userns");
	isolation_is("{\"SecurityOptions\":[\"name=seccomp,profile=default\"],"
		     "\"DefaultRuntime\":\"runsc\"}", "runsc");
	isolation_is("{\"SecurityOptions\":[\"name=seccomp,profile=default\"],"
		     "\"DefaultRuntime\":\"runc\"}", "");
	/* near misses are not the thing */
	isolation_is("{\"SecurityOptions\":[\"name=usernsx\",\"userns\",1,null],"
		     "\"DefaultRuntime\":\"runsc-debug\"}", "");
	isolation_is("{\"SecurityOptions\":\"name=userns\",\"DefaultRuntime\":7}", "");
	isolation_is("{}", "");
	assert_int_equal(docker_info_parse_isolation("[]", got, sizeof(got)), ERR_FAIL);
	assert_int_equal(docker_info_parse_isolation("not json", got, sizeof(got)), ERR_FAIL);
	assert_string_equal(got, "");
}

/* /info's Runtimes and DefaultRuntime (Docker 20.10's shapes): what a gVisor create asks
 * before it makes anything (isolation.h). */
static void test_info_runtimes(void **state)
{
	struct docker_runtimes rt;

	(void)state;
	assert_int_equal(docker_info_parse_runtimes(
		"{\"Runtimes\":{\"io.containerd.runc.v2\":{\"path\":\"runc\"},\"runc\":"
		"{\"path\":\"runc\"},\"runsc\":{\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":"
		"[\"--platform=ptrace\"]}},\"DefaultRuntime\":\"runc\"}", "runsc", &rt), 0);
	assert_true(rt.listed);
	assert_true(rt.has);
	assert_string_equal(rt.deflt, "runc");
	/* listed, but not the one asked: a near name is not it */
	assert_int_equal(docker_info_parse_runtimes(
		"{\"Runtimes\":{\"runc\":{\"path\":\"runc\"},\"runsc-debug\":{}},"
		"\"DefaultRuntime\":\"runc\"}", "runsc", &rt), 0);
	assert_true(rt.listed);
	assert_false(rt.has);
	/* an engine that names no runtimes (older than 1.12) lists none */
	assert_int_equal(docker_info_parse_runtimes("{\"DefaultRuntime\":\"runc\"}", "runsc", &rt), 0);
	assert_false(rt.listed);
	assert_false(rt.has);
	/* odd shapes: a runtime that is not an object, Runtimes that is not one, no want */
	assert_int_equal(docker_info_parse_runtimes("{\"Runtimes\":{\"runsc\":\"x\"}}", "runsc",
						    &rt), 0);
	assert_true(rt.listed);
	assert_false(rt.has);
	assert_int_equal(docker_info_parse_runtimes("{\"Runtimes\":[\"runsc\"],"
						    "\"DefaultRuntime\":7}", "runsc", &rt), 0);
	assert_false(rt.listed);
	assert_string_equal(rt.deflt, "");
	assert_int_equal(docker_info_parse_runtimes("{\"Runtimes\":{\"runsc\":{}}}", NULL, &rt), 0);
	assert_true(rt.listed);
	assert_false(rt.has);
	assert_int_equal(docker_info_parse_runtimes("{\"Runtimes\":{\"\":{}}}", "", &rt), 0);
	assert_false(rt.has);
	/* a default runtime's name longer than any Docker runtime's is not kept */
	char big[200];
	snprintf(big, sizeof(big), "{\"DefaultRuntime\":\"%0100d\"}", 0);
	assert_int_equal(docker_info_parse_runtimes(big, "runsc", &rt), 0);
	assert_string_equal(rt.deflt, "");
	assert_int_equal(docker_info_parse_runtimes("[]", "runsc", &rt), ERR_FAIL);
	assert_int_equal(docker_info_parse_runtimes("not json", "runsc", &rt), ERR_FAIL);
	assert_int_equal(docker_info_parse_runtimes(NULL, "runsc", &rt), ERR_FAIL);
	assert_false(rt.listed || rt.has || rt.deflt[0]);
}

static void test_image_pull_path(void **state)
{
	/* never an empty tag: Docker would pull every tag of the name */
	pull_path_is("debian", "/images/create?fromImage=debian&tag=latest");
	pull_path_is("sandboxd-runner:bookworm", "/images/create?fromImage=sandboxd-runner&tag=bookworm");
	pull_path_is("library/debian:12", "/images/create?fromImage=library%2Fdebian&tag=12");
	/* a registry's port is not a tag */
	pull_path_is("localhost:5000/team/runner",
		     "/images/create?fromImage=localhost%3A5000%2Fteam%2Frunner&tag=latest");
	pull_path_is("localhost:1/sandboxd-missing:none",
		     "/images/create?fromImage=localhost%3A1%2Fsandboxd-missing&tag=none");
	/* a digest is the tag; a tag beside it is dropped (Docker uses the digest) */
	pull_path_is("debian@sha256:0123abcd", "/images/create?fromImage=debian&tag=sha256%3A0123abcd");
	pull_path_is("reg.example:443/debian:12@sha256:ab",
		     "/images/create?fromImage=reg.example%3A443%2Fdebian&tag=sha256%3Aab");
}

static void test_image_pull_path_refusals(void **state)
{
	char longname[300];

	pull_path_refused("");
	pull_path_refused(NULL);
	pull_path_refused("debian:");
	pull_path_refused(":tag");
	pull_path_refused("debian@");
	pull_path_refused("team/");
	pull_path_refused("deb ian");
	pull_path_refused("debian&tag=x");
	pull_path_refused("debian?x");
	pull_path_refused("debian:a@b/c");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	pull_path_refused(longname);
}

/* The name goes into the path as it is: anything that could end the path or start a query
 * is refused before any request. */
static void test_image_inspect_refusals(void **state)
{
	static const char *const bad[] = { "", "deb ian", "debian?x=1", "debian#x", "a%2Fb",
					   "debian/../../containers/x", "a\nb", "/containers/x",
					   "a//b" };
	char value[16];
	int64_t size = 7;
	struct err e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&e, 0, sizeof(e));
		assert_int_equal(docker_image_inspect(bad[i], "l", &size, value, sizeof(value), 1000,
						      &e), ERR_INVALID);
		assert_non_null(strstr(e.msg, "is not an image reference"));
		assert_int_equal(size, 0);
	}
}

/* The engine's words for a storage that cannot limit a container's size, as moby writes
 * them (overlay2 elsewhere than XFS with pquota; other drivers), told apart from others. */
static void test_storage_refused(void **state)
{
	struct err e = { .msg = "" };

	(void)state;
	err_set(&e, ERR_FAIL, "docker create container: --storage-opt is supported only for "
		"overlay over xfs with 'pquota' mount option (500)");
	assert_true(docker_storage_refused(&e));
	err_set(&e, ERR_FAIL, "docker create container: --storage-opt is not supported for vfs (500)");
	assert_true(docker_storage_refused(&e));
	err_set(&e, ERR_NOIMAGE, "docker create container: No such image: x (404)");
	assert_false(docker_storage_refused(&e));
	err_set(&e, ERR_INVALID, "docker create container: invalid storage option (400)");
	assert_false(docker_storage_refused(&e));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info_isolation),
		cmocka_unit_test(test_info_runtimes),
		cmocka_unit_test(test_image_pull_path),
		cmocka_unit_test(test_image_pull_path_refusals),
		cmocka_unit_test(test_image_inspect_refusals),
		cmocka_unit_test(test_storage_refused),
	};

	return cmocka_run_group_tests_name("docker", tests, NULL, NULL);
}
