/* test_lfs.c: the Git LFS batch request's checks and the objects' layout. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/lfs.h"
#include "sandboxd/common/banned.h"

#define OID "01cb02b407b683f08b52272d05aa39ee05c1b954f655b2ffa714c066b76929ec"
static struct lfs_batch b;

static int parse(const char *text, struct err *e)
{
	json_object *o = NULL;
	int rc = json_parse_object(text, strlen(text), &o, e);

	if (!rc)
		rc = lfs_batch_parse(o, &b, e);
	json_object_put(o);
	return rc;
}

static void test_good(void **state)
{
	struct err e = { .msg = "" };

	assert_int_equal(parse("{\"operation\":\"upload\",\"transfers\":[\"lfs-standalone-file\","
			       "\"basic\"],\"hash_algo\":\"sha256\",\"ref\":{\"name\":\"refs/heads/main\"},"
			       "\"objects\":[{\"oid\":\"" OID "\",\"size\":3},{\"oid\":\"" OID "\",\"size\":0}]}",
			       &e), 0);
	assert_true(b.upload && b.n == 2 && b.objects[0].size == 3 && b.objects[1].size == 0);
	assert_string_equal(b.objects[0].oid, OID);
	assert_int_equal(parse("{\"operation\":\"download\",\"objects\":[{\"oid\":\"" OID "\",\"size\":1}]}", &e), 0);
	assert_false(b.upload);
}

static void bad(const char *text, const char *why)
{
	struct err e = { .msg = "" };

	assert_int_equal(parse(text, &e), ERR_INVALID);
	assert_string_equal(e.msg, why);
}

static void test_bad(void **state)
{
	bad("{\"objects\":[]}", "field 'operation' must be \"download\" or \"upload\"");
	bad("{\"operation\":\"delete\",\"objects\":[]}", "field 'operation' must be \"download\" or \"upload\"");
	bad("{\"operation\":\"upload\",\"objects\":[]}", "field 'objects' must be an array of 1 to 1000 objects");
	bad("{\"operation\":\"upload\",\"objects\":[{\"oid\":\"" OID "0\",\"size\":1}]}",
	    "objects[0]: 'oid' must be 64 lower-case hex digits");
	bad("{\"operation\":\"upload\",\"objects\":[{\"oid\":\"01CB02b407b683f08b52272d05aa39ee05c1b954f655b2ffa714c066b76929ec\",\"size\":1}]}",
	    "objects[0]: 'oid' must be 64 lower-case hex digits");
	bad("{\"operation\":\"upload\",\"objects\":[{\"oid\":\"" OID "\",\"size\":-1}]}",
	    "objects[0]: 'size' must be a byte count");
	bad("{\"operation\":\"upload\",\"objects\":[{\"oid\":\"" OID "\",\"size\":\"1\"}]}",
	    "objects[0]: 'size' must be a byte count");
	bad("{\"operation\":\"upload\",\"transfers\":[\"ssh\"],\"objects\":[{\"oid\":\"" OID "\",\"size\":1}]}",
	    "field 'transfers' must offer \"basic\"");
	bad("{\"operation\":\"upload\",\"hash_algo\":\"sha512\",\"objects\":[{\"oid\":\"" OID "\",\"size\":1}]}",
	    "field 'hash_algo' must be \"sha256\"");
}

static void test_path(void **state)
{
	char p[200], small[20];

	assert_int_equal(lfs_object_path(p, sizeof(p), "/r/o/n.git", OID), 0);
	assert_string_equal(p, "/r/o/n.git/lfs/objects/01/cb/" OID);
	assert_int_equal(lfs_object_path(small, sizeof(small), "/r/o/n.git", OID), ERR_TOOBIG);
	assert_true(lfs_oid_valid(OID));
	assert_false(lfs_oid_valid(OID "0"));
	assert_false(lfs_oid_valid("../../etc/passwd"));
	assert_false(lfs_oid_valid(""));
}

/* Pointer files: the oid of a real one; nothing from what only looks like one. */
static void test_pointer(void **state)
{
	char oid[LFS_OID_LEN + 1];
	const char *p = "version https://git-lfs.github.com/spec/v1\noid sha256:" OID "\nsize 12\n";
	char big[LFS_POINTER_MAX + 10];

	(void)state;
	assert_int_equal(lfs_pointer_oid(p, strlen(p), oid), 1);
	assert_string_equal(oid, OID);
	/* The last line without its line feed. */
	assert_int_equal(lfs_pointer_oid(p, strlen(p) - strlen("\nsize 12\n"), oid), 1);
	assert_string_equal(oid, OID);
	/* Not a pointer: no version line first, upper-case or short digits, too long. */
	p = "oid sha256:" OID "\n";
	assert_int_equal(lfs_pointer_oid(p, strlen(p), oid), 0);
	assert_string_equal(oid, "");
	p = "version https://git-lfs.github.com/spec/v1\noid sha256:01CB02b407b683f08b52272d05aa39ee05c1b954f655b2ffa714c066b76929ec\n";
	assert_int_equal(lfs_pointer_oid(p, strlen(p), oid), 0);
	p = "version https://git-lfs.github.com/spec/v1\noid sha256:01cb\n";
	assert_int_equal(lfs_pointer_oid(p, strlen(p), oid), 0);
	memset(big, '\n', sizeof(big));
	p = "version https://git-lfs.github.com/spec/v1\noid sha256:" OID "\n";
	memcpy(big, p, strlen(p));
	assert_int_equal(lfs_pointer_oid(big, sizeof(big), oid), 0);
	assert_int_equal(lfs_pointer_oid(big, LFS_POINTER_MAX - 1, oid), 1);
	assert_int_equal(lfs_pointer_oid("", 0, oid), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pointer),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_path),
	};

	return cmocka_run_group_tests_name("lfs", tests, NULL, NULL);
}
