/* handover.h: a running exec handed from a worker to the holder (holder.h). The worker
 * authorised the call, started the command through the sandbox's agent and wrote the audit
 * row to be (held_execs); then one message on the holder's socket carries the FastCGI
 * connection and the agent's connection (SCM_RIGHTS) and what the holder needs to build the
 * answer exactly as the worker would: the request's ids and times, the limit, and the
 * secrets to mask. Both ends are this program, so the message is a fixed layout; the
 * holder still checks every size and string (handover_decode). */
#ifndef SANDBOXD_HANDOVER_H
#define SANDBOXD_HANDOVER_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/err.h"
#include "sandboxd/sandbox/secrets.h"

#define HANDOVER_ID_MAX 80
#define HANDOVER_TOKEN_MAX 128
#define HANDOVER_RPC_ID_MAX 128
/* A batch's answers before its last call's: larger ones keep the exec in its worker. */
#define HANDOVER_BATCH_MAX 65536
#define HANDOVER_MSG_MAX (sizeof(struct handover_wire) + \
			  SECRETS_PER_SANDBOX * (size_t)SECRETS_VALUE_MAX + HANDOVER_BATCH_MAX)

struct handover_wire {
	uint32_t magic;
	uint32_t fcgi_id;              /* the FastCGI request id on the connection */
	uint32_t streamed;             /* NDJSON (the head is written) or one JSON answer */
	uint32_t nsecrets;
	int64_t held_id;               /* held_execs.id */
	int64_t request_started_ms;    /* CLOCK_MONOTONIC: the audit row's duration */
	int64_t exec_started_ms;       /* durationMs */
	int64_t timeout_ms;            /* the command's limit */
	int64_t idle_timeout;          /* seconds: the sandbox's idle limit (the setting) */
	/* Handed before STARTED: the agent waits up to clone_wait_ms for the clone first, and
	 * the holder reads STARTED (or the agent's refusal, 409/400) itself. */
	int64_t awaiting_start;
	int64_t clone_wait_ms;
	char sandbox_id[HANDOVER_ID_MAX];
	char request_id[HANDOVER_ID_MAX];
	char token[HANDOVER_TOKEN_MAX];  /* the sandbox's token to mask, "" when none */
	/* An MCP tool call (sandbox_exec): its answer is the JSON-RPC result of the tool,
	 * rpc_id the request's id as JSON text (a string or a number). */
	uint32_t mcp;
	char rpc_id[HANDOVER_RPC_ID_MAX];
	/* The call is the last of a batch (protocol 2025-03-26; mcp set): the answer is the
	 * array of the batch's answers, the others' (batch_len bytes of JSON values joined by
	 * commas, after the secrets; 0 when the call was the only answer due) then its own. */
	uint32_t batch;
	uint32_t batch_len;
	/* A parked call (park.h) instead of an exec: the request's FastCGI records are in a
	 * third descriptor (a memfd), park_params bytes of FCGI_BEGIN_REQUEST and FCGI_PARAMS
	 * (their end not yet written), then FCGI_STDIN to its end, park_len bytes in all; the
	 * agent's connection carries a CWAIT. No row, no secrets: the replay has them. */
	uint32_t park;
	int64_t park_params;
	int64_t park_len;
	uint32_t secret_len[SECRETS_PER_SANDBOX];
};

struct handover {
	struct handover_wire w;
	const char *secrets[SECRETS_PER_SANDBOX];  /* NUL-terminated, in buf */
	const char *batch;                         /* batch_len bytes and a NUL, in buf */
	char *buf;
};

/* Sends h (its secrets from sec, and h->batch_len bytes of batch when h->batch) with the
 * two descriptors to the holder listening on path.
 * ERR_FAIL when no holder takes it (no socket, refused, a full queue): the caller keeps the
 * exec. Once this returns 0 the holder owns the exec (the kernel keeps descriptors in
 * flight even if the sender dies). */
int handover_send(const char *path, int fcgi_fd, int agent_fd, const struct handover_wire *h,
		  const struct secrets_set *sec, const char *batch, struct err *e)
	__attribute__((warn_unused_result));

/* A parked call: h->park set, its three descriptors (nginx's connection, the agent's with
 * the CWAIT sent, the memfd of the request's records); as handover_send otherwise. */
int handover_park_send(const char *path, const int fds[3], const struct handover_wire *h,
		       struct err *e) __attribute__((warn_unused_result));

/* One message from conn into h, its descriptors into fds (two, fds[2] -1, for an exec;
 * three for a parked call; all closed on failure). ERR_FAIL when conn closed without one
 * (the sender died before sending); ERR_INVALID for a message that is not a whole
 * hand-over. */
int handover_recv(int conn, struct handover *h, int fds[3], struct err *e)
	__attribute__((warn_unused_result));

/* Checks p[0..n) and decodes it into h (h->buf a copy of the secrets: handover_release). */
int handover_decode(const void *p, size_t n, struct handover *h, struct err *e)
	__attribute__((warn_unused_result));
void handover_release(struct handover *h);

#endif
