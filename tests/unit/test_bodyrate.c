/* test_bodyrate.c: the stall bound and the rate floor of a streamed request body, on a
 * clock the tests drive. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/http/bodyrate.h"
#include "sandboxd/common/banned.h"

#define STALL 10000
#define GRACE 10000
#define RATE 32768

static void test_steady_client_goes_on(void **state)
{
	struct bodyrate b;

	bodyrate_init(&b, STALL, GRACE, RATE);
	/* 64 KiB every second for a minute: twice the floor. */
	for (int64_t t = 0; t < 60000; t += 1000) {
		bodyrate_wait(&b, t);
		assert_int_equal(bodyrate_check(&b, t + 999), BODYRATE_OK);
		bodyrate_got(&b, t + 1000, 65536);
	}
	assert_int_equal(bodyrate_check(&b, 60000), BODYRATE_OK);
	assert_true(b.bytes == 60u * 65536);
}

static void test_stall(void **state)
{
	struct bodyrate b;
	char msg[200];

	bodyrate_init(&b, STALL, GRACE, 0);
	bodyrate_wait(&b, 5000);
	assert_int_equal(bodyrate_check(&b, 5000 + STALL - 1), BODYRATE_OK);
	assert_int_equal(bodyrate_check(&b, 5000 + STALL), BODYRATE_STALLED);
	assert_string_equal(bodyrate_describe(&b, BODYRATE_STALLED, 5000 + STALL, msg, sizeof(msg)),
			    "request body too slow: no byte for 10 s (SANDBOXD_GIT_BODY_STALL)");
	/* A byte resets the stall clock; a second wait starts from its own beginning. */
	bodyrate_got(&b, 5000 + STALL - 1, 1);
	bodyrate_wait(&b, 5000 + STALL + 500);
	assert_int_equal(bodyrate_check(&b, 5000 + 2 * STALL), BODYRATE_OK);
	assert_int_equal(bodyrate_check(&b, 5000 + 2 * STALL + 500), BODYRATE_STALLED);
}

/* A byte every 3 s never stalls; the floor ends it once the grace has passed. */
static void test_drip_is_too_slow(void **state)
{
	struct bodyrate b;
	char msg[200];
	int64_t t = 0;

	bodyrate_init(&b, STALL, GRACE, RATE);
	for (; t < 9000; t += 3000) {
		bodyrate_wait(&b, t);
		assert_int_equal(bodyrate_check(&b, t + 2999), BODYRATE_OK);
		bodyrate_got(&b, t + 3000, 1);
	}
	/* 3 bytes in 9 s of waiting; the worker waits again, and at 10 s it is over. */
	bodyrate_wait(&b, t);
	assert_int_equal(bodyrate_check(&b, GRACE - 1), BODYRATE_OK);
	assert_int_equal(bodyrate_check(&b, GRACE), BODYRATE_SLOW);
	assert_string_equal(bodyrate_describe(&b, BODYRATE_SLOW, GRACE, msg, sizeof(msg)),
			    "request body too slow: 3 bytes in 10 s, under 32768 bytes/s on average "
			    "(SANDBOXD_GIT_BODY_MIN_RATE)");
}

/* Nothing is judged before the grace, however slow. */
static void test_grace(void **state)
{
	struct bodyrate b;

	bodyrate_init(&b, STALL, GRACE, RATE);
	bodyrate_wait(&b, 0);
	bodyrate_got(&b, 9000, 1);
	bodyrate_wait(&b, 9000);
	assert_int_equal(bodyrate_check(&b, GRACE - 1), BODYRATE_OK);
	assert_int_equal(bodyrate_check(&b, GRACE), BODYRATE_SLOW);
}

/* Time with the worker not waiting (git has not taken the last bytes yet) is neither a
 * stall nor part of the average. */
static void test_git_busy_is_not_the_client(void **state)
{
	struct bodyrate b;

	bodyrate_init(&b, STALL, GRACE, RATE);
	bodyrate_wait(&b, 0);
	bodyrate_got(&b, 100, 1 << 20);          /* 1 MiB at once */
	/* 5 minutes while git digests it: not waiting for the client. */
	assert_int_equal(bodyrate_check(&b, 300000), BODYRATE_OK);
	assert_true(bodyrate_next_ms(&b, 300000) == INT64_MAX);
	bodyrate_wait(&b, 300000);
	assert_int_equal(bodyrate_check(&b, 300000 + STALL - 1), BODYRATE_OK);
	/* 1 MiB over 10.1 s of waiting is over the floor; the stall bound is what ends it. */
	assert_int_equal(bodyrate_check(&b, 300000 + STALL), BODYRATE_STALLED);
}

/* Exactly at the floor goes on; a byte under it is too slow. */
static void test_floor_edge(void **state)
{
	struct bodyrate b;

	bodyrate_init(&b, 1000000, GRACE, RATE);
	bodyrate_wait(&b, 0);
	bodyrate_got(&b, 20000, 20 * RATE);      /* exactly the floor over 20 s */
	bodyrate_wait(&b, 20000);
	assert_int_equal(bodyrate_check(&b, 20000), BODYRATE_OK);
	assert_int_equal(bodyrate_check(&b, 20001), BODYRATE_SLOW);
	bodyrate_init(&b, 1000000, GRACE, 0);    /* no floor */
	bodyrate_wait(&b, 0);
	assert_int_equal(bodyrate_check(&b, 999999), BODYRATE_OK);
}

/* How long a poll may sleep: until the next verdict could change, at least 1 ms. */
static void test_next(void **state)
{
	struct bodyrate b;

	bodyrate_init(&b, STALL, GRACE, RATE);
	bodyrate_wait(&b, 0);
	assert_true(bodyrate_next_ms(&b, 0) == GRACE);      /* floor and stall both at 10 s */
	assert_true(bodyrate_next_ms(&b, 4000) == GRACE - 4000);
	bodyrate_got(&b, 4000, 1000 * RATE);      /* 1000 s worth of the floor */
	bodyrate_wait(&b, 4000);
	assert_true(bodyrate_next_ms(&b, 4000) == STALL);   /* the stall comes first now */
	assert_true(bodyrate_next_ms(&b, 4000 + STALL + 5) == 1);
	bodyrate_init(&b, STALL, GRACE, 0);
	bodyrate_wait(&b, 0);
	assert_true(bodyrate_next_ms(&b, 0) == STALL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_client_goes_on),
		cmocka_unit_test(test_stall),
		cmocka_unit_test(test_drip_is_too_slow),
		cmocka_unit_test(test_grace),
		cmocka_unit_test(test_git_busy_is_not_the_client),
		cmocka_unit_test(test_floor_edge),
		cmocka_unit_test(test_next),
	};

	return cmocka_run_group_tests_name("bodyrate", tests, NULL, NULL);
}
