/* detach.c: the readers of untrusted text for detached exec (detach.h): the query string of
 * GET …/execs/{execId}, and the state lines that a script in the container prints. Pure;
 * every number goes through num_parse with its bound. */
#include <string.h>
#include "sandboxd/proto/detach.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/lib/query.h"
#include "sandboxd/common/banned.h"

#define CHUNKS_MAX 100000
#define FIELDS_MAX 4

int detach_query_offset(const char *query, const char *name, uint64_t *out)
{
	char buf[20];   /* 18 digits: past 10^18 no stream ever reaches, refused, not wrapped */
	int found = query_param(query, name, buf, sizeof(buf));
	int64_t x;

	*out = 0;
	if (found == 0)
		return 0;
	if (found < 0 || !buf[0] || strlen(buf) > 18 || buf[0] == '-' ||
	    num_parse(buf, 0, INT64_MAX, &x))
		return -1;
	*out = (uint64_t)x;
	return 0;
}

/* Splits line at spaces into at most FIELDS_MAX fields; how many, or -1 for more. */
static int fields(char *line, char *f[FIELDS_MAX])
{
	int k = 0;

	for (char *p = line; *p;) {
		while (*p == ' ')
			*p++ = 0;
		if (!*p)
			break;
		if (k == FIELDS_MAX)
			return -1;
		f[k++] = p;
		while (*p && *p != ' ')
			p++;
	}
	return k;
}

static void parse_line(char *line, struct detach_state *st, int64_t t[3])
{
	char *f[FIELDS_MAX];
	int64_t a, b, c;
	int k = fields(line, f);
	int i = k == 4 && strcmp(f[0], "out") == 0 ? 0 : k == 4 && strcmp(f[0], "err") == 0 ? 1 : -1;

	/* The container's files are the user's to change: numbers stay in bounds. */
	if (i >= 0) {
		if (num_parse(f[1], 0, CHUNKS_MAX, &a) || num_parse(f[2], a, CHUNKS_MAX, &b) ||
		    num_parse(f[3], 0, DETACH_CHUNK, &c))
			return;
		st->first[i] = (uint64_t)(a * DETACH_CHUNK);
		st->total[i] = (uint64_t)(b * DETACH_CHUNK + c);
	} else if (k == 3 && strcmp(f[0], "start") == 0) {
		if (num_parse(f[1], 0, INT64_MAX / 2, &a) || num_parse(f[2], 0, INT64_MAX / 2, &b))
			return;
		t[0] = a;
		t[1] = b;
	} else if (k == 1 && strcmp(f[0], "killed") == 0) {
		st->killed = 1;
	} else if (k == 3 && strcmp(f[0], "rc") == 0) {
		if (num_parse(f[1], 0, 255, &a) || num_parse(f[2], 0, INT64_MAX / 2, &b))
			return;
		st->exit_code = (int)a;
		t[2] = b;
		st->ended = 1;
	}
}

static void set_duration(struct detach_state *st, const int64_t t[3])
{
	int64_t d = (st->ended ? t[2] : t[1]) - t[0];

	st->duration_ms = d > 0 && d < (1LL << 40) ? d : 0;
}

void detach_parse_state(char *text, struct detach_state *st)
{
	int64_t t[3] = { 0, 0, 0 };  /* start, now, end (ms) */

	memset(st, 0, sizeof(*st));
	for (char *line = text, *nl; line && *line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		parse_line(line, st, t);
	}
	set_duration(st, t);
}

void detach_parse_states(char *text, const char *const *ids, size_t n, struct detach_state *out,
			 int *found)
{
	int64_t t[3] = { 0, 0, 0 };
	struct detach_state skip;
	struct detach_state *cur = &skip;

	memset(out, 0, n * sizeof(*out));
	memset(found, 0, n * sizeof(*found));
	memset(&skip, 0, sizeof(skip));
	for (char *line = text, *nl; line && *line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		if (strncmp(line, "exec ", 5)) {
			parse_line(line, cur, t);
			continue;
		}
		set_duration(cur, t);
		memset(t, 0, sizeof(t));
		cur = &skip;
		for (size_t i = 0; i < n; i++)
			if (!found[i] && strcmp(line + 5, ids[i]) == 0) {
				found[i] = 1;
				cur = &out[i];
				break;
			}
		memset(&skip, 0, sizeof(skip));
	}
	set_duration(cur, t);
}
