/* test_handover.c: the hand-over message to the holder, over a real socket with real
 * descriptors, and the FastCGI records the holder writes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <cmocka.h>
#include "sandboxd/fcgirec.h"
#include "sandboxd/handover.h"
#include "sandboxd/banned.h"

static int listen_at(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static struct handover_wire wire(void)
{
	struct handover_wire w = { .fcgi_id = 1, .streamed = 1, .held_id = 42,
				   .request_started_ms = 1000, .exec_started_ms = 1010,
				   .timeout_ms = 5000, .idle_timeout = 1800 };

	snprintf(w.sandbox_id, sizeof(w.sandbox_id), "sb_0123");
	snprintf(w.request_id, sizeof(w.request_id), "req-1");
	snprintf(w.token, sizeof(w.token), "dst_token_value");
	return w;
}

/* Both connections arrive (they still work), and every field with them. */
static void test_send_recv(void **state)
{
	char path[64];
	int pa[2], pb[2], fds[2], l, c;
	struct handover_wire w = wire();
	struct secrets_set sec = { .n = 2, .values = { "first-secret", "second secret!" } };
	struct handover h;
	struct err e;
	char byte = 0;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_handover.%d.sock", (int)getpid());
	l = listen_at(path);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pa), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pb), 0);
	assert_int_equal(handover_send(path, pa[0], pb[0], &w, &sec, &e), 0);
	close(pa[0]);
	close(pb[0]);
	c = accept(l, NULL, NULL);
	assert_true(c >= 0);
	assert_int_equal(handover_recv(c, &h, fds, &e), 0);
	assert_int_equal(h.w.held_id, 42);
	assert_int_equal(h.w.fcgi_id, 1);
	assert_int_equal(h.w.streamed, 1);
	assert_int_equal(h.w.timeout_ms, 5000);
	assert_string_equal(h.w.sandbox_id, "sb_0123");
	assert_string_equal(h.w.request_id, "req-1");
	assert_string_equal(h.w.token, "dst_token_value");
	assert_int_equal(h.w.nsecrets, 2);
	assert_string_equal(h.secrets[0], "first-secret");
	assert_string_equal(h.secrets[1], "second secret!");
	assert_int_equal(write(fds[0], "a", 1), 1);
	assert_int_equal(read(pa[1], &byte, 1), 1);
	assert_int_equal(byte, 'a');
	assert_int_equal(write(pb[1], "b", 1), 1);
	assert_int_equal(read(fds[1], &byte, 1), 1);
	assert_int_equal(byte, 'b');
	handover_release(&h);
	for (int i = 0; i < 2; i++)
		close(fds[i]);
	close(pa[1]);
	close(pb[1]);
	close(c);
	close(l);
	unlink(path);
}

/* No holder listening: the worker keeps the exec (ERR_FAIL, nothing sent). */
static void test_no_holder(void **state)
{
	struct handover_wire w = wire();
	struct err e;

	(void)state;
	assert_int_equal(handover_send("/tmp/test_handover.none.sock", 0, 1, &w, NULL, &e),
			 ERR_FAIL);
	assert_non_null(strstr(e.msg, "the holder at /tmp/test_handover.none.sock"));
}

/* A sender gone before sending: no hand-over, and no descriptor leaks. */
static void test_sender_died(void **state)
{
	char path[64];
	int l, s, c, fds[2];
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct handover h;
	struct err e;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_handover.d%d.sock", (int)getpid());
	l = listen_at(path);
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	close(s);
	c = accept(l, NULL, NULL);
	assert_int_equal(handover_recv(c, &h, fds, &e), ERR_FAIL);
	assert_string_equal(e.msg, "the worker sent no hand-over");
	assert_int_equal(fds[0], -1);
	close(c);
	close(l);
	unlink(path);
}

static void test_decode_refuses(void **state)
{
	struct handover_wire w = wire();
	unsigned char b[sizeof(w) + 16];
	struct handover h;
	struct err e;

	(void)state;
	w.magic = 0x73626831u;
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), 0);
	handover_release(&h);
	assert_int_equal(handover_decode(b, sizeof(w) - 1, &h, &e), ERR_INVALID);
	assert_non_null(strstr(e.msg, "too short"));
	/* A secret announced and missing, one more byte than announced. */
	w.nsecrets = 1;
	w.secret_len[0] = 8;
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w) + 4, &h, &e), ERR_INVALID);
	assert_int_equal(handover_decode(b, sizeof(w) + 9, &h, &e), ERR_INVALID);
	memcpy(b + sizeof(w), "12345678", 8);
	assert_int_equal(handover_decode(b, sizeof(w) + 8, &h, &e), 0);
	assert_string_equal(h.secrets[0], "12345678");
	handover_release(&h);
	/* Too many secrets, an unterminated id, a bad magic. */
	w.nsecrets = SECRETS_PER_SANDBOX + 1;
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
	w.nsecrets = 0;
	memset(w.request_id, 'x', sizeof(w.request_id));
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
	w = wire();
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
	/* An MCP call: its id is there, and it is never streamed. */
	w = wire();
	w.magic = 0x73626831u;
	w.streamed = 0;
	w.mcp = 1;
	memcpy(w.rpc_id, "\"call-1\"", 9);
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), 0);
	assert_string_equal(h.w.rpc_id, "\"call-1\"");
	handover_release(&h);
	w.streamed = 1;
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
	w.streamed = 0;
	memset(w.rpc_id, 0, sizeof(w.rpc_id));
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
	memset(w.rpc_id, '1', sizeof(w.rpc_id));
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
	w.mcp = 2;
	memcpy(w.rpc_id, "7", 2);
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
}

/* STDOUT records split at 65535 bytes; the end: an empty STDOUT, then END_REQUEST. */
static void test_records(void **state)
{
	struct buf b;
	size_t n = 70000;
	char *data = malloc(n);
	const unsigned char *p;

	(void)state;
	memset(data, 'z', n);
	buf_init(&b, 1 << 20);
	assert_int_equal(fcgirec_stdout(&b, 0x0102, data, n), 0);
	assert_int_equal(fcgirec_end(&b, 0x0102), 0);
	p = (const unsigned char *)b.data;
	assert_int_equal(b.len, 8 + 65535 + 8 + (n - 65535) + 8 + 8 + 8);
	assert_int_equal(p[0], 1);
	assert_int_equal(p[1], 6);
	assert_int_equal(p[2], 1);
	assert_int_equal(p[3], 2);
	assert_int_equal(p[4] << 8 | p[5], 65535);
	p += 8 + 65535;
	assert_int_equal(p[4] << 8 | p[5], n - 65535);
	p += 8 + (n - 65535);
	assert_int_equal(p[1], 6);
	assert_int_equal(p[4] << 8 | p[5], 0);
	p += 8;
	assert_int_equal(p[1], 3);
	assert_int_equal(p[5], 8);
	/* A buffer too small keeps what was whole. */
	buf_release(&b);
	buf_init(&b, 100);
	assert_int_equal(fcgirec_stdout(&b, 1, data, 50), 0);
	assert_int_equal(fcgirec_stdout(&b, 1, data, 50), ERR_TOOBIG);
	assert_int_equal(b.len, 58);
	buf_release(&b);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_recv),
		cmocka_unit_test(test_no_holder),
		cmocka_unit_test(test_sender_died),
		cmocka_unit_test(test_decode_refuses),
		cmocka_unit_test(test_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
