/* ndjson.c: cuts a byte stream into lines as it arrives (the streamed exec's NDJSON). The
 * server's bytes come in pieces of any size: a line may span many pieces and a piece hold
 * many lines, so each line is gathered whole before it is handed over. A line longer than
 * max stops the stream rather than growing without bound (a broken or hostile server). */
#include <string.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

void ndjson_init(struct ndjson *j, size_t max, int (*on_line)(void *, const char *, size_t),
		 void *ctx)
{
	memset(j, 0, sizeof(*j));
	j->max = max;
	j->on_line = on_line;
	j->ctx = ctx;
}

static int hand_over(struct ndjson *j)
{
	size_t n = j->line.len;
	int rc;

	if (n && j->line.p[n - 1] == '\r')
		n--;
	rc = n ? j->on_line(j->ctx, j->line.p, n) : 0;
	j->line.len = 0;
	if (j->line.p)
		j->line.p[0] = 0;
	if (rc)
		j->stopped = rc;
	return rc;
}

int ndjson_feed(struct ndjson *j, const char *p, size_t n)
{
	while (n && !j->stopped) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;

		if (take > j->max - j->line.len || buf_add(&j->line, p, take)) {
			j->stopped = -1;
			break;
		}
		p += take;
		n -= take;
		if (nl) {
			p++;
			n--;
			if (hand_over(j))
				break;
		}
	}
	return j->stopped;
}

int ndjson_end(struct ndjson *j)
{
	if (!j->stopped && j->line.len)
		(void)hand_over(j);
	return j->stopped;
}

void ndjson_free(struct ndjson *j)
{
	buf_free(&j->line);
}
