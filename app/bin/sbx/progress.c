/* progress.c: a one-line bar on stderr for a transfer over 1 MiB, drawn only when stderr is
 * a terminal (a script's logs get nothing), through libcurl's XFERINFOFUNCTION. */
#include <stdio.h>
#include <unistd.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

#define MIB (1024.0 * 1024.0)

void progress_init(struct progress *p, const char *label)
{
	p->on = isatty(STDERR_FILENO);
	p->label = label;
	p->drawn = 0;
}

int progress_cb(void *ctx, long long dltotal, long long dlnow, long long ultotal, long long ulnow)
{
	struct progress *p = ctx;
	long long total = ultotal ? ultotal : dltotal, now = ultotal ? ulnow : dlnow;
	int width = 30, fill;

	if (!p->on || total <= 1024 * 1024)
		return 0;
	fill = (int)(now * width / total);
	fprintf(stderr, "\r%s [", p->label);
	for (int i = 0; i < width; i++)
		fputc(i < fill ? '#' : ' ', stderr);
	fprintf(stderr, "] %5.1f / %.1f MiB", now / MIB, total / MIB);
	fflush(stderr);
	p->drawn = 1;
	return 0;
}

void progress_done(struct progress *p)
{
	if (p->drawn)
		fputc('\n', stderr);
}
