/* test_metrics.c: the shared region (slots, folds across a real fork), the exposition's
 * text for known counts, label escaping, and the address lists of SANDBOXD_METRICS_ALLOW. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "sandboxd/lib/addrlist.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/common/banned.h"

#define NSLOTS 5

static int dummy(struct req *r, struct err *e)
{
	(void)r;
	(void)e;
	return 0;
}

static const struct route routes[] = {
	{ "GET", "/api/v3/user", dummy, "user.get", 0, NULL },
	{ "POST", "/api/v3/repos/{owner}/{repo}", dummy, "x.post", 0, NULL },
	{ "GET", "/odd\"path\\", dummy, "odd.get", 0, NULL },
	{ "*", "/{owner}/{repo}.git/…", dummy, "git.request", 0, NULL },
};
#define NR 4
static const struct metrics_names names = { routes, NR, "1.2.3" };

/* One region for the whole run (metrics_region_map is once per process); each test starts
 * from zero with slot 0 as this process's. */
static int setup(void **state)
{
	struct err e = { .msg = "" };

	(void)state;
	return metrics_region_map(NSLOTS, &e);
}

static void fresh(void)
{
	struct metrics_region *m = metrics_region();

	memset(m, 0, sizeof(*m) + NSLOTS * sizeof(struct metrics_slot));
	m->nslots = NSLOTS;
	metrics_slot_use(0);
}

static char *expose(struct buf *b)
{
	struct err e = { .msg = "" };

	buf_init(b, 1 << 20);
	if (metrics_expose(metrics_region(), &names, b, &e))
		fail_msg("metrics_expose: %s", e.msg);
	return b->data;
}

static void has(const char *text, const char *line)
{
	char want[512];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("no line '%s' in:\n%s", line, text);
}

static void lacks(const char *text, const char *part)
{
	if (strstr(text, part))
		fail_msg("'%s' should not be in the exposition", part);
}

static void test_indexes(void **state)
{
	(void)state;
	assert_int_equal(metrics_method_index("GET"), 0);
	assert_int_equal(metrics_method_index("DELETE"), 5);
	assert_int_equal(metrics_method_index("BREW"), METRICS_METHODS - 1);
	assert_int_equal(metrics_method_index(NULL), METRICS_METHODS - 1);
	assert_int_equal(metrics_status_index(200), 0);
	/* Unlisted codes by class, nonsense as "other": every index inside the table. */
	int s418 = metrics_status_index(418), s299 = metrics_status_index(299);
	assert_true(s418 != s299 && s418 < METRICS_STATUSES && s299 < METRICS_STATUSES);
	assert_int_equal(metrics_status_index(0), metrics_status_index(-5));
	assert_int_equal(metrics_status_index(600), metrics_status_index(0));
	assert_true(metrics_status_index(0) < METRICS_STATUSES);
	assert_int_equal(metrics_docker_op("create container"), METRICS_DOCKER_CREATE);
	assert_int_equal(metrics_docker_op("start exec"), METRICS_DOCKER_EXEC);
	assert_int_equal(metrics_docker_op("read file"), METRICS_DOCKER_ARCHIVE);
	assert_int_equal(metrics_docker_op("something new"), METRICS_DOCKER_OTHER);
	assert_int_equal(metrics_docker_op(NULL), METRICS_DOCKER_OTHER);
	/* Keys: one per route of one method, a method's worth for "*" and for unmatched. */
	assert_int_equal(metrics_request_key(routes, NR, 0, "GET"), 0);
	assert_int_equal(metrics_request_key(routes, NR, 0, "POST"), 0);
	assert_int_equal(metrics_request_key(routes, NR, 2, "GET"), 2);
	assert_int_equal(metrics_request_key(routes, NR, 3, "GET"), 3);
	assert_int_equal(metrics_request_key(routes, NR, 3, "POST"), 5);
	assert_int_equal(metrics_request_key(routes, NR, NR, "GET"), 3 + METRICS_METHODS);
	assert_int_equal(metrics_request_key(routes, NR, NR, "x"), 2 + 2 * METRICS_METHODS);
	assert_int_equal(metrics_request_key(routes, NR, NR + 1, "GET"), -1);
	/* The service's own table fits, unmatched row included. */
	assert_true(api_routes_count < METRICS_ROUTES_MAX);
	assert_true(metrics_request_key(api_routes, api_routes_count, api_routes_count, "other") >= 0);
}

static void test_escape(void **state)
{
	char out[16];

	(void)state;
	assert_int_equal(metrics_escape(out, sizeof(out), "a\"b\\c\nd"), 0);
	assert_string_equal(out, "a\\\"b\\\\c\\nd");
	/* Too long: a cut that never splits an escape. */
	assert_int_equal(metrics_escape(out, 4, "ab\"c"), ERR_TOOBIG);
	assert_string_equal(out, "ab");
	assert_int_equal(metrics_escape(out, sizeof(out), NULL), 0);
	assert_string_equal(out, "");
}

/* Known counts give known lines: counters only where non-zero, histograms cumulative with
 * a value on a bound in that bound's bucket, sums in seconds. */
static void test_exposition(void **state)
{
	struct buf b;
	char *t;

	(void)state;
	fresh();
	metrics_count_request(routes, NR, 0, "GET", 200, 1000);     /* exactly 1 ms: le="0.001" */
	metrics_count_request(routes, NR, 0, "GET", 200, 30000);
	metrics_count_request(routes, NR, 0, "GET", 404, 5);
	metrics_count_request(routes, NR, NR, "BREW", 418, 200);     /* the unmatched row */
	metrics_count_request(routes, NR, 99, "GET", 200, 1);       /* out of range: dropped */
	metrics_count_request(routes, NR, 3, "POST", 200, 1);       /* "*": by the request's method */
	metrics_count_request(routes, NR, 1, "GET", 201, 1);        /* one method: the route's */
	metrics_observe_create(1500000);
	metrics_observe_exec(60000);
	metrics_observe_docker(METRICS_DOCKER_START, 220000);
	metrics_count_git_bytes(METRICS_GIT_IN, 100);
	metrics_count_git_bytes(METRICS_GIT_OUT, 7);
	metrics_count_reaper_pass();
	t = expose(&b);

	assert_true(strncmp(t, "# HELP sandboxd_http_requests_total ", 36) == 0);
	has(t, "# TYPE sandboxd_http_requests_total counter");
	has(t, "sandboxd_http_requests_total{route=\"/api/v3/user\",method=\"GET\",status=\"200\"} 2");
	has(t, "sandboxd_http_requests_total{route=\"/api/v3/user\",method=\"GET\",status=\"404\"} 1");
	has(t, "sandboxd_http_requests_total{route=\"unmatched\",method=\"other\",status=\"4xx\"} 1");
	has(t, "sandboxd_http_requests_total{route=\"/{owner}/{repo}.git/…\",method=\"POST\",status=\"200\"} 1");
	has(t, "sandboxd_http_requests_total{route=\"/api/v3/repos/{owner}/{repo}\",method=\"POST\",status=\"201\"} 1");
	lacks(t, "sandboxd_http_requests_total{route=\"/odd");
	has(t, "sandboxd_http_request_duration_seconds_bucket{route=\"/api/v3/user\",le=\"0.001\"} 2");
	has(t, "sandboxd_http_request_duration_seconds_bucket{route=\"/api/v3/user\",le=\"0.025\"} 2");
	has(t, "sandboxd_http_request_duration_seconds_bucket{route=\"/api/v3/user\",le=\"0.05\"} 3");
	has(t, "sandboxd_http_request_duration_seconds_bucket{route=\"/api/v3/user\",le=\"+Inf\"} 3");
	has(t, "sandboxd_http_request_duration_seconds_sum{route=\"/api/v3/user\"} 0.031005");
	has(t, "sandboxd_http_request_duration_seconds_count{route=\"/api/v3/user\"} 3");
	/* Routes without traffic still have their (zero) histogram; labels escaped. */
	has(t, "sandboxd_http_request_duration_seconds_count{route=\"/api/v3/repos/{owner}/{repo}\"} 1");
	has(t, "sandboxd_http_request_duration_seconds_count{route=\"/odd\\\"path\\\\\"} 0");
	has(t, "sandboxd_sandbox_create_duration_seconds_bucket{le=\"1\"} 0");
	has(t, "sandboxd_sandbox_create_duration_seconds_bucket{le=\"2.5\"} 1");
	has(t, "sandboxd_sandbox_create_duration_seconds_sum 1.500000");
	has(t, "sandboxd_sandbox_create_duration_seconds_count 1");
	has(t, "sandboxd_exec_duration_seconds_count 1");
	has(t, "sandboxd_docker_request_duration_seconds_count{op=\"start\"} 1");
	has(t, "sandboxd_docker_request_duration_seconds_count{op=\"create\"} 0");
	has(t, "# TYPE sandboxd_docker_request_duration_seconds histogram");
	has(t, "sandboxd_git_bytes_total{direction=\"in\"} 100");
	has(t, "sandboxd_git_bytes_total{direction=\"out\"} 7");
	has(t, "sandboxd_reaper_passes_total 1");
	has(t, "sandboxd_workers{pool=\"api\",state=\"idle\"} 0");
	has(t, "sandboxd_build_info{version=\"1.2.3\"} 1");
	has(t, "sandboxd_holder_calls{kind=\"exec\"} 0");
	has(t, "sandboxd_holder_handovers_total{kind=\"parked\"} 0");
	/* No gauge from a table before the first refresh. */
	lacks(t, "sandboxd_sandboxes");
	assert_true(t[b.len - 1] == '\n');
	buf_release(&b);
}

/* The holder's gauge counts what live holders keep now; its counter outlives the process. */
static void test_holder(void **state)
{
	struct buf b;
	char *t;
	int i;

	(void)state;
	fresh();
	i = metrics_slot_take(METRICS_POOL_HOLDER);
	assert_true(i > 0);
	metrics_slot_use(i);
	metrics_count_handover(METRICS_HELD_EXEC);
	metrics_count_handover(METRICS_HELD_PARKED);
	metrics_count_handover(METRICS_HELD_PARKED);
	metrics_count_handover(7);  /* out of range: dropped */
	metrics_set_holding(METRICS_HELD_EXEC, 1);
	metrics_set_holding(METRICS_HELD_PARKED, 2);
	t = expose(&b);
	has(t, "# TYPE sandboxd_holder_calls gauge");
	has(t, "sandboxd_holder_calls{kind=\"exec\"} 1");
	has(t, "sandboxd_holder_calls{kind=\"parked\"} 2");
	has(t, "sandboxd_holder_handovers_total{kind=\"exec\"} 1");
	has(t, "sandboxd_holder_handovers_total{kind=\"parked\"} 2");
	buf_release(&b);
	/* The holder dies: what it held ended with it, what it took stays counted. */
	metrics_slot_use(0);
	metrics_slot_fold(i);
	t = expose(&b);
	has(t, "sandboxd_holder_calls{kind=\"exec\"} 0");
	has(t, "sandboxd_holder_calls{kind=\"parked\"} 0");
	has(t, "sandboxd_holder_handovers_total{kind=\"parked\"} 2");
	buf_release(&b);
	/* A new process in the slot starts from nothing held. */
	assert_int_equal(metrics_slot_take(METRICS_POOL_HOLDER), i);
	t = expose(&b);
	has(t, "sandboxd_holder_calls{kind=\"parked\"} 0");
	buf_release(&b);
}

/* Every line is a comment or `name{labels} value`, and every series has HELP and TYPE
 * before it (what promtool checks; the integration test runs promtool itself). */
static void test_shape(void **state)
{
	struct buf b;
	char *t, *line, *save = NULL, typed[128] = "";

	(void)state;
	fresh();
	metrics_count_request(routes, NR, 1, "POST", 201, 10);
	t = expose(&b);
	for (line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# TYPE ", 7) == 0) {
			snprintf(typed, sizeof(typed), "%.*s", (int)strcspn(line + 7, " "), line + 7);
			continue;
		}
		if (strncmp(line, "# HELP ", 7) == 0)
			continue;
		if (!typed[0] || strncmp(line, typed, strlen(typed)))
			fail_msg("'%s' is not under its TYPE (%s)", line, typed);
		const char *sp = strrchr(line, ' ');
		assert_non_null(sp);
		assert_true(sp[1] >= '0' && sp[1] <= '9');
	}
	buf_release(&b);
}

/* A gauge set by the refresher shows its rows as given; a second one replaces them. */
static void test_gauges(void **state)
{
	char labels[2][METRICS_LABELS_MAX] = { "state=\"ready\"", "state=\"failed\"" };
	int64_t v[2] = { 3, 1 };
	struct buf b;
	char *t;

	(void)state;
	fresh();
	metrics_gauge_set(0, "sandboxd_sandboxes", "Sandboxes by state.", 2,
			  (const char (*)[METRICS_LABELS_MAX])labels, v, 1);
	t = expose(&b);
	has(t, "# TYPE sandboxd_sandboxes gauge");
	has(t, "sandboxd_sandboxes{state=\"ready\"} 3");
	has(t, "sandboxd_sandboxes{state=\"failed\"} 1");
	buf_release(&b);
	v[0] = 4;
	metrics_gauge_set(0, "sandboxd_sandboxes", "Sandboxes by state.", 1,
			  (const char (*)[METRICS_LABELS_MAX])labels, v, 2);
	t = expose(&b);
	has(t, "sandboxd_sandboxes{state=\"ready\"} 4");
	lacks(t, "state=\"failed\"");
	buf_release(&b);
}

/* A child counts into its own slot, dies (SIGKILL), and nothing of it is lost: visible
 * while its slot is in use, the same once folded into slot 0, and the slot is free again
 * and zero for the next process. */
static void test_fork_and_fold(void **state)
{
	struct metrics_region *m;
	struct buf b;
	int slot, status;
	pid_t pid;
	char *t;

	(void)state;
	fresh();
	m = metrics_region();
	metrics_count_request(routes, NR, 0, "GET", 200, 10);  /* the parent, on slot 0 */
	slot = metrics_slot_take(METRICS_POOL_API);
	assert_int_equal(slot, 1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		metrics_slot_use(slot);
		metrics_set_state(METRICS_BUSY);
		for (int i = 0; i < 5; i++)
			metrics_count_request(routes, NR, 0, "GET", 200, 10);
		metrics_count_git_bytes(METRICS_GIT_OUT, 1000);
		kill(getpid(), SIGKILL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	/* Dead but not yet reaped by the master: its slot still counts. */
	t = expose(&b);
	has(t, "sandboxd_http_requests_total{route=\"/api/v3/user\",method=\"GET\",status=\"200\"} 6");
	has(t, "sandboxd_workers{pool=\"api\",state=\"busy\"} 1");
	buf_release(&b);
	metrics_slot_fold(slot);
	t = expose(&b);
	has(t, "sandboxd_http_requests_total{route=\"/api/v3/user\",method=\"GET\",status=\"200\"} 6");
	has(t, "sandboxd_git_bytes_total{direction=\"out\"} 1000");
	has(t, "sandboxd_workers{pool=\"api\",state=\"busy\"} 0");
	buf_release(&b);
	assert_int_equal(m->slots[slot].state, METRICS_FREE);
	assert_true(m->slots[slot].c.requests[0][0] == 0);
	assert_int_equal(m->fold_gen % 2, 0);
	/* The next process gets the freed slot. */
	assert_int_equal(metrics_slot_take(METRICS_POOL_GIT), slot);
}

/* The race a fold must survive: a scraper summing while the master folds slot after slot
 * of processes that counted and died. Every sum it reads must be at least the one before
 * (a counter that goes down is a restart to Prometheus), and the end total is exact. */
#define RACE_PROCS 100
#define RACE_EACH 7

static uint64_t race_total(void)
{
	static struct metrics_counts c;
	struct metrics_gauge g[METRICS_GAUGES_MAX];

	metrics_sum(metrics_region(), &c, g);
	return c.requests[0][0];
}

static void test_fold_race(void **state)
{
	const uint64_t want = (uint64_t)RACE_PROCS * RACE_EACH;
	int status;
	pid_t scraper;

	(void)state;
	fresh();
	scraper = fork();
	assert_true(scraper >= 0);
	if (scraper == 0) {
		uint64_t last = 0, now;
		long sums = 0;
		do {
			now = race_total();
			if (now < last)
				_exit(1);
			last = now;
			sums++;
		} while (now < want);
		_exit(sums > 1 ? 0 : 2);
	}
	for (int i = 0; i < RACE_PROCS; i++) {
		int slot = metrics_slot_take(METRICS_POOL_API);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			metrics_slot_use(slot);
			for (int k = 0; k < RACE_EACH; k++)
				metrics_count_request(routes, NR, 0, "GET", 200, 1);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		metrics_slot_fold(slot);
	}
	assert_int_equal(waitpid(scraper, &status, 0), scraper);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the scraper saw a sum go down (or never ran): status %d", status);
	assert_true(race_total() == want);
	for (int i = 1; i < NSLOTS; i++)
		assert_int_equal(metrics_region()->slots[i].state, METRICS_FREE);
}

/* With every slot taken the next process shares slot 0; DRAINING outlasts the process's
 * own state changes. */
static void test_full_and_draining(void **state)
{
	struct metrics_region *m;
	int s;

	(void)state;
	fresh();
	m = metrics_region();
	for (int i = 1; i < NSLOTS; i++)
		assert_int_equal(metrics_slot_take(METRICS_POOL_API), i);
	assert_int_equal(metrics_slot_take(METRICS_POOL_API), 0);
	s = 2;
	metrics_slot_use(s);
	metrics_set_state(METRICS_IDLE);
	assert_int_equal(m->slots[s].state, METRICS_IDLE);
	metrics_slot_draining(s);
	metrics_set_state(METRICS_BUSY);
	assert_int_equal(m->slots[s].state, METRICS_DRAINING);
	metrics_slot_use(0);
	metrics_slot_fold(0);   /* the retired slot is never folded away */
	metrics_slot_fold(NSLOTS);
	assert_int_equal(m->fold_gen, 0);
}

static void test_addrlist(void **state)
{
	struct err e = { .msg = "" };
	const char *list = "127.0.0.1, 10.1.0.0/16 ::1,fd00::/8";

	(void)state;
	assert_int_equal(addrlist_check("", &e), 0);
	assert_int_equal(addrlist_check(list, &e), 0);
	assert_int_equal(addrlist_check("0.0.0.0/0", &e), 0);
	assert_int_equal(addrlist_check("10.0.0.0/33", &e), ERR_INVALID);
	assert_int_equal(addrlist_check("localhost", &e), ERR_INVALID);
	assert_string_equal(e.msg, "'localhost' is not an IP address or network (like 10.0.0.0/8 or ::1)");
	assert_int_equal(addrlist_check("1.2.3.4/", &e), ERR_INVALID);
	assert_int_equal(addrlist_check("::1/129", &e), ERR_INVALID);
	assert_int_equal(addrlist_match(list, "127.0.0.1"), 1);
	assert_int_equal(addrlist_match(list, "127.0.0.2"), 0);
	assert_int_equal(addrlist_match(list, "10.1.255.7"), 1);
	assert_int_equal(addrlist_match(list, "10.2.0.1"), 0);
	assert_int_equal(addrlist_match(list, "::1"), 1);
	assert_int_equal(addrlist_match(list, "fdff::5"), 1);
	assert_int_equal(addrlist_match(list, "fe00::5"), 0);
	assert_int_equal(addrlist_match(list, "::ffff:127.0.0.1"), 1);
	assert_int_equal(addrlist_match(list, NULL), 0);
	assert_int_equal(addrlist_match(list, "127.0.0.1/8"), 0);
	assert_int_equal(addrlist_match("", "127.0.0.1"), 0);
	assert_int_equal(addrlist_match("0.0.0.0/0", "8.8.8.8"), 1);
	assert_int_equal(addrlist_match("0.0.0.0/0", "2001:db8::1"), 0);
	assert_int_equal(addrlist_match("10.0.0.0/7", "11.255.0.1"), 1);
	assert_int_equal(addrlist_match("10.0.0.0/7", "12.0.0.1"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_indexes),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_exposition),
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_holder),
		cmocka_unit_test(test_gauges),
		cmocka_unit_test(test_fork_and_fold),
		cmocka_unit_test(test_fold_race),
		cmocka_unit_test(test_full_and_draining),
		cmocka_unit_test(test_addrlist),
	};

	return cmocka_run_group_tests_name("metrics", tests, setup, NULL);
}
