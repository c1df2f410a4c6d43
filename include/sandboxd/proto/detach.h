/* detach.h: the parts of detached exec (app/api/detach.c) that read untrusted text: the
 * query string of GET …/execs/{execId}, and the state a script in the container prints
 * (the container's files are the user's to change). */
#ifndef SANDBOXD_DETACH_H
#define SANDBOXD_DETACH_H
#include <stdint.h>

/* The bytes of one output file of a detached exec: app/sandbox/sh/detach.sh's split -b. The state
 * counts whole chunks, so the reader and the writer must agree on it. */
#define DETACH_CHUNK ((int64_t)8 << 20)

/* The non-negative integer query parameter name (at most 18 digits); 0 when absent. 0, or
 * -1 when malformed. */
int detach_query_offset(const char *query, const char *name, uint64_t *out)
	__attribute__((warn_unused_result));

struct detach_state {
	uint64_t first[2], total[2];  /* per stream (stdout, stderr): bytes kept [first, total) */
	int ended;
	int exit_code;
	int killed;                   /* a kill was asked for */
	long long duration_ms;        /* 0 .. 2^40 */
};
/* Reads the state script's lines (modifies text). Lines that do not parse, or hold
 * numbers out of bounds, are ignored. */
void detach_parse_state(char *text, struct detach_state *st);
/* The same for the blocks of several execs ("exec <id>" then its lines): out[i] and
 * found[i] for ids[i]; a block of an id not asked for is ignored, and so is a repeated one. */
void detach_parse_states(char *text, const char *const *ids, size_t n, struct detach_state *out,
			 int *found);

#endif
