/* docker_smoke.c: the Docker client against the real engine and the runner image.
 *
 *   docker-smoke LABEL [IMAGE]
 *
 * LABEL ("key=value") goes on the one container it makes, so that the caller
 * (tests/integration/t_docker.sh) can find and remove it whatever happens. Prints one
 * line per check, "ok   name" or "FAIL name: why", a "time" line per measured call, and
 * exits 1 when a check failed. The container is removed before it exits, also after a
 * failed check. Settings it reads (this program, not the module): SANDBOXD_DOCKER_HOST. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/tar.h"
#include "sandboxd/common/banned.h"

static int failures;
static char container[DOCKER_ID_MAX + 1];
static char stdin_box[DOCKER_ID_MAX + 1];

static void ok(const char *name)
{
	printf("ok   %s\n", name);
	fflush(stdout);
}

static void fail(const char *name, const char *why)
{
	printf("FAIL %s: %s\n", name, why);
	fflush(stdout);
	failures++;
}

static void check(int cond, const char *name, const char *why)
{
	if (cond)
		ok(name);
	else
		fail(name, why);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void timing(const char *what, double start)
{
	printf("time %s %.1f ms\n", what, now() - start);
}

struct out {
	struct buf b[3];
};

static int collect(void *arg, int stream, const char *data, size_t len)
{
	struct out *o = arg;
	size_t room = o->b[stream].max - o->b[stream].len;

	/* Keeps what fits; the byte counts come from the client. */
	return buf_append(&o->b[stream], data, len < room ? len : room) == ERR_NOMEM ? ERR_NOMEM : 0;
}

struct run {
	int rc;
	int exit_code;
	struct docker_exec_io io;
	struct out out;
	struct err e;
};

/* Creates, starts and inspects one exec; output in r->out (bounded at 64 KiB each). */
static void run(struct run *r, const char *const *cmd, const char *const *env,
		const char *workdir, long timeout_ms)
{
	struct docker_exec_opts o = { .cmd = cmd, .env = env, .workdir = workdir };
	struct docker_exec_state st;
	char id[DOCKER_ID_MAX + 1];

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 3; i++)
		buf_init(&r->out.b[i], 64 * 1024);
	r->exit_code = -1;
	r->io.sink = collect;
	r->io.sink_arg = &r->out;
	if ((r->rc = docker_exec_create(container, &o, id, 10000, &r->e)) ||
	    (r->rc = docker_exec_start(id, &r->io, timeout_ms, &r->e)) ||
	    (r->rc = docker_exec_inspect(id, &st, 10000, &r->e)))
		return;
	r->exit_code = st.exit_code;
}

static void run_release(struct run *r)
{
	for (int i = 0; i < 3; i++)
		buf_release(&r->out.b[i]);
}

static const char *s(const struct buf *b)
{
	return b->data ? b->data : "";
}

struct listed {
	const char *want;
	int found;
	int count;
	char value[128];
};

static int on_list(void *arg, const char *id, const char *value, const char *state)
{
	struct listed *l = arg;

	l->count++;
	if (strcmp(id, l->want) == 0) {
		l->found = 1;
		snprintf(l->value, sizeof(l->value), "%s", value);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *label = argc > 1 ? argv[1] : NULL;
	const char *image = argc > 2 ? argv[2] : "sandboxd-runner:minimal";
	const char *labels[3], *extra_hosts[] = {"sandboxd.internal:host-gateway", NULL};
	const char *env[] = {"SANDBOX_ID=smoke", "PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	struct docker_conf conf = {getenv("SANDBOXD_DOCKER_HOST"), NULL, NULL, NULL};
	struct box_state cs;
	struct box_path_stat ps;
	struct tar_file f;
	struct run r;
	struct err e;
	struct buf tar;
	char why[2048], sandbox_label[160], type;
	unsigned char *bin = NULL;
	size_t binlen = 300 * 1024 + 17;
	double t;
	int rc;

	if (!label || !strchr(label, '=') || strlen(label) > 100) {
		fprintf(stderr, "usage: docker-smoke KEY=VALUE [IMAGE]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(sandbox_label, sizeof(sandbox_label), "sandboxd.sandbox=smoke-%ld", (long)getpid());
	labels[0] = label;
	labels[1] = sandbox_label;
	labels[2] = NULL;
	if ((rc = docker_init(&conf, &e))) {
		fail("docker_init", e.msg);
		return 1;
	}
	if ((rc = docker_ping(NULL, &e))) {
		fail("ping", e.msg);
		return 1;
	}
	ok("ping");

	/* Errors carry Docker's own message and map to our codes. */
	rc = docker_container_inspect("sandboxd-no-such-container", &cs, 5000, &e);
	snprintf(why, sizeof(why), "rc %d: %s", rc, e.msg);
	check(rc == ERR_NOTFOUND &&
	      strcmp(e.msg, "docker inspect container: No such container: "
			    "sandboxd-no-such-container (404)") == 0,
	      "missing container: ERR_NOTFOUND with Docker's message", why);
	{
		struct docker_create bad = {.image = "sandboxd-no-such-image:none", .labels = labels};
		char id[DOCKER_ID_MAX + 1];
		rc = docker_container_create(&bad, id, 10000, &e);
		snprintf(why, sizeof(why), "rc %d: %s", rc, e.msg);
		check(rc == ERR_NOIMAGE && strstr(e.msg, "No such image") && strstr(e.msg, "(404)"),
		      "missing image: ERR_NOIMAGE with Docker's message", why);
	}
	rc = docker_container_start("bad/id", 1000, &e);
	check(rc == ERR_INVALID, "an id with '/' is refused before any request", e.msg);

	/* Create with the hardening, start, inspect. */
	{
		struct docker_create c = {
			.image = image, .labels = labels, .env = env,
			.extra_hosts = extra_hosts, .memory = 512LL << 20,
			.nano_cpus = 1000000000LL, .pids_limit = 256,
		};
		t = now();
		rc = docker_container_create(&c, container, 30000, &e);
		timing("container create", t);
	}
	if (rc) {
		fail("create container", e.msg);
		return 1;
	}
	check(strlen(container) == 64, "create returns a 64-hex id", container);
	t = now();
	rc = docker_container_start(container, 60000, &e);
	timing("container start", t);
	if (rc) {
		fail("start container", e.msg);
		goto out;
	}
	ok("start container");
	rc = docker_container_start(container, 10000, &e);
	check(rc == 0, "starting a running container is not an error", e.msg);
	rc = docker_container_inspect(container, &cs, 10000, &e);
	snprintf(why, sizeof(why), "rc %d status %s running %d: %s", rc, cs.status, cs.running, e.msg);
	check(rc == 0 && cs.running && strcmp(cs.status, "running") == 0 && cs.pid > 0,
	      "inspect: running", why);

	/* The hardening, seen from inside. */
	{
		const char *cmd[] = {"bash", "-c",
			"id -u; id -g; grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status | tr -s '\\t' ' ';"
			"cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max;"
			"cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max;"
			"getent hosts sandboxd.internal | awk '{print $1}' | grep -c .;"
			"ps -o comm= -p 1; echo $SANDBOX_ID; pwd", NULL};
		const char *want =
			"61000\n61000\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\nNoNewPrivs: 1\n"
			"256\n536870912\n1\ndocker-init\nsmoke\n/workspace\n";
		run(&r, cmd, env, NULL, 20000);
		snprintf(why, sizeof(why), "rc %d exit %d stdout [%s] stderr [%s] %s", r.rc,
			 r.exit_code, s(&r.out.b[1]), s(&r.out.b[2]), r.e.msg);
		check(r.rc == 0 && r.exit_code == 0 && strcmp(s(&r.out.b[1]), want) == 0,
		      "hardening: uid/gid 61000 (the default user), no capabilities, no-new-privileges, pids and memory "
		      "limits, init, host-gateway name, env, /workspace", why);
		run_release(&r);
	}

	/* Separate streams, a non-zero exit, env and workdir. */
	{
		const char *cmd[] = {"bash", "-c",
			"printf 'out1\\n'; printf 'err1\\n' >&2; printf 'out2 %s\\n' \"$FOO\"; "
			"printf 'err2 %s\\n' \"$PWD\" >&2; exit 3", NULL};
		const char *xenv[] = {"FOO=bar baz", NULL};
		t = now();
		run(&r, cmd, xenv, "/tmp", 20000);
		timing("exec round trip (create, start, inspect)", t);
		snprintf(why, sizeof(why), "rc %d exit %d stdout [%s] stderr [%s] %s", r.rc,
			 r.exit_code, s(&r.out.b[1]), s(&r.out.b[2]), r.e.msg);
		check(r.rc == 0 && r.exit_code == 3, "exec: exit code 3 from exec inspect", why);
		check(strcmp(s(&r.out.b[1]), "out1\nout2 bar baz\n") == 0 &&
		      strcmp(s(&r.out.b[2]), "err1\nerr2 /tmp\n") == 0 &&
		      r.io.bytes[1] == 18 && r.io.bytes[2] == 15,
		      "exec: stdout and stderr apart, env and workdir applied", why);
		run_release(&r);
	}
	{
		const char *cmd[] = {"true", NULL};
		t = now();
		run(&r, cmd, NULL, NULL, 20000);
		timing("exec true round trip", t);
		check(r.rc == 0 && r.exit_code == 0, "exec true", r.e.msg);
		run_release(&r);
	}
	{
		const char *cmd[] = {"no-such-command-here", NULL};
		run(&r, cmd, NULL, NULL, 20000);
		snprintf(why, sizeof(why), "rc %d exit %d: %s", r.rc, r.exit_code, r.e.msg);
		/* runc refuses it, and Docker 20.10 reports 126 (bash -c would say 127) */
		check(r.rc == 0 && (r.exit_code == 126 || r.exit_code == 127),
		      "exec of a missing command: exit 126 or 127, not a call error", why);
		run_release(&r);
	}
	/* 3 MB through the demultiplexer, both streams; the sink keeps 64 KiB, counts all. */
	{
		const char *cmd[] = {"bash", "-c",
			"head -c 3000000 /dev/urandom; head -c 1000001 /dev/zero >&2", NULL};
		t = now();
		run(&r, cmd, NULL, NULL, 30000);
		timing("exec 3 MB stdout + 1 MB stderr", t);
		snprintf(why, sizeof(why), "rc %d exit %d bytes %llu %llu: %s", r.rc, r.exit_code,
			 (unsigned long long)r.io.bytes[1], (unsigned long long)r.io.bytes[2], r.e.msg);
		check(r.rc == 0 && r.exit_code == 0 && r.io.bytes[1] == 3000000 &&
		      r.io.bytes[2] == 1000001, "exec: 3 MB + 1 MB of output counted exactly", why);
		run_release(&r);
	}
	/* The caller's deadline stops a long exec. */
	{
		const char *cmd[] = {"sleep", "60", NULL};
		t = now();
		run(&r, cmd, NULL, NULL, 1000);
		double took = now() - t;
		snprintf(why, sizeof(why), "rc %d timed_out %d after %.0f ms: %s", r.rc,
			 r.io.timed_out, took, r.e.msg);
		check(r.rc == ERR_FAIL && r.io.timed_out && took < 5000,
		      "exec start: the deadline stops the call", why);
		run_release(&r);
		const char *kill[] = {"pkill", "-f", "^sleep 60$", NULL};
		run(&r, kill, NULL, NULL, 10000);
		check(r.rc == 0 && r.exit_code == 0, "the timed-out command is killed by a second exec",
		      r.e.msg);
		run_release(&r);
	}

	/* Archive: write a binary file under new directories, read it back byte for byte. */
	bin = malloc(binlen);
	if (!bin) {
		fail("malloc", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < binlen; i++)
		bin[i] = (unsigned char)((i * 2654435761u) >> 13);
	bin[0] = 0;
	bin[1] = 0xff;
	buf_init(&tar, 1 << 20);
	rc = tar_write_file(&tar, "smoke/sub dir/bin.dat", 0755, 61000, (int64_t)time(NULL), bin, binlen, &e);
	if (rc) {
		fail("tar_write_file", e.msg);
		buf_release(&tar);
		goto out;
	}
	t = now();
	rc = docker_archive_put(container, "/workspace", tar.data, tar.len, 30000, &e);
	timing("archive put (300 KiB)", t);
	buf_release(&tar);
	check(rc == 0, "archive put", e.msg);
	t = now();
	rc = docker_archive_read_file(container, "/workspace/smoke/sub dir/bin.dat", 1 << 20, &f,
				      &type, 30000, &e);
	timing("archive get (300 KiB)", t);
	snprintf(why, sizeof(why), "rc %d size %llu: %s", rc, (unsigned long long)f.size, e.msg);
	check(rc == 0 && f.size == binlen && memcmp(f.data, bin, binlen) == 0 &&
	      strcmp(f.name, "bin.dat") == 0 && f.mode == 0755,
	      "archive get: the same bytes, name and mode", why);
	tar_file_release(&f);
	{
		const char *cmd[] = {"stat", "-c", "%u:%g %a %s", "/workspace/smoke/sub dir/bin.dat",
				     "/workspace/smoke", "/workspace", NULL};
		run(&r, cmd, NULL, NULL, 10000);
		snprintf(why, sizeof(why), "stdout [%s] %s", s(&r.out.b[1]), r.e.msg);
		char want[200];
		snprintf(want, sizeof(want), "61000:61000 755 %zu\n61000:61000 755 ", binlen);
		check(r.rc == 0 && strncmp(s(&r.out.b[1]), want, strlen(want)) == 0,
		      "written file and directories belong to 61000:61000 (the owner the archive gives)", why);
		run_release(&r);
	}
	t = now();
	rc = docker_archive_stat(container, "/workspace/smoke/sub dir/bin.dat", &ps, 10000, &e);
	timing("archive stat", t);
	snprintf(why, sizeof(why), "rc %d size %lld dir %d name %s: %s", rc, (long long)ps.size,
		 ps.is_dir, ps.name, e.msg);
	check(rc == 0 && ps.size == (int64_t)binlen && !ps.is_dir && strcmp(ps.name, "bin.dat") == 0,
	      "archive stat of a file", why);
	rc = docker_archive_stat(container, "/workspace/smoke", &ps, 10000, &e);
	check(rc == 0 && ps.is_dir, "archive stat of a directory", e.msg);
	rc = docker_archive_stat(container, "/workspace/nothing-here", &ps, 10000, &e);
	snprintf(why, sizeof(why), "rc %d: %s", rc, e.msg);
	check(rc == ERR_NOTFOUND, "archive stat of a missing path: ERR_NOTFOUND", why);

	type = 0;
	rc = docker_archive_read_file(container, "/workspace/smoke", 1 << 20, &f, &type, 10000, &e);
	snprintf(why, sizeof(why), "rc %d type %c: %s", rc, type ? type : '-', e.msg);
	check(rc == ERR_INVALID && type == TAR_DIR && f.data == NULL,
	      "archive get of a directory: ERR_INVALID, TAR_DIR", why);
	rc = docker_archive_read_file(container, "/workspace/nothing-here", 1 << 20, &f, &type,
				      10000, &e);
	snprintf(why, sizeof(why), "rc %d: %s", rc, e.msg);
	check(rc == ERR_NOTFOUND, "archive get of a missing path: ERR_NOTFOUND", why);
	rc = docker_archive_read_file(container, "/workspace/smoke/sub dir/bin.dat", 1000, &f,
				      &type, 10000, &e);
	snprintf(why, sizeof(why), "rc %d size %llu: %s", rc, (unsigned long long)f.size, e.msg);
	check(rc == ERR_TOOBIG && f.size == binlen && f.data == NULL,
	      "archive get past the limit: ERR_TOOBIG with the size", why);
	{
		struct buf raw;

		buf_init(&raw, 1024);
		rc = docker_archive_get(container, "/workspace/smoke/sub dir/bin.dat", &raw, 10000, &e);
		check(rc == ERR_TOOBIG && raw.len <= 1024, "archive get into a bounded buffer: ERR_TOOBIG",
		      e.msg);
		buf_release(&raw);
	}
	rc = docker_archive_put(container, "/workspace/no-such-dir", "x", 1, 10000, &e);
	snprintf(why, sizeof(why), "rc %d: %s", rc, e.msg);
	check(rc == ERR_NOTFOUND, "archive put into a missing directory: ERR_NOTFOUND", why);

	/* List by label. */
	{
		struct listed l = {container, 0, 0, ""};
		rc = docker_container_list(sandbox_label, NULL, on_list, &l, 10000, &e);
		snprintf(why, sizeof(why), "rc %d found %d count %d value %s: %s", rc, l.found,
			 l.count, l.value, e.msg);
		check(rc == 0 && l.found && l.count == 1 &&
		      strcmp(l.value, strchr(sandbox_label, '=') + 1) == 0,
		      "list by label finds the container and the label's value", why);
		memset(&l, 0, sizeof(l));
		l.want = container;
		rc = docker_container_list("sandboxd.sandbox", NULL, on_list, &l, 10000, &e);
		check(rc == 0 && l.found, "list by label key", e.msg);
	}

	/* A container's input, written before its start (a cold create's parameters): the
	 * bytes whole, more than a pipe holds, and then its end, which the command waits for
	 * before it renames the file. */
	{
		const char *cmd[] = {"bash", "-c", "cat >/tmp/in.part && mv /tmp/in.part /tmp/in; "
				     "exec sleep infinity", NULL};
		struct docker_create c = {.image = image, .labels = labels, .cmd = cmd,
					  .open_stdin = 1};
		size_t n = 200 * 1024 + 3;
		int tries;

		rc = docker_container_create(&c, stdin_box, 30000, &e);
		check(rc == 0, "create a container with an input", e.msg);
		t = now();
		if (!rc)
			rc = docker_stdin_put(stdin_box, bin, n, 10000, &e);
		timing("attach stdin and write 200 KiB", t);
		check(rc == 0, "its input takes 200 KiB before the start", e.msg);
		if (!rc)
			rc = docker_container_start(stdin_box, 60000, &e);
		check(rc == 0, "and it starts", e.msg);
		memset(&f, 0, sizeof(f));
		for (tries = 0; !rc && tries < 100; tries++) {
			rc = docker_archive_read_file(stdin_box, "/tmp/in", 1 << 20, &f, &type, 10000,
						      &e);
			if (rc != ERR_NOTFOUND)
				break;
			rc = 0;
			usleep(50000);
		}
		snprintf(why, sizeof(why), "rc %d size %llu after %d looks: %s", rc,
			 (unsigned long long)f.size, tries, e.msg);
		check(rc == 0 && f.size == n && memcmp(f.data, bin, n) == 0,
		      "the process read the same bytes, then the end of its input", why);
		tar_file_release(&f);
		rc = docker_stdin_put("sandboxd-no-such-container", "x", 1, 5000, &e);
		check(rc == ERR_FAIL && strcmp(e.msg, "docker attach stdin: answered HTTP/1.1 404 "
						      "Not Found") == 0,
		      "the input of a missing container: refused with the engine's status", e.msg);
	}

out:
	free(bin);
	if (stdin_box[0] && docker_container_remove(stdin_box, 30000, &e))
		fail("remove the container with an input", e.msg);
	if (container[0]) {
		t = now();
		rc = docker_container_remove(container, 30000, &e);
		timing("container remove (force)", t);
		check(rc == 0, "remove container", e.msg);
		rc = docker_container_remove(container, 30000, &e);
		check(rc == ERR_NOTFOUND, "removing it again: ERR_NOTFOUND", e.msg);
		{
			struct listed l = {container, 0, 0, ""};
			rc = docker_container_list(label, NULL, on_list, &l, 10000, &e);
			snprintf(why, sizeof(why), "rc %d count %d: %s", rc, l.count, e.msg);
			check(rc == 0 && l.count == 0, "nothing with the label is left", why);
		}
	}
	docker_cleanup();
	return failures ? 1 : 0;
}
