/* test_box.c: the sandbox layer reaches its engine only through the engine interface
 * (box.h): with a fake table selected, a sandbox's container is made and given its clone's
 * parameters, an exec whose agent cannot be reached falls back to the engine, a detached
 * one starts there, a cwd is checked there and the container is removed, each call
 * landing in the fake with the arguments the Docker table would have been given. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/sandbox/container.h"
#include "sandboxd/sandbox/exec.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/common/banned.h"

/* What the fake was asked, in order, and what it answers. */
static struct {
	char calls[512];             /* "create input start ..." */
	char id[BOX_ID_MAX];         /* the box the last call named */
	struct box_spec spec;        /* the last create's */
	char labels[4][96];
	char input[128];
	size_t input_len;
	char dir[64];                /* the last file_put's */
	size_t put_bytes;
	char argv[8][64];            /* the last exec's */
	int stdin_tied;
	char workdir[64];
	int disk_enforced;           /* create's answer */
	int input_rc;                /* input's answer */
	int exit_code;               /* exec's */
	int timeout;                 /* exec: the call's timeout passes */
	int is_dir;                  /* path_stat's */
} f;

static void called(const char *what, const char *id)
{
	size_t n = strlen(f.calls);

	snprintf(f.calls + n, sizeof(f.calls) - n, "%s%s", n ? " " : "", what);
	snprintf(f.id, sizeof(f.id), "%s", id ? id : "");
}

static int f_init(const struct box_target *own, struct err *e) { called("init", NULL); return 0; }
static int f_use(const struct box_target *t, struct err *e) { called("use", NULL); return 0; }
static void f_refuse(const char *why) { called("refuse", NULL); }
static const char *f_current(void) { return "fake://"; }
static void f_cleanup(void) { called("cleanup", NULL); }

static int f_ping(const char *url, struct err *e)
{
	called("ping", NULL);
	return 0;
}

static int f_isolation(char *out, size_t len, long timeout_ms, struct err *e)
{
	called("isolation", NULL);
	snprintf(out, len, "%s", "");
	return 0;
}

static int f_create(const struct box_spec *s, char id[BOX_ID_MAX], int *disk_enforced,
		    long timeout_ms, struct err *e)
{
	called("create", NULL);
	f.spec = *s;
	memset(f.labels, 0, sizeof(f.labels));
	for (int i = 0; i < 4 && s->labels && s->labels[i]; i++)
		snprintf(f.labels[i], sizeof(f.labels[i]), "%s", s->labels[i]);
	*disk_enforced = f.disk_enforced;
	snprintf(id, BOX_ID_MAX, "%s", "fakebox1");
	return 0;
}

static int f_input(const char *id, const void *data, size_t len, long timeout_ms,
		   struct err *e)
{
	called("input", id);
	f.input_len = len;
	snprintf(f.input, sizeof(f.input), "%.*s", (int)len, (const char *)data);
	return f.input_rc ? err_set(e, f.input_rc, "fake: no input") : 0;
}

static int f_id_call(const char *what, const char *id, struct err *e)
{
	called(what, id);
	return 0;
}

static int f_start(const char *id, long timeout_ms, struct err *e)
{
	return f_id_call("start", id, e);
}

static int f_state(const char *id, struct box_state *out, long timeout_ms, struct err *e)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->status, sizeof(out->status), "%s", "running");
	out->running = 1;
	return f_id_call("state", id, e);
}

static int f_address(const char *id, const char *network, char *ip, size_t ip_len,
		     long timeout_ms, struct err *e)
{
	called("address", id);
	return err_set(e, ERR_NOTFOUND, "fake: no address on %s", network);
}

static int f_resize(const char *id, int64_t memory, int64_t nano_cpus, long timeout_ms,
		    struct err *e)
{
	return f_id_call("resize", id, e);
}

static int f_disk_used(const char *id, int64_t *bytes, long timeout_ms, struct err *e)
{
	*bytes = 0;
	return f_id_call("disk_used", id, e);
}

static int f_remove(const char *id, long timeout_ms, struct err *e)
{
	return f_id_call("remove", id, e);
}

static int f_list(const char *label, const char *value_label, box_list_fn fn, void *arg,
		  long timeout_ms, struct err *e)
{
	return f_id_call("list", NULL, e);
}

static int f_leftovers(const char *label, const char *value_label, box_list_fn fn, void *arg,
		       long timeout_ms, struct err *e)
{
	return f_id_call("leftovers", NULL, e);
}

static int f_leftover_remove(const char *name, long timeout_ms, struct err *e)
{
	return f_id_call("leftover_remove", name, e);
}

static int f_file_put(const char *id, const char *dir, const struct box_part *parts,
		      size_t nparts, long timeout_ms, struct err *e)
{
	called("file_put", id);
	snprintf(f.dir, sizeof(f.dir), "%s", dir);
	f.put_bytes = 0;
	for (size_t i = 0; i < nparts; i++)
		f.put_bytes += parts[i].len;
	return 0;
}

static int f_path_stat(const char *id, const char *path, struct box_path_stat *out,
		       long timeout_ms, struct err *e)
{
	called("path_stat", id);
	memset(out, 0, sizeof(*out));
	out->is_dir = f.is_dir;
	return 0;
}

static void keep_argv(const struct box_exec *x)
{
	memset(f.argv, 0, sizeof(f.argv));
	for (int i = 0; i < 8 && x->argv[i]; i++)
		snprintf(f.argv[i], sizeof(f.argv[i]), "%s", x->argv[i]);
	snprintf(f.workdir, sizeof(f.workdir), "%s", x->workdir ? x->workdir : "");
	f.stdin_tied = x->stdin_tied;
}

static int f_exec(const char *id, struct box_exec *x, long timeout_ms, struct err *e)
{
	int rc;

	called("exec", id);
	keep_argv(x);
	x->exit_code = -1;
	x->timed_out = x->cancelled = 0;
	if (x->started && x->started(x->started_arg)) {
		x->cancelled = 1;
		return err_set(e, ERR_CANCELLED, "the caller stopped waiting");
	}
	if ((rc = x->sink(x->sink_arg, 1, "out\n", 4)) || (rc = x->sink(x->sink_arg, 2, "err\n", 4)))
		return rc;
	if (f.timeout) {
		x->timed_out = 1;
		return err_set(e, ERR_FAIL, "fake: timed out");
	}
	x->exit_code = f.exit_code;
	return 0;
}

static int f_exec_detached(const char *id, const struct box_exec *x, long timeout_ms,
			   struct err *e)
{
	called("exec_detached", id);
	keep_argv(x);
	return 0;
}

static int f_image_info(const char *image, const char *label, int64_t *size, char *value,
			size_t value_len, long timeout_ms, struct err *e)
{
	called("image_info", NULL);
	return err_set(e, ERR_NOTFOUND, "fake: no image");
}

static int f_image_pull(const char *image, long timeout_ms, struct err *e)
{
	called("image_pull", NULL);
	return 0;
}

static const struct engine_ops fake = {
	.kind = "fake", .init = f_init, .use = f_use, .refuse = f_refuse, .current = f_current,
	.cleanup = f_cleanup, .ping = f_ping, .isolation = f_isolation, .create = f_create,
	.input = f_input, .start = f_start, .state = f_state, .address = f_address,
	.resize = f_resize, .disk_used = f_disk_used, .remove = f_remove, .list = f_list,
	.leftovers = f_leftovers, .leftover_remove = f_leftover_remove, .file_put = f_file_put,
	.path_stat = f_path_stat, .exec = f_exec, .exec_detached = f_exec_detached,
	.image_info = f_image_info, .image_pull = f_image_pull,
};

static int setup(void **state)
{
	memset(&f, 0, sizeof(f));
	box_select(&fake);
	return 0;
}

static int teardown(void **state)
{
	box_select(box_kind("docker"));
	return 0;
}

static void a_sandbox(struct sandbox *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", "sb_0123456789abcdef");
	snprintf(s->container_id, sizeof(s->container_id), "%s", "fakebox1");
	/* An agent key, so that an exec asks for the agent's address first. */
	memset(s->agent_key, 'a', SANDBOX_AGENT_KEY_HEX);
}

/* Only Docker is known by name; selecting NULL keeps the table in use. */
static void test_kinds(void **state)
{
	assert_non_null(box_kind("docker"));
	assert_string_equal(box_kind("docker")->kind, "docker");
	assert_null(box_kind("kubernetes"));
	assert_null(box_kind(NULL));
	box_select(NULL);
	assert_ptr_equal(box_selected(), &fake);
}

/* A sandbox's container: the spec the Docker table would get, and the disk answer kept. */
static void test_create(void **state)
{
	struct config cfg = { .sandbox_uid = 61000, .sandbox_memory = 1 << 30, .sandbox_cpus = 2,
			      .sandbox_pids = 256, .sandbox_disk = 1 << 30 };
	const char *env[] = { "A=1", NULL };
	char cid[BOX_ID_MAX];
	struct boxuser bu;
	struct err e;
	int enforced = -1;

	snprintf(cfg.images[0].ref, sizeof(cfg.images[0].ref), "%s", "runner:1");
	cfg.nimages = 1;
	snprintf(cfg.instance, sizeof(cfg.instance), "%s", "inst1");
	snprintf(cfg.sandbox_network, sizeof(cfg.sandbox_network), "%s", "sbnet");
	snprintf(cfg.agent_path, sizeof(cfg.agent_path), "%s", "/nonexistent/agent");
	boxuser_for(&cfg, "", &bu);
	f.disk_enforced = 1;
	assert_int_equal(sandbox_container_new(&cfg, &bu, "sb_0123456789abcdef", env, NULL,
					       BOX_CALL_MS, cid, &enforced, &e), 0);
	assert_string_equal(f.calls, "create");
	assert_string_equal(cid, "fakebox1");
	assert_int_equal(enforced, 1);
	assert_string_equal(f.spec.image, "runner:1");
	assert_string_equal(f.spec.user, "61000:61000");
	assert_null(f.spec.cap_drop);
	assert_string_equal(f.spec.network, "sbnet");
	assert_string_equal(f.spec.gateway_name, "sandboxd.internal");
	assert_int_equal(f.spec.disk, 1 << 30);
	assert_int_equal(f.spec.nano_cpus, 2000000000LL);
	assert_int_equal(f.spec.open_stdin, 1);
	assert_null(f.spec.ro_bind_source);
	assert_string_equal(f.labels[0], "sandboxd.sandbox=sb_0123456789abcdef");
	assert_string_equal(f.labels[1], "sandboxd.instance=inst1");
	assert_string_equal(f.labels[2], "");
	/* An engine that cannot limit the disk is asked without a limit from then on. */
	f.disk_enforced = 0;
	assert_int_equal(sandbox_container_new(&cfg, &bu, "pool:wc_1", env, NULL, BOX_CALL_MS,
					       cid, &enforced, &e), 0);
	assert_int_equal(enforced, 0);
	assert_string_equal(f.labels[2], "sandboxd.pool=wc_1");
	assert_int_equal(sandbox_container_new(&cfg, &bu, "sb_0123456789abcdef", env, NULL,
					       BOX_CALL_MS, cid, &enforced, &e), 0);
	assert_int_equal(f.spec.disk, 0);
	assert_string_equal(f.calls, "create create create");
}

/* The clone's parameters: on the box's input, else as an archive under /tmp. */
static void test_put_clone(void **state)
{
	const char *how = NULL;
	struct err e;

	assert_int_equal(sandbox_put_clone("fakebox1", 61000, "params", 6, 0, &how, &e), 0);
	assert_string_equal(how, "stdin");
	assert_string_equal(f.calls, "input");
	assert_string_equal(f.id, "fakebox1");
	assert_string_equal(f.input, "params");
	f.input_rc = ERR_FAIL;
	assert_int_equal(sandbox_put_clone("fakebox1", 61000, "params", 6, 0, &how, &e), 0);
	assert_string_equal(how, "archive");
	assert_string_equal(f.calls, "input input file_put");
	assert_string_equal(f.dir, "/tmp");
	assert_true(f.put_bytes > 0 && f.put_bytes % 512 == 0);
}

struct got {
	char out[64], err[64];
	int started;
};

static int sink(void *arg, int stream, const char *p, size_t n)
{
	struct got *g = arg;
	char *to = stream == 1 ? g->out : g->err;
	size_t have = strlen(to);

	snprintf(to + have, sizeof(g->out) - have, "%.*s", (int)n, p);
	return 0;
}

static int started(void *arg)
{
	((struct got *)arg)->started++;
	return 0;
}

/* An exec whose agent has no address is refused by name with the agent on (decision 0086):
 * nothing runs through the engine. A sandbox made before the agent (no key) still goes
 * through the engine: exec.sh with the limit and the command, its input tied to the call,
 * its output to the caller's sink. */
static void test_exec_fallback(void **state)
{
	struct sandbox s;
	const char *env[] = { "HOME=/home/sandbox", NULL };
	struct exec_spec x = { .cmd = "echo hi", .workdir = "/workspace/repo", .env = env,
			       .timeout_ms = 5000, .agent = 1, .network = "sbnet" };
	struct got g = { .started = 0 };
	struct exec_hooks h = { .sink = sink, .sink_arg = &g, .started = started,
				.started_arg = &g };
	struct exec_result out;
	struct err e;

	a_sandbox(&s);
	f.exit_code = 3;
	assert_int_not_equal(exec_run(&s, &x, &h, &out, &e), 0);
	assert_int_equal(e.status, 502);
	assert_string_equal(e.msg, "the sandbox's agent cannot be reached: fake: no address on sbnet");
	assert_string_equal(f.calls, "address");
	assert_string_equal(out.backend, "agent");
	assert_int_equal(g.started, 0);
	/* No key: made before the agent, through the engine. */
	s.agent_key[0] = 0;
	assert_int_equal(exec_run(&s, &x, &h, &out, &e), 0);
	assert_string_equal(f.calls, "address exec");
	assert_string_equal(out.backend, "docker");
	assert_string_equal(out.agent_error, "the sandbox has no agent key (made before the agent)");
	assert_string_equal(f.id, "fakebox1");
	assert_string_equal(f.argv[0], "bash");
	assert_string_equal(f.argv[3], "sandboxd-exec");
	assert_string_equal(f.argv[4], "5000");
	assert_string_equal(f.argv[5], "echo hi");
	assert_string_equal(f.workdir, "/workspace/repo");
	assert_int_equal(f.stdin_tied, 1);
	assert_int_equal(g.started, 1);
	assert_string_equal(g.out, "out\n");
	assert_string_equal(g.err, "err\n");
	assert_int_equal(out.exit_code, 3);
	assert_int_equal(out.timed_out, 0);
	/* The call's own deadline passed: a timeout, exit 124, not an error. */
	f.timeout = 1;
	x.agent = 0;
	assert_int_equal(exec_run(&s, &x, &h, &out, &e), 0);
	assert_int_equal(out.timed_out, 1);
	assert_int_equal(out.exit_code, 124);
	assert_string_equal(f.calls, "address exec exec");
}

/* A detached exec, a short internal command, a cwd check and the end. */
static void test_detached_run_stat_remove(void **state)
{
	struct sandbox s;
	struct exec_spec x = { .cmd = "sleep 1", .cwd = "sub", .workdir = "/workspace/repo/sub",
			       .timeout_ms = 1000 };
	const char *argv[] = { "true", NULL };
	char id[EXEC_ID_LEN + 1];
	struct sandbox_output so;
	struct exec_result out;
	int code = -1;
	struct err e;

	a_sandbox(&s);
	assert_int_equal(exec_detach_start(&s, &x, id, &out, &e), 0);
	assert_string_equal(f.argv[3], "sandboxd-detach");
	assert_string_equal(f.argv[4], id);
	f.exit_code = 7;
	assert_int_equal(sandbox_run("fakebox1", argv, &so, &code, &e), 0);
	assert_int_equal(code, 7);
	assert_string_equal(so.out, "out\n");
	assert_int_equal(exec_check_workdir(&s, &x, &e), ERR_NOTDIR);
	assert_string_equal(e.msg, "not a directory: sub");
	f.is_dir = 1;
	assert_int_equal(exec_check_workdir(&s, &x, &e), 0);
	sandbox_remove_container("fakebox1");
	assert_string_equal(f.calls, "exec_detached exec path_stat path_stat remove");
	assert_string_equal(f.id, "fakebox1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_clone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detached_run_stat_remove, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
