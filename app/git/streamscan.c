/* streamscan.c: the scanner process of a streaming push, and the hook's side of it
 * (streamscan.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sandboxd/lib/clock.h"
#include "sandboxd/git/streamscan.h"
#include "sandboxd/common/banned.h"

struct sink {
	int fd;
	int failed;
};

static void write_record(void *arg, const struct packscan_blob *b)
{
	struct sink *k = arg;
	const char *p = (const char *)b;
	size_t left = sizeof(*b);

	while (!k->failed && left) {
		ssize_t w = write(k->fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			k->failed = 1;
		else
			p += w, left -= (size_t)w;
	}
}

int streamscan_serve(int in, int out)
{
	static unsigned char buf[65536];
	struct sink k = { .fd = out };
	struct packscan s;
	ssize_t got;

	if (packscan_init(&s, STREAMSCAN_BLOB_MAX, write_record, &k))
		return 1;
	/* Past the pack (or once it stopped) the rest of the body is not read: the worker's
	 * writes then fail, and it stops teeing. */
	while (s.state != PACKSCAN_DONE && s.state != PACKSCAN_STOPPED && !k.failed) {
		got = read(in, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		packscan_feed(&s, buf, (size_t)got);
	}
	packscan_end(&s);
	packscan_release(&s);
	return k.failed;
}

/* Waits for EOF on fd (the scanner's end) until the deadline: 1 when it came. */
static int wait_eof(int fd, int64_t until)
{
	char c[64];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = until - clock_ms();
		ssize_t got;

		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return 0;
		if (!p.revents)
			continue;
		got = read(fd, c, sizeof(c));
		if (got == 0)
			return 1;
		if (got < 0 && errno != EINTR && errno != EAGAIN)
			return 0;
	}
}

/* The records in fd, whole and in increasing offsets: 0 with out filled. */
static int read_records(int fd, struct pushscan_scanned *out)
{
	struct packscan_blob *b;
	struct stat st;
	size_t n;

	if (fstat(fd, &st) || st.st_size < 0 || st.st_size % (off_t)sizeof(*b))
		return -1;
	n = (size_t)st.st_size / sizeof(*b);
	if (!(b = malloc(n ? n * sizeof(*b) : 1)) ||
	    pread(fd, b, n * sizeof(*b), 0) != (ssize_t)(n * sizeof(*b))) {
		free(b);
		return -1;
	}
	for (size_t i = 1; i < n; i++)
		if (b[i].offset <= b[i - 1].offset) {
			free(b);
			return -1;
		}
	out->blob = b;
	out->n = n;
	return 0;
}

int streamscan_collect(const char *spec, struct pushscan_scanned *out)
{
	int done, records;
	char end;

	out->blob = NULL;
	out->n = 0;
	if (!spec || sscanf(spec, "%d %d%c", &done, &records, &end) != 2 || done < 3 ||
	    records < 3 || done == records)
		return -1;
	/* Not in time (a loaded machine): the hook scans it all, as fast as it can. */
	if (!wait_eof(done, clock_ms() + STREAMSCAN_WAIT_MS))
		return -1;
	return read_records(records, out);
}

void streamscan_free(struct pushscan_scanned *s)
{
	free((void *)s->blob);
	s->blob = NULL;
	s->n = 0;
}
