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
#include "sandboxd/proto/fcgirec.h"
#include "sandboxd/holder/handover.h"
#include "sandboxd/common/banned.h"

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
	int pa[2], pb[2], fds[3], l, c;
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
	assert_int_equal(handover_send(path, pa[0], pb[0], &w, &sec, NULL, &e), 0);
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

/* A batch's last MCP call: the others' answers come after the secrets, whole. */
static void test_batch(void **state)
{
	char path[64];
	int pa[2], pb[2], fds[3], l, c;
	struct handover_wire w = wire();
	struct secrets_set sec = { .n = 1, .values = { "a-secret" } };
	const char *others = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
	char *big = malloc(HANDOVER_BATCH_MAX + 2);
	struct handover h;
	struct err e;

	(void)state;
	w.streamed = 0;
	w.mcp = 1;
	memcpy(w.rpc_id, "2", 2);
	w.batch = 1;
	w.batch_len = (uint32_t)strlen(others);
	snprintf(path, sizeof(path), "/tmp/test_handover.b%d.sock", (int)getpid());
	l = listen_at(path);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pa), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pb), 0);
	assert_int_equal(handover_send(path, pa[0], pb[0], &w, &sec, others, &e), 0);
	c = accept(l, NULL, NULL);
	assert_int_equal(handover_recv(c, &h, fds, &e), 0);
	assert_int_equal(h.w.batch, 1);
	assert_string_equal(h.secrets[0], "a-secret");
	assert_string_equal(h.batch, others);
	handover_release(&h);
	close(fds[0]);
	close(fds[1]);
	close(c);
	/* The only answer due: no others, an empty text. */
	w.batch_len = 0;
	assert_int_equal(handover_send(path, pa[0], pb[0], &w, NULL, "", &e), 0);
	c = accept(l, NULL, NULL);
	assert_int_equal(handover_recv(c, &h, fds, &e), 0);
	assert_int_equal(h.w.batch, 1);
	assert_string_equal(h.batch, "");
	handover_release(&h);
	close(fds[0]);
	close(fds[1]);
	close(c);
	/* Past the bound: refused by the sender, nothing sent. */
	memset(big, 'x', HANDOVER_BATCH_MAX + 1);
	big[HANDOVER_BATCH_MAX + 1] = 0;
	w.batch_len = HANDOVER_BATCH_MAX + 1;
	assert_int_equal(handover_send(path, pa[0], pb[0], &w, NULL, big, &e), ERR_TOOBIG);
	free(big);
	for (int i = 0; i < 2; i++) {
		close(pa[i]);
		close(pb[i]);
	}
	close(l);
	unlink(path);
}

/* No holder listening: the worker keeps the exec (ERR_FAIL, nothing sent). */
static void test_no_holder(void **state)
{
	struct handover_wire w = wire();
	struct err e;

	(void)state;
	assert_int_equal(handover_send("/tmp/test_handover.none.sock", 0, 1, &w, NULL, NULL, &e),
			 ERR_FAIL);
	assert_non_null(strstr(e.msg, "the holder at /tmp/test_handover.none.sock"));
}

/* A sender gone before sending: no hand-over, and no descriptor leaks. */
static void test_sender_died(void **state)
{
	char path[64];
	int l, s, c, fds[3];
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
	/* A batch: only for an MCP call; its answers' length as the message says. */
	w.mcp = 0;
	w.batch = 1;
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
	w.mcp = 1;
	w.batch = 2;
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w), &h, &e), ERR_INVALID);
	w.batch = 0;
	w.batch_len = 3;
	memcpy(b, &w, sizeof(w));
	memcpy(b + sizeof(w), "1,2", 3);
	assert_int_equal(handover_decode(b, sizeof(w) + 3, &h, &e), ERR_INVALID);
	w.batch = 1;
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w) + 2, &h, &e), ERR_INVALID);
	assert_int_equal(handover_decode(b, sizeof(w) + 3, &h, &e), 0);
	assert_string_equal(h.batch, "1,2");
	handover_release(&h);
	w.batch_len = HANDOVER_BATCH_MAX + 1;
	memcpy(b, &w, sizeof(w));
	assert_int_equal(handover_decode(b, sizeof(w) + 3, &h, &e), ERR_INVALID);
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

/* A replay's request records (pairs with both length forms) and the relay of an answer
 * cut at every byte, its ids rewritten. */
static void test_replay_records(void **state)
{
	struct buf b, pairs, out;
	struct fcgirec_relay st;
	char name[200];
	const unsigned char *p;

	(void)state;
	buf_init(&b, 1 << 20);
	buf_init(&pairs, 1 << 20);
	buf_init(&out, 1 << 20);
	memset(name, 'N', sizeof(name));
	assert_int_equal(fcgirec_begin(&b, 1), 0);
	p = (const unsigned char *)b.data;
	assert_int_equal(p[1], 1);
	assert_int_equal(p[5], 8);
	assert_int_equal(p[9], 1);   /* the responder role */
	assert_int_equal(p[10], 0);  /* no keep-conn */
	assert_int_equal(fcgirec_pair(&pairs, "A", 1, "bc", 2), 0);
	assert_int_equal(pairs.len, 5);
	assert_memory_equal(pairs.data, "\1\2Abc", 5);
	assert_int_equal(fcgirec_pair(&pairs, name, sizeof(name), "", 0), 0);
	p = (const unsigned char *)pairs.data + 5;
	assert_int_equal(pairs.len, 5 + 4 + 1 + sizeof(name));
	assert_int_equal(p[0], 0x80);
	assert_int_equal(p[3], sizeof(name));
	assert_int_equal(p[4], 0);
	assert_int_equal(fcgirec_stream(&b, FCGIREC_PARAMS, 1, NULL, 0), 0);
	assert_int_equal(b.len, 24);

	/* An answer on id 1, relayed a byte at a time onto id 0x0203. */
	buf_clear(&b);
	assert_int_equal(fcgirec_stdout(&b, 1, "hello", 5), 0);
	b.data[6] = 3;                /* three bytes of padding */
	assert_int_equal(buf_append(&b, "pad", 3), 0);
	assert_int_equal(fcgirec_end(&b, 1), 0);
	memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < b.len; i++)
		assert_int_equal(fcgirec_relay(&st, 0x0203, b.data + i, 1, &out), 0);
	assert_true(st.ended);
	assert_int_equal(out.len, b.len);
	p = (const unsigned char *)out.data;
	assert_int_equal(p[2] << 8 | p[3], 0x0203);
	assert_memory_equal(p + 8, "hellopad", 8);
	assert_int_equal(p[16 + 2] << 8 | p[16 + 3], 0x0203);
	assert_int_equal(p[24 + 1], 3);
	assert_int_equal(p[24 + 2] << 8 | p[24 + 3], 0x0203);
	/* Nothing after the end; no version but 1. */
	assert_int_equal(fcgirec_relay(&st, 2, "x", 1, &out), ERR_INVALID);
	memset(&st, 0, sizeof(st));
	assert_int_equal(fcgirec_relay(&st, 2, "\2\6\0\1\0\0\0\0", 8, &out), ERR_INVALID);
	buf_release(&b);
	buf_release(&pairs);
	buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_recv),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_no_holder),
		cmocka_unit_test(test_sender_died),
		cmocka_unit_test(test_decode_refuses),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_replay_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
