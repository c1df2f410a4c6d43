/* park.c: the worker's side of a parked call (park.h). */
#define _GNU_SOURCE  /* memfd_create, O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/proto/fcgirec.h"
#include "sandboxd/holder/handover.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/holder/park.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/sandbox/exec_slots.h"
#include "sandboxd/holder/parked.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"

/* The replay's request id on the holder's connection to a worker: its only request. */
#define REPLAY_ID 1

int holder_may(struct req *r)
{
	return r->cfg->holder && (!r->via || r->rpc_id) && http_fcgi_fd(r) >= 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return ERR_FAIL;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* data[0..n) as FCGI_STDIN records onto fd (n == 0: the stream's end). */
static int put_stdin(int fd, struct buf *b, const char *data, size_t n)
{
	do {
		size_t k = n > FCGIREC_CONTENT_MAX ? FCGIREC_CONTENT_MAX : n;

		buf_clear(b);
		if (fcgirec_stream(b, FCGIREC_STDIN, REPLAY_ID, data, k) ||
		    write_all(fd, b->data, b->len))
			return ERR_FAIL;
		data += k;
		n -= k;
	} while (n);
	return 0;
}

/* The request's records: BEGIN_REQUEST and PARAMS (without their end, which the holder
 * writes after its own), then STDIN: the body read already, or the rest read from the
 * connection. *params: the length of the first part. 0, ERR_CANCELLED when the client left
 * while its body was read, ERR_FAIL otherwise. */
static int write_request(struct req *r, int fd, size_t unread, size_t *params)
{
	const char *const *env = http_params(r);
	struct buf b, pairs;
	char chunk[FCGIREC_CONTENT_MAX];
	int rc = ERR_FAIL;

	buf_init(&b, 4u << 20);
	buf_init(&pairs, 4u << 20);
	if (fcgirec_begin(&b, REPLAY_ID))
		goto out;
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');

		if (eq && fcgirec_pair(&pairs, env[i], (size_t)(eq - env[i]), eq + 1, strlen(eq + 1)))
			goto out;
	}
	if (pairs.len && fcgirec_stream(&b, FCGIREC_PARAMS, REPLAY_ID, pairs.data, pairs.len))
		goto out;
	*params = b.len;
	if (write_all(fd, b.data, b.len))
		goto out;
	if (r->body_len && put_stdin(fd, &b, r->body, r->body_len))
		goto out;
	while (unread) {
		long n = http_read(r, chunk, sizeof(chunk));

		if (n < 0) {
			rc = ERR_CANCELLED;
			goto out;
		}
		if (n == 0)
			break;  /* short of its length: the replay's worker says so, as always */
		if (put_stdin(fd, &b, chunk, (size_t)n))
			goto out;
		unread -= (size_t)n < unread ? (size_t)n : unread;
	}
	rc = put_stdin(fd, &b, NULL, 0);
out:
	buf_release(&b);
	buf_release(&pairs);
	return rc;
}

/* Where the request's records wait: a memfd (memory) for a body of at most
 * SANDBOXD_PARK_MEMORY (64 KiB), an unnamed file in the spool folder (disk) for a larger one,
 * JSON or raw, as nginx has a large body on disk too: a thousand parked 32 MiB writes must
 * not sit in the holder's memory (decision 0087). Gone with its last descriptor either way.
 * -1 with errno on failure. */
static int park_file(const struct req *r, size_t unread)
{
	if (r->body_len + unread <= r->cfg->park_memory)
		return memfd_create("sandboxd-park", MFD_CLOEXEC);
	return open(r->cfg->spool_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

/* The call's slot among the parked ones (exec_slots.h), committed at once so that the
 * holder's delete at the call's end finds it. Past a cap: 429 with Retry-After. */
static int park_slot(struct req *r, const struct sandbox *s, long wait_ms, long long *slot,
		     struct err *e)
{
	const struct exec_slot_caps caps = { r->cfg->parked_per_sandbox,
					     r->cfg->parked_per_account, 1 };
	char after[16];
	int own = !r->db->in_tx, rc;  /* a GET has no transaction: the locks need one */

	if (own && (rc = db_begin(r->db, e)))
		return rc;
	rc = exec_slot_take(r->db, s, r->caller.account_id, r->request_id,
			    wait_ms / 1000 + PARKED_SLACK_MS / 1000 + EXEC_SLOT_MARGIN_S, &caps,
			    slot, e);
	if (rc) {
		if (own)
			db_rollback(r->db);
		if (rc == ERR_LIMIT) {
			snprintf(after, sizeof(after), "%d", EXEC_SLOT_RETRY_S);
			http_header(r, "Retry-After", after);
			json_add_str(r->audit_details, "refused", "parked_cap");
		}
		return rc;
	}
	if (!(rc = db_commit(r->db, e)) && !own)
		rc = db_begin(r->db, e);
	return rc;
}

int park_call(struct req *r, const struct sandbox *s, size_t unread, long wait_ms,
	      struct err *e)
{
	struct agent_conn c = { .fd = -1 };
	struct handover_wire w = { .fcgi_id = http_fcgi_id(r), .clone_wait_ms = wait_ms };
	struct err why = { .msg = "" };
	size_t params = 0;
	long long slot = 0;
	int fd = -1, rc;

	/* A batch's replay would do its other calls again: a batch waits in its worker. */
	if (!holder_may(r) || r->replay || r->batch || !r->cfg->agent)
		return 1;
	w.request_started_ms = clock_ms_of(&r->started);
	if (str_copy(w.sandbox_id, sizeof(w.sandbox_id), s->id) ||
	    str_copy(w.request_id, sizeof(w.request_id), r->request_id))
		return 1;
	if ((rc = park_slot(r, s, wait_ms, &slot, e)))
		return rc;
	if (sbagent_connect(s, sandbox_network(r->cfg, s), &c, &why) ||
	    agent_clone_wait_send(&c, SANDBOX_CLONE_STATE, wait_ms, &why) ||
	    (fd = park_file(r, unread)) < 0) {
		log_info("%s waits for the clone in its worker: %s", s->id,
			 why.msg[0] ? why.msg : strerror(errno));
		agent_close(&c);
		exec_slot_release(r->db, slot);
		return 1;
	}
	/* From here the body may be read: no going back to the worker's own wait. */
	if ((rc = write_request(r, fd, unread, &params))) {
		close(fd);
		agent_close(&c);
		exec_slot_release(r->db, slot);
		return rc == ERR_CANCELLED ? err_set(e, rc, "the client closed the connection")
					   : err_set(e, ERR_FAIL, "parking the call failed");
	}
	w.park_params = (int64_t)params;
	w.park_len = (int64_t)lseek(fd, 0, SEEK_CUR);
	const int fds[3] = { http_fcgi_fd(r), c.fd, fd };
	rc = handover_park_send(r->cfg->holder_socket, fds, &w, &why);
	close(fd);
	agent_close(&c);
	if (rc) {
		/* Only a call whose body was read already (all but a raw PUT's) can still wait
		 * here; a raw PUT's body is in the file, gone now. */
		log_warn("%s: parking failed: %s", s->id, why.msg);
		exec_slot_release(r->db, slot);
		return unread ? err_set(e, ERR_FAIL, "the holder did not take the call") : 1;
	}
	r->handed = r->parked = r->audited = r->responded = r->streamed = 1;
	r->status = 200;
	return 0;
}

void park_replay_params(struct req *r)
{
	const char *v = http_param(r, PARK_REPLAY), *gone = http_param(r, PARK_REPLAY_GONE);
	long long ms = 0;
	int64_t now = clock_ms();

	if (!v || !*v)
		return;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || ms > (now - (*p - '0')) / 10)
			return;  /* not ours: the holder writes a start in the past */
		ms = ms * 10 + (*p - '0');
	}
	r->replay = 1;
	r->replay_gone = gone && strcmp(gone, "1") == 0;
	r->started.tv_sec = (time_t)(ms / 1000);
	r->started.tv_nsec = (long)(ms % 1000) * 1000000;
}
