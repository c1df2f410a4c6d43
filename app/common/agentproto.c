/* agentproto.c: the worker–agent frame codec (agentproto.h). Pure and bounded: every
 * length is checked against what the type and the tag allow before it is used. */
#include <string.h>
#include "sandboxd/common/agentproto.h"
#include "sandboxd/common/sha256.h"
#include "sandboxd/common/banned.h"

enum kind { K_NUM = 1, K_STR, K_BIN, K_RLIM };

#define B(t) (1ull << (t))
#define REPEATABLE (B(AP_F_ARG) | B(AP_F_ENV) | B(AP_F_RLIMIT))

static const unsigned char tag_kind[AP_F_COUNT] = {
	[AP_F_NONCE] = K_BIN, [AP_F_MAC] = K_BIN, [AP_F_CODE] = K_NUM, [AP_F_MSG] = K_STR,
	[AP_F_CMD] = K_STR, [AP_F_ARG] = K_STR, [AP_F_CWD] = K_STR, [AP_F_ENV] = K_STR,
	[AP_F_TIMEOUT] = K_NUM, [AP_F_DETACH] = K_NUM, [AP_F_RLIMIT] = K_RLIM,
	[AP_F_PID] = K_NUM, [AP_F_ID] = K_STR, [AP_F_SIGNAL] = K_NUM, [AP_F_TIMEDOUT] = K_NUM,
	[AP_F_KILLED] = K_NUM, [AP_F_DURATION] = K_NUM, [AP_F_OFF_OUT] = K_NUM,
	[AP_F_OFF_ERR] = K_NUM, [AP_F_MAX] = K_NUM, [AP_F_STATE] = K_NUM, [AP_F_PATH] = K_STR,
	[AP_F_LIMIT] = K_NUM, [AP_F_SIZE] = K_NUM, [AP_F_MODE] = K_NUM, [AP_F_DEPTH] = K_NUM,
	[AP_F_NAME] = K_STR, [AP_F_FTYPE] = K_NUM, [AP_F_MTIME] = K_NUM,
	[AP_F_RECURSIVE] = K_NUM, [AP_F_TRUNC] = K_NUM, [AP_F_TOTAL_OUT] = K_NUM,
	[AP_F_TOTAL_ERR] = K_NUM, [AP_F_CLONE_WAIT] = K_NUM,
};

/* Per type: the tags it admits and those it requires; raw types admit none (fielded 0). */
struct rule {
	const char *name;
	uint32_t max;
	int fielded;
	uint64_t allowed, required;
};

#define EXIT_F (B(AP_F_CODE) | B(AP_F_SIGNAL) | B(AP_F_TIMEDOUT) | B(AP_F_KILLED) | \
		B(AP_F_DURATION))
#define DSTATUS_F (B(AP_F_OFF_OUT) | B(AP_F_OFF_ERR) | B(AP_F_TOTAL_OUT) | B(AP_F_TOTAL_ERR))
static const struct rule rules[AP_T_COUNT] = {
	[AP_T_HELLO] = { "hello", AP_MSG_MAX, 1, B(AP_F_NONCE), B(AP_F_NONCE) },
	[AP_T_AUTH] = { "auth", AP_MSG_MAX, 1, B(AP_F_NONCE) | B(AP_F_MAC),
			B(AP_F_NONCE) | B(AP_F_MAC) },
	[AP_T_AUTH_OK] = { "auth-ok", AP_MSG_MAX, 1, B(AP_F_MAC), B(AP_F_MAC) },
	[AP_T_ERROR] = { "error", AP_MSG_MAX, 1, B(AP_F_CODE) | B(AP_F_MSG),
			 B(AP_F_CODE) | B(AP_F_MSG) },
	[AP_T_EXEC] = { "exec", AP_REQ_MAX, 1,
			B(AP_F_CMD) | B(AP_F_ARG) | B(AP_F_CWD) | B(AP_F_ENV) | B(AP_F_TIMEOUT) |
				B(AP_F_DETACH) | B(AP_F_RLIMIT) | B(AP_F_CLONE_WAIT) | B(AP_F_PATH),
			B(AP_F_TIMEOUT) },
	[AP_T_STARTED] = { "started", AP_MSG_MAX, 1, B(AP_F_PID) | B(AP_F_ID), B(AP_F_PID) },
	[AP_T_STDOUT] = { "stdout", AP_DATA_MAX, 0, 0, 0 },
	[AP_T_STDERR] = { "stderr", AP_DATA_MAX, 0, 0, 0 },
	[AP_T_EXIT] = { "exit", AP_MSG_MAX, 1, EXIT_F, EXIT_F },
	[AP_T_DREAD] = { "dread", AP_MSG_MAX, 1,
			 B(AP_F_ID) | B(AP_F_OFF_OUT) | B(AP_F_OFF_ERR) | B(AP_F_MAX),
			 B(AP_F_ID) | B(AP_F_OFF_OUT) | B(AP_F_OFF_ERR) | B(AP_F_MAX) },
	[AP_T_DSTATUS] = { "dstatus", AP_MSG_MAX, 1,
			   EXIT_F | B(AP_F_STATE) | DSTATUS_F, EXIT_F | B(AP_F_STATE) | DSTATUS_F },
	[AP_T_DKILL] = { "dkill", AP_MSG_MAX, 1, B(AP_F_ID) | B(AP_F_SIGNAL),
			 B(AP_F_ID) | B(AP_F_SIGNAL) },
	[AP_T_FREAD] = { "fread", AP_MSG_MAX, 1, B(AP_F_PATH) | B(AP_F_LIMIT),
			 B(AP_F_PATH) | B(AP_F_LIMIT) },
	[AP_T_FINFO] = { "finfo", AP_MSG_MAX, 1, B(AP_F_SIZE) | B(AP_F_MODE),
			 B(AP_F_SIZE) | B(AP_F_MODE) },
	[AP_T_DATA] = { "data", AP_DATA_MAX, 0, 0, 0 },
	[AP_T_END] = { "end", AP_MSG_MAX, 1, B(AP_F_TRUNC), 0 },
	[AP_T_FWRITE] = { "fwrite", AP_MSG_MAX, 1, B(AP_F_PATH) | B(AP_F_MODE) | B(AP_F_SIZE),
			  B(AP_F_PATH) | B(AP_F_MODE) | B(AP_F_SIZE) },
	[AP_T_FLIST] = { "flist", AP_MSG_MAX, 1, B(AP_F_PATH) | B(AP_F_DEPTH),
			 B(AP_F_PATH) | B(AP_F_DEPTH) },
	[AP_T_FENTRY] = { "fentry", AP_MSG_MAX, 1,
			  B(AP_F_NAME) | B(AP_F_FTYPE) | B(AP_F_SIZE) | B(AP_F_MODE) | B(AP_F_MTIME),
			  B(AP_F_NAME) | B(AP_F_FTYPE) | B(AP_F_SIZE) | B(AP_F_MODE) | B(AP_F_MTIME) },
	[AP_T_FREMOVE] = { "fremove", AP_MSG_MAX, 1, B(AP_F_PATH) | B(AP_F_RECURSIVE),
			   B(AP_F_PATH) },
	[AP_T_CWAIT] = { "cwait", AP_MSG_MAX, 1, B(AP_F_CLONE_WAIT) | B(AP_F_PATH),
			 B(AP_F_CLONE_WAIT) | B(AP_F_PATH) },
};

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

uint32_t agentproto_max_len(uint8_t type)
{
	return type < AP_T_COUNT ? rules[type].max : 0;
}

void agentproto_hdr_put(unsigned char p[AP_HDR], uint8_t type, uint32_t stream, uint32_t len)
{
	p[0] = type;
	p[1] = p[2] = p[3] = 0;
	put32(p + 4, stream);
	put32(p + 8, len);
}

int agentproto_hdr_parse(const unsigned char p[AP_HDR], uint32_t max, struct ap_hdr *out,
			 struct err *e)
{
	out->type = p[0];
	out->stream = get32(p + 4);
	out->len = get32(p + 8);
	if (!out->type || out->type >= AP_T_COUNT)
		return err_set(e, ERR_INVALID, "unknown frame type %u", out->type);
	if (p[1] || p[2] || p[3])
		return err_set(e, ERR_INVALID, "frame '%s' has non-zero reserved bytes",
			       rules[out->type].name);
	if (!out->stream)
		return err_set(e, ERR_INVALID, "frame '%s' has stream id 0", rules[out->type].name);
	if (out->len > rules[out->type].max || (max && out->len > max))
		return err_set(e, ERR_TOOBIG, "frame '%s' of %u bytes is over its limit of %u",
			       rules[out->type].name, out->len,
			       max && max < rules[out->type].max ? max : rules[out->type].max);
	return 0;
}

int agentproto_run_ends(const unsigned char *p, size_t n)
{
	struct ap_hdr h;
	struct err e;

	for (size_t at = 0; n - at >= AP_HDR; at += AP_HDR + h.len) {
		if (agentproto_hdr_parse(p + at, 0, &h, &e) ||
		    (h.type != AP_T_STDOUT && h.type != AP_T_STDERR && h.type != AP_T_EXIT))
			return -1;
		if (h.len > n - at - AP_HDR)
			return 0;
		if (h.type == AP_T_EXIT)
			return 1;
	}
	return 0;
}

/* One field's value into m; v[0..n) is inside the payload. */
static int take_field(struct ap_msg *m, uint8_t tag, const unsigned char *v, uint32_t n,
		      struct err *e)
{
	unsigned k = m->has[tag];

	switch (tag_kind[tag]) {
	case K_NUM:
		if (n != 8)
			return err_set(e, ERR_INVALID, "field %u is not 8 bytes", tag);
		m->num[tag] = get64(v);
		break;
	case K_BIN:
		if (n != AP_MAC_LEN)
			return err_set(e, ERR_INVALID, "field %u is not %u bytes", tag, AP_MAC_LEN);
		m->bin[tag] = v;
		break;
	case K_RLIM:
		if (n != 24 || k >= AP_RLIMIT_MAX)
			return err_set(e, ERR_INVALID, "bad or too many rlimit fields");
		m->rlim[k] = (struct ap_rlimit){ get64(v), get64(v + 8), get64(v + 16) };
		break;
	default:
		if (!n || n > AP_STR_MAX || v[n - 1] || memchr(v, 0, n - 1))
			return err_set(e, ERR_INVALID, "field %u is not a string", tag);
		if (tag == AP_F_ARG && k >= AP_ARGV_MAX)
			return err_set(e, ERR_INVALID, "more than %d arguments", AP_ARGV_MAX);
		if (tag == AP_F_ENV && k >= AP_ENV_MAX)
			return err_set(e, ERR_INVALID, "more than %d environment variables",
				       AP_ENV_MAX);
		if (tag == AP_F_ARG)
			m->argv[k] = (const char *)v;
		else if (tag == AP_F_ENV)
			m->env[k] = (const char *)v;
		m->str[tag] = (const char *)v;
	}
	m->has[tag] = k + 1;
	return 0;
}

int agentproto_decode(uint8_t type, const unsigned char *p, size_t len, struct ap_msg *m,
		      struct err *e)
{
	const struct rule *r;
	uint64_t seen = 0;
	size_t i = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	if (!type || type >= AP_T_COUNT || !rules[type].fielded)
		return err_set(e, ERR_INVALID, "frame type %u carries no fields", type);
	r = &rules[type];
	m->type = type;
	if (len > r->max)
		return err_set(e, ERR_INVALID, "frame '%s' is too long", r->name);
	while (i < len) {
		uint8_t tag;
		uint32_t n;

		if (len - i < 5)
			return err_set(e, ERR_INVALID, "frame '%s' ends inside a field", r->name);
		tag = p[i];
		n = get32(p + i + 1);
		i += 5;
		if (tag >= AP_F_COUNT || !(r->allowed & B(tag)))
			return err_set(e, ERR_INVALID, "frame '%s' has unexpected field %u", r->name,
				       tag);
		if ((seen & B(tag)) && !(REPEATABLE & B(tag)))
			return err_set(e, ERR_INVALID, "frame '%s' repeats field %u", r->name, tag);
		if (n > len - i)
			return err_set(e, ERR_INVALID, "frame '%s' field %u is cut", r->name, tag);
		if ((rc = take_field(m, tag, p + i, n, e)))
			return rc;
		seen |= B(tag);
		i += n;
	}
	if ((seen & r->required) != r->required)
		return err_set(e, ERR_INVALID, "frame '%s' lacks a required field", r->name);
	return 0;
}

void agentproto_enc_init(struct ap_enc *w, unsigned char *p, size_t cap, uint8_t type,
			 uint32_t stream)
{
	w->p = p;
	w->cap = cap;
	w->len = AP_HDR;
	w->failed = cap < AP_HDR ? ERR_TOOBIG : 0;
	if (!w->failed)
		agentproto_hdr_put(p, type, stream, 0);
}

void agentproto_put_raw(struct ap_enc *w, const void *b, size_t n)
{
	if (w->failed)
		return;
	if (n > w->cap - w->len) {
		w->failed = ERR_TOOBIG;
		return;
	}
	if (n)
		memcpy(w->p + w->len, b, n);
	w->len += n;
}

/* A field's tag and length; the value follows with put_raw. */
static void put_head(struct ap_enc *w, uint8_t tag, size_t n)
{
	unsigned char h[5];

	if (n > AP_STR_MAX) {
		w->failed = ERR_TOOBIG;
		return;
	}
	h[0] = tag;
	put32(h + 1, (uint32_t)n);
	agentproto_put_raw(w, h, sizeof(h));
}

void agentproto_put_num(struct ap_enc *w, uint8_t tag, uint64_t v)
{
	unsigned char b[8];

	put32(b, (uint32_t)(v >> 32));
	put32(b + 4, (uint32_t)v);
	put_head(w, tag, 8);
	agentproto_put_raw(w, b, 8);
}

void agentproto_put_str(struct ap_enc *w, uint8_t tag, const char *s)
{
	size_t n = strlen(s) + 1;

	put_head(w, tag, n);
	agentproto_put_raw(w, s, n);
}

void agentproto_put_bin(struct ap_enc *w, uint8_t tag, const void *b, size_t n)
{
	put_head(w, tag, n);
	agentproto_put_raw(w, b, n);
}

void agentproto_put_rlimit(struct ap_enc *w, const struct ap_rlimit *r)
{
	unsigned char b[24];
	const uint64_t v[3] = { r->resource, r->cur, r->max };

	for (int i = 0; i < 3; i++) {
		put32(b + 8 * i, (uint32_t)(v[i] >> 32));
		put32(b + 8 * i + 4, (uint32_t)v[i]);
	}
	put_head(w, AP_F_RLIMIT, sizeof(b));
	agentproto_put_raw(w, b, sizeof(b));
}

int agentproto_enc_end(struct ap_enc *w, size_t *len, struct err *e)
{
	uint8_t type = w->cap >= AP_HDR ? w->p[0] : 0;

	if (w->failed || w->len - AP_HDR > agentproto_max_len(type))
		return err_set(e, ERR_TOOBIG, "frame of type %u does not fit its limit", type);
	put32(w->p + 8, (uint32_t)(w->len - AP_HDR));
	*len = w->len;
	return 0;
}

void agentproto_mac(const unsigned char *key, size_t key_len, int worker,
		    const unsigned char an[AP_NONCE_LEN], const unsigned char wn[AP_NONCE_LEN],
		    unsigned char out[AP_MAC_LEN])
{
	static const char wl[] = "sandboxd-agent worker\n", al[] = "sandboxd-agent agent\n";
	struct sha256_part parts[3] = {
		{ worker ? wl : al, worker ? sizeof(wl) - 1 : sizeof(al) - 1 },
		{ an, AP_NONCE_LEN },
		{ wn, AP_NONCE_LEN },
	};

	hmac_sha256(key, key_len, parts, 3, out);
}

int agentproto_mac_equal(const unsigned char a[AP_MAC_LEN], const unsigned char b[AP_MAC_LEN])
{
	unsigned char d = 0;

	for (int i = 0; i < AP_MAC_LEN; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

int agentproto_err_code(int64_t code)
{
	return code < 0 && code >= ERR_NOSTART ? (int)code : ERR_FAIL;
}

void agentproto_clean_text(char *out, size_t n, const char *in)
{
	size_t i = 0;

	if (!n)
		return;
	for (; in && in[i] && i < n - 1; i++)
		out[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[i] = 0;
}
