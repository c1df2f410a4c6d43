/* test_fcgiin.c: a request body read without waiting on the client (http_read_nowait,
 * http_read_ready, fcgiin_held), against the real libfcgi: records written as nginx
 * writes them (8-byte headers, content padded to 8) onto a Unix socket that libfcgi
 * accepts. The case that matters: records libfcgi read in one go (the end of the body
 * among them) sit in its buffer, where a poll of the socket never sees them. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include <fcgiapp.h>
#include "sandboxd/http/fcgiin.h"
#include "sandboxd/http/http.h"
#include "sandboxd/common/banned.h"

struct conn {
	char path[108];
	int listen_fd, client;
	FCGX_Request fcgx;
	struct req r;
};

/* One record, padded to 8 as nginx pads them. */
static void record(int fd, int type, const void *data, size_t n)
{
	unsigned char h[8] = { 1, (unsigned char)type, 0, 1, (unsigned char)(n >> 8),
			       (unsigned char)n, (unsigned char)((8 - n % 8) % 8), 0 };
	static const unsigned char pad[8];

	assert_int_equal(write(fd, h, 8), 8);
	if (n)
		assert_int_equal(write(fd, data, n), (ssize_t)n);
	if (h[6])
		assert_int_equal(write(fd, pad, h[6]), h[6]);
}

static void stdin_record(struct conn *c, const char *s)
{
	record(c->client, 5, s, strlen(s));
}

/* A connection with the request's start (BEGIN_REQUEST, the parameters) written. */
static void open_conn(struct conn *c)
{
	static const unsigned char begin[8] = { 0, 1, 0, 0, 0, 0, 0, 0 };
	static const char pair[] = "\016\004REQUEST_METHODPOST";
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "/tmp/test_fcgiin.%d.sock", (int)getpid());
	unlink(c->path);
	assert_int_equal(FCGX_Init(), 0);
	c->listen_fd = FCGX_OpenSocket(c->path, 5);
	assert_true(c->listen_fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", c->path);
	c->client = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(c->client, (struct sockaddr *)&a, sizeof(a)), 0);
	record(c->client, 1, begin, sizeof(begin));
	record(c->client, 4, pair, sizeof(pair) - 1);
	record(c->client, 4, NULL, 0);
}

/* libfcgi accepts the connection and reads the parameters (and whatever came with them). */
static void accept_conn(struct conn *c)
{
	FCGX_InitRequest(&c->fcgx, c->listen_fd, 0);
	assert_int_equal(FCGX_Accept_r(&c->fcgx), 0);
	c->r.fcgx = &c->fcgx;
	assert_string_equal(FCGX_GetParam("REQUEST_METHOD", c->fcgx.envp), "POST");
}

static void close_conn(struct conn *c)
{
	if (c->client >= 0)
		close(c->client);
	FCGX_Finish_r(&c->fcgx);
	close(c->listen_fd);
	unlink(c->path);
}

static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* Reads what the stream gives without waiting, as githttp.c does; returns the bytes in
 * out and the last answer (0 at the end, HTTP_READ_WAIT, HTTP_READ_GONE). */
static long drain(struct conn *c, char *out, size_t cap, size_t *len)
{
	long k;

	*len = 0;
	while ((k = http_read_nowait(&c->r, out + *len, cap - *len)) > 0)
		*len += (size_t)k;
	out[*len] = 0;
	return k;
}

/* The whole body and its end arrive with the parameters: never a wait. */
static void test_body_in_libfcgi_buffer(void **state)
{
	struct conn c;
	char out[256];
	size_t len;

	open_conn(&c);
	stdin_record(&c, "0fff");
	stdin_record(&c, "a");
	stdin_record(&c, "bc");
	record(c.client, 5, NULL, 0);
	accept_conn(&c);
	assert_int_equal(fcgiin_held(&c.fcgx), 1);
	assert_int_equal(drain(&c, out, sizeof(out) - 1, &len), 0);
	assert_string_equal(out, "0fffabc");
	close_conn(&c);
}

/* Part of the body, then nothing: a wait that a poll of the socket ends when more comes. */
static void test_wait_then_more(void **state)
{
	struct conn c;
	char out[256];
	size_t len;
	long k;

	open_conn(&c);
	stdin_record(&c, "abc");
	accept_conn(&c);
	assert_int_equal(drain(&c, out, sizeof(out) - 1, &len), HTTP_READ_WAIT);
	assert_string_equal(out, "abc");
	/* The padding of "abc" is all libfcgi holds: not a byte of body. */
	assert_int_equal(fcgiin_held(&c.fcgx), 0);
	assert_false(readable(c.fcgx.ipcFd, 50));
	stdin_record(&c, "de");
	stdin_record(&c, "f");
	assert_true(readable(c.fcgx.ipcFd, 1000));
	k = http_read_ready(&c.r, out, sizeof(out) - 1);
	assert_true(k >= 2);
	out[k] = 0;
	/* "f" came in the same read, or is there for the next call without a wait. */
	if (k == 2) {
		assert_int_equal(http_read_nowait(&c.r, out + 2, 1), 1);
		out[3] = 0;
	}
	assert_string_equal(out, "def");
	assert_int_equal(http_read_nowait(&c.r, out, sizeof(out)), HTTP_READ_WAIT);
	record(c.client, 5, NULL, 0);
	assert_true(readable(c.fcgx.ipcFd, 1000));
	assert_int_equal(http_read_ready(&c.r, out, sizeof(out)), 0);
	assert_int_equal(http_read_nowait(&c.r, out, sizeof(out)), 0);
	close_conn(&c);
}

/* A body bigger than libfcgi's 8 KiB buffer, in records of 1,000 bytes. */
static void test_many_records(void **state)
{
	struct conn c;
	static char big[64 * 1000 + 1], out[sizeof(big)];
	char rec[1001];
	size_t len = 0;
	long k;

	open_conn(&c);
	for (int i = 0; i < 64; i++) {
		memset(rec, 'a' + i % 26, 1000);
		rec[1000] = 0;
		memcpy(big + i * 1000, rec, 1000);
		stdin_record(&c, rec);
		if (i == 2)
			accept_conn(&c);
	}
	record(c.client, 5, NULL, 0);
	for (;;) {
		k = http_read_nowait(&c.r, out + len, sizeof(out) - 1 - len);
		if (k == HTTP_READ_WAIT) {
			assert_true(readable(c.fcgx.ipcFd, 1000));
			k = http_read_ready(&c.r, out + len, sizeof(out) - 1 - len);
		}
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	assert_int_equal(k, 0);
	assert_int_equal(len, 64000);
	assert_memory_equal(out, big, 64000);
	close_conn(&c);
}

/* The connection closed in the middle of the body: gone, not an end. */
static void test_gone(void **state)
{
	struct conn c;
	char out[64];
	size_t len;

	open_conn(&c);
	stdin_record(&c, "abc");
	accept_conn(&c);
	assert_int_equal(drain(&c, out, sizeof(out) - 1, &len), HTTP_READ_WAIT);
	close(c.client);
	c.client = -1;
	assert_true(readable(c.fcgx.ipcFd, 1000));
	assert_int_equal(http_read_ready(&c.r, out, sizeof(out)), HTTP_READ_GONE);
	assert_int_equal(http_read_nowait(&c.r, out, sizeof(out)), HTTP_READ_GONE);
	close_conn(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body_in_libfcgi_buffer),
		cmocka_unit_test(test_wait_then_more),
		cmocka_unit_test(test_many_records),
		cmocka_unit_test(test_gone),
	};

	return cmocka_run_group_tests_name("fcgiin", tests, NULL, NULL);
}
