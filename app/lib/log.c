/* log.c: one line per event on stderr, written with a single write() so lines from
 * workers sharing the file never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

static enum log_level min_level = LOG_INFO;
static char request_id[72];

static const char *const names[] = { "debug", "info", "warn", "error" };

int log_parse_level(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

void log_set_level(enum log_level l)
{
	min_level = l;
}

void log_set_request(const char *id)
{
	snprintf(request_id, sizeof(request_id), "%s", id ? id : "");
}

void log_msg(enum log_level l, const char *fmt, ...)
{
	char line[2048], ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;
	int n, m;

	if (l < min_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "%s.%03ldZ %s pid=%d%s%s ", ts,
		     now.tv_nsec / 1000000, names[l], (int)getpid(),
		     request_id[0] ? " req=" : "", request_id);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	/* One event, one line: a newline inside a message would forge a second line. */
	for (int i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* Nowhere left to report it. */
	}
}
