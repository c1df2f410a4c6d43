/* fuzz_agentproto.c: the agent protocol's decoder (what a worker reads from an agent, and
 * the agent from a worker), with a re-encoding oracle.
 *
 * Input: a type byte, then the bytes, taken both as a frame header (its first 12 bytes)
 * and as a payload of that type.
 *
 * Invariants: a header that parses has a known type, zero reserved bytes, a stream id and a
 * length within its type's bound, and agentproto_hdr_put gives back its bytes; a payload
 * that decodes has every string inside it and NUL-terminated there, repeat counts within
 * their bounds and argv/env NULL-terminated; re-encoding the decoded fields gives a frame
 * of the same length that decodes to the same fields. Every refusal has words. The bytes
 * taken as what follows an exec's STARTED: agentproto_run_ends says "whole run" only when
 * a walk of whole output frames reaches a whole EXIT frame inside them, and its answer
 * does not change with bytes added after that frame. */
#include "fuzz.h"
#include "sandboxd/common/agentproto.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

static void check_header(const unsigned char *p, size_t n)
{
	unsigned char again[AP_HDR];
	struct ap_hdr h;
	struct err e = { .msg = "" };

	if (n < AP_HDR)
		return;
	if (agentproto_hdr_parse(p, 0, &h, &e)) {
		FUZZ_CHECK(e.msg[0]);
		return;
	}
	FUZZ_CHECK(h.type && h.type < AP_T_COUNT && h.stream && !p[1] && !p[2] && !p[3]);
	FUZZ_CHECK(h.len <= agentproto_max_len(h.type));
	agentproto_hdr_put(again, h.type, h.stream, h.len);
	FUZZ_CHECK(memcmp(again, p, AP_HDR) == 0);
}

/* The walk done again by hand: 1, 0 or -1 as agentproto_run_ends must answer. */
static int run_ends_oracle(const unsigned char *p, size_t n, size_t *end)
{
	size_t at = 0;

	while (n - at >= AP_HDR) {
		uint8_t t = p[at];
		uint32_t len = (uint32_t)p[at + 8] << 24 | (uint32_t)p[at + 9] << 16 |
			       (uint32_t)p[at + 10] << 8 | p[at + 11];
		struct ap_hdr h;
		struct err e;

		if (agentproto_hdr_parse(p + at, 0, &h, &e) ||
		    (t != AP_T_STDOUT && t != AP_T_STDERR && t != AP_T_EXIT))
			return -1;
		if (len > n - at - AP_HDR)
			return 0;
		at += AP_HDR + len;
		if (t == AP_T_EXIT) {
			*end = at;
			return 1;
		}
	}
	return 0;
}

static void check_run_ends(const unsigned char *p, size_t n)
{
	size_t end = 0;
	int want = run_ends_oracle(p, n, &end);

	FUZZ_CHECK(agentproto_run_ends(p, n) == want);
	if (want == 1)
		FUZZ_CHECK(agentproto_run_ends(p, end) == 1);
}

static void reencode(const struct ap_msg *m, struct ap_enc *w)
{
	for (uint8_t t = 1; t < AP_F_COUNT; t++) {
		for (unsigned k = 0; k < m->has[t]; k++) {
			if (t == AP_F_ARG)
				agentproto_put_str(w, t, m->argv[k]);
			else if (t == AP_F_ENV)
				agentproto_put_str(w, t, m->env[k]);
			else if (t == AP_F_RLIMIT)
				agentproto_put_rlimit(w, &m->rlim[k]);
			else if (m->bin[t])
				agentproto_put_bin(w, t, m->bin[t], AP_MAC_LEN);
			else if (m->str[t])
				agentproto_put_str(w, t, m->str[t]);
			else
				agentproto_put_num(w, t, m->num[t]);
		}
	}
}

static void check_same(const struct ap_msg *a, const struct ap_msg *b)
{
	for (int t = 1; t < AP_F_COUNT; t++) {
		FUZZ_CHECK(a->has[t] == b->has[t]);
		FUZZ_CHECK(a->num[t] == b->num[t]);
		FUZZ_CHECK(!a->str[t] == !b->str[t] && (!a->str[t] || !strcmp(a->str[t], b->str[t])));
		FUZZ_CHECK(!a->bin[t] == !b->bin[t] &&
			   (!a->bin[t] || !memcmp(a->bin[t], b->bin[t], AP_MAC_LEN)));
	}
	for (unsigned k = 0; k < a->has[AP_F_RLIMIT]; k++)
		FUZZ_CHECK(!memcmp(&a->rlim[k], &b->rlim[k], sizeof(a->rlim[k])));
	for (unsigned k = 0; k < a->has[AP_F_ENV]; k++)
		FUZZ_CHECK(!strcmp(a->env[k], b->env[k]));
	for (unsigned k = 0; k < a->has[AP_F_ARG]; k++)
		FUZZ_CHECK(!strcmp(a->argv[k], b->argv[k]));
}

static void check_decoded(const struct ap_msg *m, const unsigned char *p, size_t n)
{
	FUZZ_CHECK(m->has[AP_F_ARG] <= AP_ARGV_MAX && !m->argv[m->has[AP_F_ARG]]);
	FUZZ_CHECK(m->has[AP_F_ENV] <= AP_ENV_MAX && !m->env[m->has[AP_F_ENV]]);
	FUZZ_CHECK(m->has[AP_F_RLIMIT] <= AP_RLIMIT_MAX);
	for (int t = 1; t < AP_F_COUNT; t++) {
		const char *s = m->str[t];

		if (s) {
			FUZZ_CHECK((const unsigned char *)s >= p && (const unsigned char *)s < p + n);
			FUZZ_CHECK(memchr(s, 0, n - (size_t)((const unsigned char *)s - p)));
		}
		if (m->bin[t])
			FUZZ_CHECK(m->bin[t] >= p && m->bin[t] + AP_MAC_LEN <= p + n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ap_msg *m, *m2;
	struct err e = { .msg = "" };
	unsigned char *p, *out;
	struct ap_enc w;
	size_t n, len;
	uint8_t type;

	if (size < 1)
		return 0;
	type = data[0];
	n = size - 1;
	p = (unsigned char *)fuzz_dup(data + 1, n);
	check_header(p, n);
	check_run_ends(p, n);
	m = malloc(sizeof(*m));
	m2 = malloc(sizeof(*m2));
	out = malloc(n + AP_HDR);
	FUZZ_CHECK(m && m2 && out);
	if (agentproto_decode(type, p, n, m, &e)) {
		FUZZ_CHECK(e.msg[0]);
	} else {
		check_decoded(m, p, n);
		agentproto_enc_init(&w, out, n + AP_HDR, type, 1);
		reencode(m, &w);
		FUZZ_CHECK(agentproto_enc_end(&w, &len, &e) == 0 && len == n + AP_HDR);
		FUZZ_CHECK(agentproto_decode(type, out + AP_HDR, n, m2, &e) == 0);
		check_same(m, m2);
	}
	free(out);
	free(m2);
	free(m);
	free(p);
	return 0;
}
