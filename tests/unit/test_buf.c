/* test_buf.c: bounded buffers keep their invariants and their maximum. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <cmocka.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

/* buf.h: data is NULL or holds len + 1 bytes with data[len] == 0; len <= max. */
static void invariants(const struct buf *b)
{
	assert_true(b->len <= b->max);
	if (!b->data) {
		assert_int_equal(b->len, 0);
		return;
	}
	assert_true(b->cap >= b->len + 1);
	assert_int_equal(b->data[b->len], 0);
}

static void test_init(void **state)
{
	struct buf b;

	memset(&b, 0x5a, sizeof(b));
	buf_init(&b, 100);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.max, 100);
	invariants(&b);
	buf_release(&b);
}

static void test_append(void **state)
{
	struct buf b;

	buf_init(&b, 100);
	assert_int_equal(buf_append(&b, "abc", 3), 0);
	invariants(&b);
	assert_int_equal(b.len, 3);
	assert_string_equal(b.data, "abc");
	assert_int_equal(buf_puts(&b, "def"), 0);
	assert_string_equal(b.data, "abcdef");
	/* binary data, NULs included */
	assert_int_equal(buf_append(&b, "x\0y", 3), 0);
	assert_int_equal(b.len, 9);
	assert_memory_equal(b.data, "abcdefx\0y", 10);
	invariants(&b);
	buf_release(&b);
}

static void test_append_nothing(void **state)
{
	struct buf b;

	buf_init(&b, 10);
	assert_int_equal(buf_append(&b, "", 0), 0);
	assert_int_equal(b.len, 0);
	invariants(&b);
	assert_int_equal(buf_puts(&b, ""), 0);
	invariants(&b);
	buf_release(&b);
}

static void test_max_exact_and_past(void **state)
{
	struct buf b;
	char *before;

	buf_init(&b, 10);
	assert_int_equal(buf_append(&b, "0123456789", 10), 0);
	invariants(&b);
	assert_string_equal(b.data, "0123456789");
	before = b.data;
	/* one byte more: refused, nothing changed */
	assert_int_equal(buf_append(&b, "x", 1), ERR_TOOBIG);
	assert_ptr_equal(b.data, before);
	assert_int_equal(b.len, 10);
	assert_string_equal(b.data, "0123456789");
	invariants(&b);
	assert_int_equal(buf_puts(&b, "x"), ERR_TOOBIG);
	assert_int_equal(buf_printf(&b, "%d", 1), ERR_TOOBIG);
	assert_string_equal(b.data, "0123456789");
	/* nothing is still fine */
	assert_int_equal(buf_append(&b, "", 0), 0);
	assert_int_equal(buf_printf(&b, "%s", ""), 0);
	assert_int_equal(b.len, 10);
	invariants(&b);
	buf_release(&b);
}

static void test_too_big_is_all_or_nothing(void **state)
{
	struct buf b;

	buf_init(&b, 8);
	assert_int_equal(buf_puts(&b, "abcde"), 0);
	/* 4 more would be 9 > 8: all or nothing */
	assert_int_equal(buf_append(&b, "wxyz", 4), ERR_TOOBIG);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.data, "abcde");
	assert_int_equal(buf_printf(&b, "%s", "wxyz"), ERR_TOOBIG);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.data, "abcde");
	assert_int_equal(buf_append(&b, "xyz", 3), 0);
	assert_string_equal(b.data, "abcdexyz");
	invariants(&b);
	buf_release(&b);
}

static void test_huge_n_refused(void **state)
{
	struct buf b;

	buf_init(&b, 1000);
	assert_int_equal(buf_puts(&b, "ab"), 0);
	/* lengths that would wrap len + n: refused before anything is read */
	assert_int_equal(buf_append(&b, "x", SIZE_MAX), ERR_TOOBIG);
	assert_int_equal(buf_append(&b, "x", SIZE_MAX - 1), ERR_TOOBIG);
	assert_int_equal(buf_append(&b, "x", 999), ERR_TOOBIG);
	assert_int_equal(b.len, 2);
	assert_string_equal(b.data, "ab");
	buf_release(&b);
}

static void test_max_zero(void **state)
{
	struct buf b;

	buf_init(&b, 0);
	assert_int_equal(buf_append(&b, "x", 1), ERR_TOOBIG);
	assert_int_equal(b.len, 0);
	invariants(&b);
	assert_int_equal(buf_append(&b, "", 0), 0);
	invariants(&b);
	buf_release(&b);
}

static void test_unbounded_max(void **state)
{
	/* SIZE_MAX as the maximum: the buffer must still grow to hold what is appended */
	struct buf b;
	size_t cap, len;
	int rc, holds;

	buf_init(&b, SIZE_MAX);
	rc = buf_puts(&b, "hello");
	cap = b.cap;
	len = b.len;
	holds = b.data && strcmp(b.data, "hello") == 0;
	buf_release(&b);             /* before any assertion, so a failure leaks nothing */
	assert_int_equal(rc, 0);
	assert_true(holds);
	/* buf.h: data holds len + 1 bytes */
	if (cap < len + 1)
		fail_msg("buffer holds %zu bytes for len %zu (max SIZE_MAX)", cap, len);
}

static void test_growth_keeps_content(void **state)
{
	struct buf b;
	char want[5000];

	buf_init(&b, sizeof(want) - 1);
	for (size_t i = 0; i < sizeof(want) - 1; i++) {
		char c = (char)('a' + i % 26);
		want[i] = c;
		assert_int_equal(buf_append(&b, &c, 1), 0);
		invariants(&b);
	}
	want[sizeof(want) - 1] = 0;
	assert_int_equal(b.len, sizeof(want) - 1);
	assert_string_equal(b.data, want);
	assert_true(b.cap <= b.max + 1);
	assert_int_equal(buf_append(&b, "x", 1), ERR_TOOBIG);
	buf_release(&b);
}

static void test_printf(void **state)
{
	struct buf b;
	char big[1000];

	buf_init(&b, 2000);
	assert_int_equal(buf_printf(&b, "%s=%d", "n", 42), 0);
	assert_string_equal(b.data, "n=42");
	assert_int_equal(buf_printf(&b, ",%05.1f,%c", 2.5, 'z'), 0);
	assert_string_equal(b.data, "n=42,002.5,z");
	invariants(&b);
	/* an argument longer than the first allocation */
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	assert_int_equal(buf_printf(&b, "[%s]", big), 0);
	assert_int_equal(b.len, 12 + 2 + 999);
	assert_int_equal(b.data[12], '[');
	assert_int_equal(b.data[b.len - 1], ']');
	invariants(&b);
	/* exactly to the maximum */
	buf_clear(&b);
	assert_int_equal(buf_printf(&b, "%0*d", 2000, 7), 0);
	assert_int_equal(b.len, 2000);
	invariants(&b);
	buf_release(&b);
}

static void test_printf_error(void **state)
{
	/* a wide character the C locale cannot convert: vsnprintf fails, the buffer stays */
	struct buf b;
	static const wchar_t w[] = { 0x263a, 0 };

	buf_init(&b, 100);
	assert_int_equal(buf_puts(&b, "keep"), 0);
	assert_int_equal(buf_printf(&b, "%ls", w), ERR_FAIL);
	assert_int_equal(b.len, 4);
	assert_string_equal(b.data, "keep");
	invariants(&b);
	buf_release(&b);
}

static void test_clear(void **state)
{
	struct buf b;
	char *mem;

	buf_init(&b, 100);
	buf_clear(&b);               /* fine on a buffer that holds nothing */
	invariants(&b);
	assert_int_equal(buf_puts(&b, "hello"), 0);
	mem = b.data;
	buf_clear(&b);
	assert_int_equal(b.len, 0);
	assert_ptr_equal(b.data, mem);   /* memory kept */
	assert_string_equal(b.data, "");
	invariants(&b);
	assert_int_equal(buf_puts(&b, "hi"), 0);
	assert_string_equal(b.data, "hi");
	buf_release(&b);
}

static void test_release_and_reuse(void **state)
{
	struct buf b;

	buf_init(&b, 16);
	buf_release(&b);             /* fine before any allocation */
	assert_int_equal(buf_puts(&b, "one"), 0);
	buf_release(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.max, 16);
	assert_int_equal(buf_puts(&b, "two"), 0);
	assert_string_equal(b.data, "two");
	assert_int_equal(buf_append(&b, "0123456789abcdef", 16), ERR_TOOBIG);
	buf_release(&b);
	buf_release(&b);             /* twice is fine */
}

static void test_detach(void **state)
{
	struct buf b;
	size_t len = 99;
	char *p;

	buf_init(&b, 100);
	/* nothing yet */
	p = buf_detach(&b, &len);
	assert_int_equal(len, 0);
	if (p)
		assert_string_equal(p, "");
	free(p);

	assert_int_equal(buf_append(&b, "a\0b", 3), 0);
	p = buf_detach(&b, &len);
	assert_non_null(p);
	assert_int_equal(len, 3);
	assert_memory_equal(p, "a\0b", 4);
	/* the buffer is empty and usable, with the same maximum */
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.max, 100);
	assert_int_equal(buf_puts(&b, "again"), 0);
	assert_string_equal(b.data, "again");
	assert_string_equal(p + 2, "b");
	free(p);

	p = buf_detach(&b, NULL);    /* len may be NULL */
	assert_string_equal(p, "again");
	free(p);
	buf_release(&b);
}

static void test_reserve_exact(void **state)
{
	struct buf b;

	buf_init(&b, 10);
	assert_int_equal(buf_reserve(&b, 11), ERR_TOOBIG);
	assert_null(b.data);
	assert_int_equal(buf_reserve(&b, 4), 0);
	assert_int_equal(b.cap, 5);          /* exactly: 4 bytes and the NUL */
	assert_string_equal(b.data, "");
	memcpy(b.data, "abcd", 4);
	buf_advance(&b, 4);
	assert_int_equal(b.len, 4);
	assert_string_equal(b.data, "abcd");
	assert_int_equal(buf_reserve(&b, 0), 0);
	assert_int_equal(b.cap, 5);          /* already room: nothing allocated */
	assert_int_equal(buf_reserve(&b, 7), ERR_TOOBIG);
	assert_int_equal(buf_reserve(&b, 6), 0);
	assert_int_equal(b.cap, 11);
	assert_string_equal(b.data, "abcd"); /* kept */
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_append_nothing),
		cmocka_unit_test(test_max_exact_and_past),
		cmocka_unit_test(test_too_big_is_all_or_nothing),
		cmocka_unit_test(test_huge_n_refused),
		cmocka_unit_test(test_max_zero),
		cmocka_unit_test(test_growth_keeps_content),
		cmocka_unit_test(test_printf),
		cmocka_unit_test(test_printf_error),
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_release_and_reuse),
		cmocka_unit_test(test_detach),
		cmocka_unit_test(test_reserve_exact),
		cmocka_unit_test(test_unbounded_max),
	};

	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
