/* test_pool.c: the per-request arena: alignment, zeroing, reset, and its hard maximum. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>
#include <cmocka.h>
#include "sandboxd/lib/pool.h"
#include "sandboxd/common/banned.h"

static void assert_aligned_zeroed(const void *p, size_t n)
{
	const unsigned char *c = p;

	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 16, 0);
	for (size_t i = 0; i < n; i++)
		if (c[i])
			fail_msg("byte %zu of %zu is not zero", i, n);
}

static void test_init(void **state)
{
	struct pool p;

	memset(&p, 0x5a, sizeof(p));
	pool_init(&p, 1000);
	assert_null(p.head);
	assert_int_equal(p.used, 0);
	assert_int_equal(p.max, 1000);
	pool_reset(&p);              /* fine on an empty pool */
	pool_release(&p);
	pool_release(&p);
}

static void test_alignment_and_zero(void **state)
{
	static const size_t sizes[] = { 1, 3, 15, 16, 17, 31, 100, 1, 0, 4096, 7, 20000, 5 };
	struct pool p;
	unsigned char *prev = NULL;
	size_t used = 0;

	pool_init(&p, 1 << 20);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned char *m = pool_alloc(&p, n);

		assert_aligned_zeroed(m, n);
		assert_true(m != prev);
		/* the caller may use all n bytes */
		memset(m, 0xff, n ? n : 1);
		used += ((n ? n : 1) + 15) / 16 * 16;
		assert_int_equal(p.used, used);
		prev = m;
	}
	pool_release(&p);
}

static void test_allocations_do_not_overlap(void **state)
{
	struct pool p;
	unsigned char *m[200];

	pool_init(&p, 1 << 22);
	for (int i = 0; i < 200; i++) {
		size_t n = (size_t)(i * 37 % 500 + 1);
		m[i] = pool_alloc(&p, n);
		assert_aligned_zeroed(m[i], n);
		memset(m[i], i, n);
	}
	for (int i = 0; i < 200; i++) {
		size_t n = (size_t)(i * 37 % 500 + 1);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(m[i][k], (unsigned char)i);
	}
	pool_release(&p);
}

static void test_strings(void **state)
{
	struct pool p;
	char *s;

	pool_init(&p, 1 << 16);
	s = pool_strdup(&p, "hello");
	assert_string_equal(s, "hello");
	assert_int_equal((uintptr_t)s % 16, 0);
	s = pool_strdup(&p, "");
	assert_string_equal(s, "");
	s = pool_strndup(&p, "hello", 3);
	assert_string_equal(s, "hel");
	s = pool_strndup(&p, "/path?query", 5);
	assert_string_equal(s, "/path");
	s = pool_strndup(&p, "x", 0);
	assert_string_equal(s, "");
	s = pool_printf(&p, "%s/%d/%c", "a", -7, 'z');
	assert_string_equal(s, "a/-7/z");
	s = pool_printf(&p, "%s", "");
	assert_string_equal(s, "");
	pool_release(&p);
}

static char *vprintf_helper(struct pool *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static char *vprintf_helper(struct pool *p, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = pool_vprintf(p, fmt, ap);
	va_end(ap);
	return s;
}

static void test_vprintf_and_long_output(void **state)
{
	struct pool p;
	char big[40000];
	char *s;

	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	pool_init(&p, 1 << 20);
	s = vprintf_helper(&p, "%d-%s", 12, "x");
	assert_string_equal(s, "12-x");
	/* longer than the first chunk */
	s = pool_printf(&p, "<%s>", big);
	assert_non_null(s);
	assert_int_equal(strlen(s), sizeof(big) + 1);
	assert_int_equal(s[0], '<');
	assert_int_equal(s[sizeof(big)], '>');
	pool_release(&p);
}

static void test_printf_error(void **state)
{
	/* a wide character the C locale cannot convert makes vsnprintf fail */
	static const wchar_t w[] = { 0x263a, 0 };
	struct pool p;

	pool_init(&p, 1 << 16);
	assert_null(pool_printf(&p, "%ls", w));
	assert_int_equal(p.used, 0);
	pool_release(&p);
}

static void test_reset(void **state)
{
	struct pool p;
	unsigned char *a;

	pool_init(&p, 1 << 20);
	for (int round = 0; round < 5; round++) {
		/* dirty memory in several chunks */
		for (int i = 0; i < 10; i++) {
			a = pool_alloc(&p, 10000);
			assert_aligned_zeroed(a, 10000);
			memset(a, 0xee, 10000);
		}
		assert_int_equal(p.used, 10 * 10000);   /* 10000 is a multiple of 16 */
		pool_reset(&p);
		assert_int_equal(p.used, 0);
		assert_non_null(p.head);     /* a chunk is kept for the next request */
		/* memory handed out after a reset is zeroed again */
		a = pool_alloc(&p, 16000);
		assert_aligned_zeroed(a, 16000);
		assert_string_equal(pool_strdup(&p, "after reset"), "after reset");
		pool_reset(&p);
	}
	pool_release(&p);
	assert_null(p.head);
	assert_int_equal(p.used, 0);
	/* a released pool may be initialised again */
	pool_init(&p, 64);
	assert_non_null(pool_alloc(&p, 64));
	pool_release(&p);
}

/* A worker whose first request needed a big chunk does not keep it for its whole life. */
static void test_reset_drops_a_big_first_chunk(void **state)
{
	struct pool p;
	unsigned char *a;

	pool_init(&p, 64 << 20);
	a = pool_alloc(&p, 8 << 20);
	assert_non_null(a);
	memset(a, 0xee, 8 << 20);
	pool_reset(&p);
	assert_null(p.head);
	assert_int_equal(p.used, 0);
	a = pool_alloc(&p, 100);
	assert_aligned_zeroed(a, 100);
	memset(a, 0xee, 100);
	pool_reset(&p);
	assert_non_null(p.head);     /* the small one stays */
	assert_aligned_zeroed(pool_alloc(&p, 100), 100);
	pool_release(&p);
}

static void test_max(void **state)
{
	struct pool p;

	pool_init(&p, 1024);
	assert_non_null(pool_alloc(&p, 1000));      /* 1008 */
	assert_non_null(pool_alloc(&p, 16));        /* 1024: exactly the maximum */
	assert_int_equal(p.used, 1024);
	assert_null(pool_alloc(&p, 1));
	assert_null(pool_alloc(&p, 0));
	assert_null(pool_strdup(&p, ""));
	assert_null(pool_printf(&p, "%d", 1));
	assert_int_equal(p.used, 1024);
	/* the maximum counts since the last reset */
	pool_reset(&p);
	assert_non_null(pool_alloc(&p, 1024));
	assert_null(pool_alloc(&p, 1));
	pool_reset(&p);
	assert_null(pool_alloc(&p, 1025));          /* rounded up to 1040 */
	assert_int_equal(p.used, 0);
	assert_non_null(pool_strdup(&p, "fits"));
	pool_release(&p);

	/* rounding counts against the maximum: 1 byte uses 16 */
	pool_init(&p, 20);
	assert_non_null(pool_alloc(&p, 1));
	assert_null(pool_alloc(&p, 1));
	pool_release(&p);

	pool_init(&p, 0);
	assert_null(pool_alloc(&p, 1));
	assert_null(pool_strdup(&p, "x"));
	pool_release(&p);
}

static void test_huge_requests(void **state)
{
	struct pool p;

	pool_init(&p, 1 << 20);
	assert_null(pool_alloc(&p, SIZE_MAX));
	assert_null(pool_alloc(&p, SIZE_MAX - 15));
	assert_null(pool_alloc(&p, SIZE_MAX - 16));
	assert_null(pool_alloc(&p, SIZE_MAX / 2 + 1));
	assert_null(pool_alloc(&p, (1 << 20) + 1));
	assert_int_equal(p.used, 0);
	assert_non_null(pool_alloc(&p, 1 << 20));
	pool_release(&p);
}

static void test_huge_request_without_a_real_maximum(void **state)
{
	/* with SIZE_MAX as the maximum, a request larger than any chunk size fails (NULL) and
	 * does not hang; run in a child so that a hang ends in SIGALRM, not a stuck suite */
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct pool p;
		void *m;

		alarm(5);
		pool_init(&p, SIZE_MAX);
		m = pool_alloc(&p, SIZE_MAX / 2 + 2);
		pool_release(&p);
		_exit(m == NULL ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("pool_alloc(SIZE_MAX / 2 + 2) with max SIZE_MAX: killed by signal %d%s",
			 WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (it hangs)" : "");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_alignment_and_zero),
		cmocka_unit_test(test_allocations_do_not_overlap),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_vprintf_and_long_output),
		cmocka_unit_test(test_printf_error),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_reset_drops_a_big_first_chunk),
		cmocka_unit_test(test_max),
		cmocka_unit_test(test_huge_requests),
		cmocka_unit_test(test_huge_request_without_a_real_maximum),
	};

	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
