/* test_agent.c: the real sandboxd-agent (built beside this binary) on a free loopback port,
 * with its key in a temporary folder, driven by the real client (agent_client.h): the
 * mutual key check, attached execs (streams, exit codes, the time limit ending a tree that
 * ignores SIGTERM and one that left with setsid), detached execs read by offset from
 * another connection and killed, files byte-exact and a symbolic link refused, oversized
 * frames refused both ways. Each refusal is checked with its words, beside the case that
 * works. The folder and the agent go at the end, also when a test fails. */
#define _GNU_SOURCE /* nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/common/agentwire.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/banned.h"

struct agent {
	pid_t pid;
	int port;
};

static char dir[64], agent_bin[4096], key_path[128];
static unsigned char key[32];
static struct agent main_agent;
static const char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", NULL };

/* Starts the agent with key_file (and at most max_conns handlers, NULL: the default); its
 * port from the line it prints. */
static int agent_start_max(struct agent *a, const char *key_file, const char *max_conns)
{
	char execs[128], line[128] = "";
	int out[2];
	ssize_t n = 0, r;

	snprintf(execs, sizeof(execs), "%s/execs", dir);
	if (pipe(out))
		return -1;
	if ((a->pid = fork()) == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execl(agent_bin, agent_bin, "--listen", "127.0.0.1:0", "--key", key_file, "--dir",
		      execs, "--detach-cap", "65536", max_conns ? "--max-conns" : (char *)NULL,
		      max_conns, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	while (n < (ssize_t)sizeof(line) - 1 && !strchr(line, '\n') &&
	       (r = read(out[0], line + n, sizeof(line) - 1 - (size_t)n)) > 0)
		n += r;
	close(out[0]);
	if (sscanf(line, "sandboxd-agent: listening on 127.0.0.1:%d", &a->port) != 1)
		return -1;
	return 0;
}

static int agent_start(struct agent *a, const char *key_file)
{
	return agent_start_max(a, key_file, NULL);
}

static void agent_stop(struct agent *a)
{
	if (a->pid > 0) {
		kill(a->pid, SIGTERM);
		waitpid(a->pid, NULL, 0);
	}
	a->pid = 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static int teardown(void **state)
{
	agent_stop(&main_agent);
	if (dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = 0;
	return 0;
}

static int setup(void **state)
{
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/test-agent.XXXXXX");
	if (!mkdtemp(dir) || getrandom(key, sizeof(key), 0) != sizeof(key))
		return -1;
	snprintf(key_path, sizeof(key_path), "%s/key", dir);
	if ((fd = open(key_path, O_WRONLY | O_CREAT | O_EXCL, 0400)) < 0 ||
	    write(fd, key, sizeof(key)) != sizeof(key) || close(fd))
		return -1;
	if (agent_start(&main_agent, key_path)) {
		teardown(state);
		return -1;
	}
	return 0;
}

static void conn(struct agent_conn *c)
{
	struct err e = { .msg = "" };
	int rc = agent_connect(c, "127.0.0.1", main_agent.port, key, sizeof(key), 5000, &e);

	if (rc)
		fail_msg("connect: %s", e.msg);
}

struct out {
	struct buf b[3];
	int started;
};

static int collect(void *arg, int stream, const char *p, size_t n)
{
	struct out *o = arg;

	return buf_append(&o->b[stream], p, n);
}

static int on_started(void *arg)
{
	((struct out *)arg)->started++;
	return 0;
}

/* o made empty for a call's output, and a connection for the call. */
static void out_open(struct out *o, struct agent_conn *c)
{
	memset(o, 0, sizeof(*o));
	for (int i = 0; i < 3; i++)
		buf_init(&o->b[i], 4 << 20);
	conn(c);
}

/* Runs cmd attached with a limit; its output in o (released by the caller). */
static int run(const char *cmd, int64_t ms, struct out *o, struct agent_exit *x, struct err *e)
{
	struct agent_exec_req r = { .cmd = cmd, .env = env, .timeout_ms = ms };
	struct agent_exec_hooks h = { .started = on_started, .started_arg = o, .sink = collect, .sink_arg = o };
	struct agent_conn c;
	int rc;

	out_open(o, &c);
	rc = agent_exec(&c, &r, &h, x, e);
	agent_close(&c);
	return rc;
}

static void out_release(struct out *o)
{
	for (int i = 0; i < 3; i++)
		buf_release(&o->b[i]);
}

static void test_auth(void **state)
{
	unsigned char wrong[32];
	struct agent_conn c;
	struct agent nokey = { 0, 0 };
	struct err e = { .msg = "" };
	char path[160], want[300];

	memcpy(wrong, key, sizeof(wrong));
	wrong[0] ^= 1;
	assert_int_equal(agent_connect(&c, "127.0.0.1", main_agent.port, wrong, sizeof(wrong),
				       5000, &e), ERR_DENIED);
	assert_string_equal(e.msg, "agent refused the connection: authentication failed: wrong key");
	assert_int_equal(c.fd, -1);
	assert_int_equal(agent_connect(&c, "127.0.0.1", main_agent.port, key, sizeof(key), 5000,
				       &e), 0);
	agent_close(&c);

	/* No key file: every connection refused, saying so. */
	snprintf(path, sizeof(path), "%s/nokey", dir);
	assert_int_equal(agent_start(&nokey, path), 0);
	assert_int_equal(agent_connect(&c, "127.0.0.1", nokey.port, key, sizeof(key), 5000, &e),
			 ERR_DENIED);
	agent_stop(&nokey);
	snprintf(want, sizeof(want), "agent refused the connection: agent has no key: '%s': "
		 "No such file or directory", path);
	assert_string_equal(e.msg, want);

	/* A key file that is a symbolic link is not followed (O_NOFOLLOW). */
	snprintf(path, sizeof(path), "%s/keylink", dir);
	assert_int_equal(symlink(key_path, path), 0);
	assert_int_equal(agent_start(&nokey, path), 0);
	assert_int_equal(agent_connect(&c, "127.0.0.1", nokey.port, key, sizeof(key), 5000, &e),
			 ERR_DENIED);
	agent_stop(&nokey);
	snprintf(want, sizeof(want), "agent refused the connection: agent has no key: '%s': "
		 "Symbolic link loop", path);    /* musl's words for ELOOP */
	assert_string_equal(e.msg, want);
}

static void test_exec_streams(void **state)
{
	struct agent_exit x;
	struct err e = { .msg = "" };
	struct out o;

	assert_int_equal(run("echo hi; echo err >&2", 10000, &o, &x, &e), 0);
	assert_string_equal(o.b[1].data, "hi\n");
	assert_string_equal(o.b[2].data, "err\n");
	assert_int_equal(o.started, 1);
	assert_int_equal(x.exit_code, 0);
	assert_false(x.timed_out);
	out_release(&o);

	assert_int_equal(run("exit 3", 10000, &o, &x, &e), 0);
	assert_int_equal(x.exit_code, 3);
	out_release(&o);

	/* Exactly the given environment, nothing of the agent's. */
	assert_int_equal(run("env | sort | grep -v '^_=\\|^PWD=\\|^SHLVL='", 10000, &o, &x, &e), 0);
	assert_string_equal(o.b[1].data, "HOME=/tmp\nPATH=/usr/local/bin:/usr/bin:/bin\n");
	out_release(&o);

	/* Only its three descriptors (ls adds the one it reads the folder with). */
	assert_int_equal(run("ls /proc/self/fd", 10000, &o, &x, &e), 0);
	assert_string_equal(o.b[1].data, "0\n1\n2\n3\n");
	out_release(&o);

	/* A working directory that is not there is an error of its own, before any output. */
	{
		struct agent_exec_req r = { .cmd = "pwd", .env = env, .timeout_ms = 1000,
					    .cwd = "/nonexistent-dir" };
		struct agent_exec_hooks h = { .sink = collect, .sink_arg = &o };
		struct agent_conn c;

		memset(&o, 0, sizeof(o));
		conn(&c);
		assert_int_equal(agent_exec(&c, &r, &h, &x, &e), ERR_NOTFOUND);
		assert_string_equal(e.msg, "agent: no such directory: /nonexistent-dir");
		agent_close(&c);
	}
}

static int alive(pid_t pid)
{
	char path[64], b[256];
	int fd, n;
	char *q;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return 0;
	n = (int)read(fd, b, sizeof(b) - 1);
	close(fd);
	b[n > 0 ? n : 0] = 0;
	q = strrchr(b, ')');
	return q && q[1] && q[2] != 'Z';
}

static void test_exec_limit(void **state)
{
	long long t0 = agentwire_now_ms(), took;
	struct agent_exit x;
	struct err e = { .msg = "" };
	struct out o;
	pid_t stray;

	/* The main process ignores SIGTERM: SIGKILL 5 s after it. */
	assert_int_equal(run("trap '' TERM; sleep 100", 1000, &o, &x, &e), 0);
	took = agentwire_now_ms() - t0;
	assert_true(x.timed_out);
	assert_int_equal(x.signal, SIGKILL);
	/* 6 s; under 30 s is enough to tell it from the 100 s of the sleep, also on a machine
	 * loaded by a whole test run (a bound of 10 s once failed there). */
	assert_true(took >= 5800 && took < 30000);
	assert_true(x.duration_ms >= 5800 && x.duration_ms < 30000);
	out_release(&o);

	/* One that left the session with setsid is ended with its exec. */
	assert_int_equal(run("setsid sleep 100 >/dev/null 2>&1 & echo $!; sleep 100", 1000, &o,
			     &x, &e), 0);
	assert_true(x.timed_out);
	stray = (pid_t)strtol(o.b[1].data, NULL, 10);
	assert_true(stray > 0);
	assert_false(alive(stray));
	out_release(&o);

	/* A background process of an exec that ends by itself outlives it (servers). */
	assert_int_equal(run("setsid sleep 100 >/dev/null 2>&1 & echo $!", 10000, &o, &x, &e), 0);
	assert_false(x.timed_out);
	stray = (pid_t)strtol(o.b[1].data, NULL, 10);
	assert_true(stray > 0 && alive(stray));
	kill(stray, SIGKILL);
	out_release(&o);

	/* Its output is read to EOF, as through Docker exec: a background job's too. */
	assert_int_equal(run("(sleep 1; echo late) & echo early", 10000, &o, &x, &e), 0);
	assert_false(x.timed_out);
	assert_string_equal(o.b[1].data, "early\nlate\n");
	out_release(&o);
}

/* Reads a detached exec from a new connection. */
static int dread(const char *id, uint64_t out_off, uint64_t err_off, struct out *o,
		 struct agent_dstatus *st, struct err *e)
{
	const uint64_t want[2] = { out_off, err_off };
	struct agent_conn c;
	int rc;

	out_open(o, &c);
	rc = agent_detach_read(&c, id, want, 1 << 20, collect, o, st, e);
	agent_close(&c);
	return rc;
}

/* Waits (at most 15 s) until the exec is no longer running. */
static void dwait(const char *id, struct agent_dstatus *st)
{
	struct err e = { .msg = "" };
	struct out o;

	for (int i = 0; i < 150; i++) {
		assert_int_equal(dread(id, 0, 0, &o, st, &e), 0);
		out_release(&o);
		if (!st->running)
			return;
		usleep(100000);
	}
	fail_msg("detached exec %s did not end", id);
}

static void dstart(const char *cmd, char id[AGENT_CLIENT_ID_MAX])
{
	struct agent_exec_req r = { .cmd = cmd, .env = env, .timeout_ms = 20000 };
	struct agent_conn c;
	struct err e = { .msg = "" };

	conn(&c);
	if (agent_detach_start(&c, &r, id, &e))
		fail_msg("detach: %s", e.msg);
	agent_close(&c);
}

static void test_detached(void **state)
{
	char id[AGENT_CLIENT_ID_MAX];
	struct agent_dstatus st;
	struct agent_conn c;
	struct err e = { .msg = "" };
	struct out o;

	dstart("echo one; sleep 0.5; echo two; echo e >&2; exit 4", id);
	assert_int_equal(strlen(id), 27);
	dwait(id, &st);
	assert_int_equal(st.x.exit_code, 4);
	assert_int_equal(dread(id, 0, 0, &o, &st, &e), 0);
	assert_string_equal(o.b[1].data, "one\ntwo\n");
	assert_string_equal(o.b[2].data, "e\n");
	assert_true(st.next[0] == 8 && st.next[1] == 2);
	out_release(&o);
	if (dread(id, 4, 2, &o, &st, &e))
		fail_msg("dread: %s", e.msg);
	assert_string_equal(o.b[1].data, "two\n");
	assert_int_equal(o.b[2].len, 0);
	assert_true(st.from[0] == 4 && st.next[0] == 8);
	out_release(&o);
	/* Past the end: no bytes, the end and the totals (the worker judges the offset). */
	assert_int_equal(dread(id, 100, 1, &o, &st, &e), 0);
	assert_true(st.from[0] == 8 && st.next[0] == 8 && st.total[0] == 8 && st.total[1] == 2);
	assert_true(o.b[1].len == 0 && st.from[1] == 1 && st.next[1] == 2);
	out_release(&o);
	assert_int_equal(dread("ex_000000000000000000000000", 0, 0, &o, &st, &e), ERR_NOTFOUND);
	assert_string_equal(e.msg, "agent: no such exec: ex_000000000000000000000000");
	out_release(&o);

	/* Output past the cap (64 KiB here): the oldest is dropped, offsets still count all. */
	dstart("head -c 200000 /dev/zero | tr '\\0' x", id);
	dwait(id, &st);
	assert_int_equal(dread(id, 0, 0, &o, &st, &e), 0);
	assert_true(st.from[0] >= 200000 - 65536 && st.next[0] == 200000 && st.total[0] == 200000);
	assert_int_equal(o.b[1].len, 200000 - st.from[0]);
	out_release(&o);

	/* A kill from another connection: TERM, the exit code of the signal. */
	dstart("sleep 100", id);
	conn(&c);
	assert_int_equal(agent_detach_kill(&c, id, SIGTERM, &e), 0);
	agent_close(&c);
	dwait(id, &st);
	assert_true(st.x.killed);
	assert_int_equal(st.x.exit_code, 128 + SIGTERM);
	conn(&c);
	assert_int_equal(agent_detach_kill(&c, id, 99, &e), ERR_INVALID);
	assert_string_equal(e.msg, "agent: signal must be TERM, KILL, INT or HUP");
	agent_close(&c);
}

static int fstart(void *arg, uint64_t size, struct err *e)
{
	return 0;
}

static int fbytes(void *arg, const char *p, size_t n, struct err *e)
{
	return buf_append(arg, p, n);
}

/* A reader source over memory in pieces of 1000 bytes, ending at stop (short of the size
 * when stop is less). */
struct pieces {
	const unsigned char *data;
	size_t off, stop;
};

static long pieces_read(void *arg, void *p, size_t n)
{
	struct pieces *pc = arg;
	size_t take = pc->stop - pc->off < n ? pc->stop - pc->off : n;

	if (take > 1000)
		take = 1000;
	memcpy(p, pc->data + pc->off, take);
	pc->off += take;
	return (long)take;
}

/* Each entry as one line (readdir's order: the test compares them as a set). */
static int list_entry(void *arg, const struct agent_entry *ent)
{
	struct buf *b = arg;

	if (ent->type == 1)
		return buf_printf(b, "%s %d %llu %o\n", ent->path, ent->type,
				  (unsigned long long)ent->size, ent->mode);
	return buf_printf(b, "%s %d\n", ent->path, ent->type);
}

static void test_files(void **state)
{
	size_t len = 1 << 20;
	unsigned char *data = malloc(len);
	struct buf got;
	struct files_sink sink = { fstart, fbytes, &got };
	struct agent_conn c;
	struct err e = { .msg = "" };
	char path[160], link[160], want[400];

	assert_non_null(data);
	assert_int_equal(getrandom(data, len, 0), (ssize_t)len);
	snprintf(path, sizeof(path), "%s/files/sub/blob", dir);
	struct files_source src = { .data = data, .size = len };
	conn(&c);
	assert_int_equal(agent_file_write(&c, path, 0640, &src, &e), 0);
	agent_close(&c);
	assert_int_equal(src.taken, len);
	buf_init(&got, 2 << 20);
	conn(&c);
	assert_int_equal(agent_file_read(&c, path, 2 << 20, &sink, &e), 0);
	agent_close(&c);
	assert_int_equal(got.len, len);
	assert_memory_equal(got.data, data, len);
	buf_release(&got);

	/* A directory in the way: refused with its words, though the data was on its way. */
	snprintf(link, sizeof(link), "%s/files/sub", dir);
	src.taken = 0;
	conn(&c);
	assert_int_equal(agent_file_write(&c, link, 0640, &src, &e), ERR_EXISTS);
	agent_close(&c);
	snprintf(want, sizeof(want), "agent: is a directory: %s", link);
	assert_string_equal(e.msg, want);

	/* A final symbolic link is not followed. */
	snprintf(link, sizeof(link), "%s/files/link", dir);
	assert_int_equal(symlink(path, link), 0);
	conn(&c);
	assert_int_equal(agent_file_read(&c, link, 2 << 20, &sink, &e), ERR_INVALID);
	agent_close(&c);
	snprintf(want, sizeof(want), "agent: not a regular file (a symbolic link): %s", link);
	assert_string_equal(e.msg, want);

	/* From a reader, in pieces: the same bytes. */
	struct pieces pc = { data, 0, len };
	struct files_source rd = { .read = pieces_read, .arg = &pc, .size = len };
	snprintf(path, sizeof(path), "%s/streamed", dir);  /* not in test_list's folder */
	conn(&c);
	assert_int_equal(agent_file_write(&c, path, 0600, &rd, &e), 0);
	agent_close(&c);
	buf_clear(&got);
	conn(&c);
	assert_int_equal(agent_file_read(&c, path, 2 << 20, &sink, &e), 0);
	agent_close(&c);
	assert_int_equal(got.len, len);
	assert_memory_equal(got.data, data, len);

	/* A reader that ends short of the size: refused, and nothing under the name, neither
	 * the file nor the old one replaced. */
	struct pieces half = { data + 1, 0, len / 2 };
	struct files_source short_rd = { .read = pieces_read, .arg = &half, .size = len };
	conn(&c);
	assert_int_equal(agent_file_write(&c, path, 0600, &short_rd, &e), ERR_INVALID);
	agent_close(&c);
	assert_string_equal(e.msg, "the body ended before its length");
	buf_clear(&got);
	conn(&c);
	assert_int_equal(agent_file_read(&c, path, 2 << 20, &sink, &e), 0);
	agent_close(&c);
	assert_memory_equal(got.data, data, len);
	buf_release(&got);

	free(data);
}

/* Past --max-conns a connection is refused with words, and one is taken again once a
 * slot is free. */
static void test_busy(void **state)
{
	struct agent one = { 0, 0 };
	struct agent_conn held, c;
	struct err e = { .msg = "" };
	int rc = -1;

	assert_int_equal(agent_start_max(&one, key_path, "1"), 0);
	assert_int_equal(agent_connect(&held, "127.0.0.1", one.port, key, sizeof(key), 5000, &e),
			 0);
	assert_int_equal(agent_connect(&c, "127.0.0.1", one.port, key, sizeof(key), 5000, &e),
			 ERR_LIMIT);
	assert_string_equal(e.msg, "agent: agent busy: too many connections");
	agent_close(&held);
	/* The handler lingers until our end closes, then the agent reaps it. */
	for (int i = 0; i < 50 && rc; i++) {
		usleep(50000);
		if (!(rc = agent_connect(&c, "127.0.0.1", one.port, key, sizeof(key), 5000, &e)))
			agent_close(&c);
	}
	agent_stop(&one);
	assert_int_equal(rc, 0);
}

/* A plain TCP connection to the agent, without the client's handshake. */
static int tcp_raw_connect(int port, int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	return *fd < 0 ? -1 : connect(*fd, (struct sockaddr *)&a, sizeof(a));
}

/* test_files' folder listed (the folder, the file, the link as a link), a file over the
 * limit, a remove. */
static void test_list(void **state)
{
	char path[160], want[400];
	struct agent_conn c;
	struct err e = { .msg = "" };

	struct buf names, got;
	struct files_sink sink = { fstart, fbytes, &got };
	int trunc = 1;

	snprintf(path, sizeof(path), "%s/files/sub/blob", dir);

	buf_init(&names, 4096);
	snprintf(want, sizeof(want), "%s/files", dir);
	conn(&c);
	assert_int_equal(agent_file_list(&c, want, 2, list_entry, &names, &trunc, &e), 0);
	agent_close(&c);
	assert_false(trunc);
	snprintf(want, sizeof(want), "%s/files/link 3\n", dir);
	assert_non_null(strstr(names.data, want));
	snprintf(want, sizeof(want), "%s/files/sub 2\n", dir);
	assert_non_null(strstr(names.data, want));
	snprintf(want, sizeof(want), "%s/files/sub/blob 1 1048576 640\n", dir);
	assert_non_null(strstr(names.data, want));
	assert_int_equal(names.len, strlen(want) + 2 * strlen(dir) + 27);
	buf_release(&names);
	conn(&c);
	assert_int_equal(agent_file_list(&c, path, 2, list_entry, &names, &trunc, &e),
			 ERR_NOTDIR);
	agent_close(&c);

	buf_init(&got, 2 << 20);
	/* Over the limit; then gone after a remove. */
	conn(&c);
	assert_int_equal(agent_file_read(&c, path, 1000, &sink, &e), ERR_TOOBIG);
	agent_close(&c);
	conn(&c);
	assert_int_equal(agent_file_remove(&c, path, 0, &e), 0);
	agent_close(&c);
	conn(&c);
	assert_int_equal(agent_file_read(&c, path, 2 << 20, &sink, &e), ERR_NOTFOUND);
	agent_close(&c);
	snprintf(want, sizeof(want), "agent: no such file: %s", path);
	assert_string_equal(e.msg, want);
	buf_release(&got);
}

/* A peer that sends bytes[0..n) to whoever connects, once; its port. */
static int fake_agent(const unsigned char *bytes, size_t n, pid_t *pid)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), cfd;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	if ((*pid = fork()) == 0) {
		if ((cfd = accept(fd, NULL, NULL)) >= 0 && write(cfd, bytes, n) == (ssize_t)n)
			sleep(2);
		_exit(0);
	}
	close(fd);
	return ntohs(a.sin_port);
}

static void test_oversized(void **state)
{
	struct agentwire_wait w = { agentwire_now_ms() + 5000, NULL, NULL };
	unsigned char hdr[AP_HDR], *buf = malloc(AP_MSG_MAX);
	struct agent_conn c;
	struct ap_hdr h;
	struct ap_msg m;
	struct err e = { .msg = "" };
	pid_t pid;
	int port;

	/* To the agent: a header over the bound is answered, its payload never read. */
	assert_non_null(buf);
	conn(&c);                      /* the positive case: a well-formed handshake */
	agent_close(&c);
	assert_int_equal(tcp_raw_connect(main_agent.port, &c.fd), 0);
	assert_int_equal(agentwire_read(c.fd, buf, AP_MSG_MAX, 0, &w, &h, &e), 0);
	assert_int_equal(h.type, AP_T_HELLO);
	agentproto_hdr_put(hdr, AP_T_AUTH, 1, AP_MSG_MAX + 1);
	assert_int_equal(agentwire_write(c.fd, hdr, sizeof(hdr), 5000, &e), 0);
	assert_int_equal(agentwire_read(c.fd, buf, AP_MSG_MAX, 0, &w, &h, &e), 0);
	assert_int_equal(h.type, AP_T_ERROR);
	assert_int_equal(agentproto_decode(h.type, buf, h.len, &m, &e), 0);
	assert_int_equal((int64_t)m.num[AP_F_CODE], ERR_TOOBIG);
	assert_string_equal(m.str[AP_F_MSG], "frame 'auth' of 65537 bytes is over its limit of 65536");
	close(c.fd);

	/* From an agent: the client refuses it the same way. */
	agentproto_hdr_put(hdr, AP_T_HELLO, 1, 70000);
	port = fake_agent(hdr, sizeof(hdr), &pid);
	assert_int_equal(agent_connect(&c, "127.0.0.1", port, key, sizeof(key), 5000, &e),
			 ERR_TOOBIG);
	assert_string_equal(e.msg, "agent: frame 'hello' of 70000 bytes is over its limit of 65536");
	waitpid(pid, NULL, 0);
	hdr[0] = 200;
	port = fake_agent(hdr, sizeof(hdr), &pid);
	assert_int_equal(agent_connect(&c, "127.0.0.1", port, key, sizeof(key), 5000, &e),
			 ERR_INVALID);
	assert_string_equal(e.msg, "agent: unknown frame type 200");
	waitpid(pid, NULL, 0);

	/* A hung agent (it accepts and says nothing): the connect's own time limit. */
	port = fake_agent(hdr, 0, &pid);
	w.deadline_ms = agentwire_now_ms();
	assert_int_equal(agent_connect(&c, "127.0.0.1", port, key, sizeof(key), 300, &e),
			 ERR_FAIL);
	assert_string_equal(e.msg, "agent: no answer in time");
	assert_true(agentwire_now_ms() - w.deadline_ms < 1500);
	waitpid(pid, NULL, 0);
	free(buf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_exec_streams),
		cmocka_unit_test(test_exec_limit),
		cmocka_unit_test(test_detached),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_busy),
	};
	const char *slash = strrchr(argv[0], '/');

	/* build/unit/test_agent runs build/sandboxd-agent (build-san/ likewise). */
	snprintf(agent_bin, sizeof(agent_bin), "%.*s/../sandboxd-agent",
		 slash ? (int)(slash - argv[0]) : 1, slash ? argv[0] : ".");
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("agent", tests, setup, teardown);
}
