/* agentproto.h: the wire protocol between a worker and sandboxd-agent, the program inside
 * each sandbox (README "The agent"). Pure: encodes into and decodes from the caller's
 * memory, no I/O, no allocation; compiled into the service library and into the agent, so
 * both ends speak through one codec. Either side treats every byte from the other as
 * hostile: every length is bounded before it is used.
 *
 * Frames. A 12-byte header, then `len` bytes of payload:
 *
 *     byte 0      type (AP_T_*)
 *     bytes 1-3   zero (a non-zero byte is refused: room for later versions)
 *     bytes 4-7   stream id, big-endian u32: the request's, chosen by the worker (non-zero),
 *                 echoed by the agent on every frame of its answer
 *     bytes 8-11  len, big-endian u32, at most agentproto_max_len(type)
 *
 * Payloads. AP_T_STDOUT, AP_T_STDERR and AP_T_DATA carry raw bytes (at most AP_DATA_MAX).
 * Every other type carries fields: tag (u8), value length (big-endian u32), value. Numbers
 * are 8-byte big-endian (signed ones two's complement); a string's value ends with its one
 * NUL (so a decoded string is a C string pointing into the payload, and none can hide a
 * NUL); nonces and MACs are AP_NONCE_LEN / AP_MAC_LEN raw bytes. Each type admits a fixed
 * set of tags, some required; an unknown tag, a tag the type does not admit, a repeated
 * tag that is not repeatable, or a value of the wrong size is refused.
 *
 * A connection. The agent speaks first: HELLO {NONCE}. The worker answers AUTH {NONCE,
 * MAC = HMAC-SHA256(key, "sandboxd-agent worker\n" | agent nonce | worker nonce)}; the
 * agent checks it and answers AUTH_OK {MAC = HMAC-SHA256(key, "sandboxd-agent agent\n" |
 * agent nonce | worker nonce)} or ERROR and closes (agentproto_mac). Then one request per
 * connection, and its answer:
 *
 *     EXEC {CMD | ARG..., CWD?, ENV..., TIMEOUT, DETACH?, RLIMIT..., CLONE_WAIT?, PATH?}
 *         attached: STARTED {PID}, STDOUT/STDERR frames as output comes, EXIT. The worker
 *         closing the connection ends the exec's tree (as a kill). With CLONE_WAIT and
 *         PATH (the clone's state file) the agent first waits up to CLONE_WAIT ms for the
 *         file to say how the clone ended: "done" starts the command; "failed" is ERROR
 *         {ERR_EXISTS, "clone failed: <the last line of clone.log beside it>"}, no word in
 *         time ERROR {ERR_EXISTS, "the clone is still running; try again"}; the worker's
 *         end of the connection ends the wait.
 *         detached: STARTED {PID, ID}, then the agent closes.
 *     DREAD {ID, OFF_OUT, OFF_ERR, MAX}: DSTATUS {STATE, ..., OFF_OUT, OFF_ERR: where the
 *         bytes that follow start (the offset asked for, moved forward past dropped output,
 *         at most the total), TOTAL_OUT, TOTAL_ERR}, STDOUT frames, STDERR frames, END.
 *         An offset past the output is not refused: the worker judges it from the totals
 *         (it asks from before the offset its client gave, for the mask's sake).
 *     DKILL {ID, SIGNAL}: END.
 *     FREAD {PATH, LIMIT}: FINFO {SIZE, MODE}, DATA frames (SIZE bytes), END.
 *     FWRITE {PATH, MODE, SIZE}: the worker sends DATA frames (SIZE bytes) and END; the
 *         agent answers END once the file is in place.
 *     FLIST {PATH, DEPTH}: FENTRY frames, END {TRUNC}.
 *     FREMOVE {PATH, RECURSIVE?}: END (ERROR ERR_EXISTS: a directory not empty).
 *     CWAIT {CLONE_WAIT, PATH}: the wait of an EXEC with CLONE_WAIT alone: END once the
 *         state file says "done", else the same ERRORs. The holder parks a file call on it
 *         (README "The holder") and takes any answer, or the connection's end, as the
 *         moment to look at the clone again; it believes none of it.
 * Any request may be answered by ERROR {CODE: an ERR_* code, MSG} instead, after which the
 * agent closes. */
#ifndef SANDBOXD_AGENTPROTO_H
#define SANDBOXD_AGENTPROTO_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/err.h"

#define AP_HDR 12
#define AP_DATA_MAX (64u * 1024)          /* raw bytes in one frame */
#define AP_REQ_MAX (5u * 1024 * 1024)     /* an EXEC: 1 MiB cmd + 100 env vars of 32 KiB */
#define AP_MSG_MAX (64u * 1024)           /* any other fielded frame */
#define AP_NONCE_LEN 32
#define AP_MAC_LEN 32
#define AP_KEY_MIN 16                     /* bytes of key file, at least and at most */
#define AP_KEY_MAX 256
#define AP_ARGV_MAX 256
#define AP_ENV_MAX 128
#define AP_RLIMIT_MAX 16
#define AP_STR_MAX (1u << 20)             /* any one string value, with its NUL */
#define AP_PATH_MAX 4096

/* The numbers are the protocol: never renumber, only add. */
enum ap_type {
	AP_T_HELLO = 1, AP_T_AUTH = 2, AP_T_AUTH_OK = 3, AP_T_ERROR = 4, AP_T_EXEC = 5,
	AP_T_STARTED = 6, AP_T_STDOUT = 7, AP_T_STDERR = 8, AP_T_EXIT = 9, AP_T_DREAD = 10,
	AP_T_DSTATUS = 11, AP_T_DKILL = 12, AP_T_FREAD = 13, AP_T_FINFO = 14, AP_T_DATA = 15,
	AP_T_END = 16, AP_T_FWRITE = 17, AP_T_FLIST = 18, AP_T_FENTRY = 19, AP_T_FREMOVE = 20,
	AP_T_CWAIT = 21,
	AP_T_COUNT
};

enum ap_tag {
	AP_F_NONCE = 1, AP_F_MAC = 2, AP_F_CODE = 3, AP_F_MSG = 4, AP_F_CMD = 5, AP_F_ARG = 6,
	AP_F_CWD = 7, AP_F_ENV = 8, AP_F_TIMEOUT = 9, AP_F_DETACH = 10,
	AP_F_RLIMIT = 11,           /* 24 bytes: resource, soft, hard as 8-byte numbers */
	AP_F_PID = 12, AP_F_ID = 13, AP_F_SIGNAL = 14, AP_F_TIMEDOUT = 15, AP_F_KILLED = 16,
	AP_F_DURATION = 17,         /* ms */
	AP_F_OFF_OUT = 18, AP_F_OFF_ERR = 19, AP_F_MAX = 20,
	AP_F_STATE = 21,            /* 0 running, 1 exited, 2 lost (its supervisor died) */
	AP_F_PATH = 22, AP_F_LIMIT = 23, AP_F_SIZE = 24, AP_F_MODE = 25, AP_F_DEPTH = 26,
	AP_F_NAME = 27,
	AP_F_FTYPE = 28,            /* 1 file, 2 dir, 3 symlink, 4 other */
	AP_F_MTIME = 29, AP_F_RECURSIVE = 30, AP_F_TRUNC = 31,
	AP_F_TOTAL_OUT = 32, AP_F_TOTAL_ERR = 33,  /* bytes a detached exec wrote so far */
	AP_F_CLONE_WAIT = 34,       /* ms an exec waits for the clone's state file (its PATH) */
	AP_F_COUNT
};

struct ap_hdr {
	uint8_t type;
	uint32_t stream;
	uint32_t len;
};

struct ap_rlimit {
	uint64_t resource, cur, max;
};

/* A decoded fielded payload. Strings point into the payload (NUL-terminated there) and
 * live as long as it; has[tag] says which tags were present (for a repeatable tag: how
 * often). Numbers are in num[tag] (signed ones: cast to int64_t). */
struct ap_msg {
	uint8_t type;
	unsigned has[AP_F_COUNT];
	uint64_t num[AP_F_COUNT];
	const char *str[AP_F_COUNT];
	const unsigned char *bin[AP_F_COUNT];   /* NONCE, MAC */
	const char *argv[AP_ARGV_MAX + 1];      /* NULL-terminated */
	const char *env[AP_ENV_MAX + 1];        /* NULL-terminated, each NAME=value */
	struct ap_rlimit rlim[AP_RLIMIT_MAX];
};

/* The most payload a frame of type may carry; 0 for an unknown type. */
uint32_t agentproto_max_len(uint8_t type);

void agentproto_hdr_put(unsigned char p[AP_HDR], uint8_t type, uint32_t stream, uint32_t len);
/* ERR_INVALID: an unknown type, a non-zero reserved byte or stream id 0; ERR_TOOBIG: len
 * above agentproto_max_len(type) or above max (the reader's own bound, 0: none). e names
 * the frame. */
int agentproto_hdr_parse(const unsigned char p[AP_HDR], uint32_t max, struct ap_hdr *out,
			 struct err *e) __attribute__((warn_unused_result));

/* Whether p[0..n), the start of what follows a running exec's STARTED, holds its whole
 * run: whole STDOUT and STDERR frames, then a whole EXIT frame. 1 when it does, 0 when
 * the bytes end before that, -1 when a frame there is not one of a run (bad header or
 * type). Looks at nothing past the EXIT frame. */
int agentproto_run_ends(const unsigned char *p, size_t n) __attribute__((warn_unused_result));

/* Decodes a fielded payload of type into m (reset first). ERR_INVALID with e naming the
 * field; m is then unspecified. */
int agentproto_decode(uint8_t type, const unsigned char *p, size_t len, struct ap_msg *m,
		      struct err *e) __attribute__((warn_unused_result));

/* An encoder writing one frame into the caller's buffer: header, then fields. Every put
 * past cap marks it failed; agentproto_enc_end then answers ERR_TOOBIG. */
struct ap_enc {
	unsigned char *p;
	size_t cap, len;
	int failed;
};

/* Starts a frame of type on stream at p[0..cap). */
void agentproto_enc_init(struct ap_enc *w, unsigned char *p, size_t cap, uint8_t type,
			 uint32_t stream);
void agentproto_put_num(struct ap_enc *w, uint8_t tag, uint64_t v);
/* s must not hold a NUL (it could not be decoded); ERR_INVALID at the end if it did. */
void agentproto_put_str(struct ap_enc *w, uint8_t tag, const char *s);
void agentproto_put_bin(struct ap_enc *w, uint8_t tag, const void *b, size_t n);
void agentproto_put_raw(struct ap_enc *w, const void *b, size_t n);  /* DATA, STDOUT, ... */
void agentproto_put_rlimit(struct ap_enc *w, const struct ap_rlimit *r);
/* Writes the length into the header: 0 and *len the frame's total bytes, or ERR_TOOBIG
 * (a put overflowed or the payload is past the type's bound), ERR_INVALID (a string with a
 * NUL). */
int agentproto_enc_end(struct ap_enc *w, size_t *len, struct err *e)
	__attribute__((warn_unused_result));

/* The MAC of one side (worker: 1 for the worker's proof, 0 for the agent's). */
void agentproto_mac(const unsigned char *key, size_t key_len, int worker,
		    const unsigned char an[AP_NONCE_LEN], const unsigned char wn[AP_NONCE_LEN],
		    unsigned char out[AP_MAC_LEN]);
/* Compares two MACs in time independent of where they differ: 1 when equal. */
int agentproto_mac_equal(const unsigned char a[AP_MAC_LEN], const unsigned char b[AP_MAC_LEN])
	__attribute__((warn_unused_result));

/* The error frame's code, brought into the ERR_* range (anything else: ERR_FAIL), and its
 * message with every byte outside printable ASCII replaced by '?', into out (NUL-terminated,
 * cut to n - 1 bytes). */
int agentproto_err_code(int64_t code) __attribute__((warn_unused_result));
void agentproto_clean_text(char *out, size_t n, const char *in);

#endif
