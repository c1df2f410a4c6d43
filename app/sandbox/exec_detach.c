/* exec_detach.c: detached exec (exec.h, SPEC.md §4 "Detached exec"). Two backends keep the
 * command and its output in the container, so any worker on any host can read it:
 * - the sandbox's agent (agent_client.h), when it answers: it supervises the command (the
 *   same limits and tree kill as an attached one) and keeps its output in segment files,
 *   at most 64 MiB per stream, oldest dropped first (app/agent/detached.c);
 * - Docker exec of app/sandbox/sh/detach.sh: output in 8 MiB chunks written by split(1), the newest
 *   8 kept, and its exit code in a file when it ends.
 * Either way the bytes asked for come back raw and are masked and decoded here, as an
 * attached exec's; the service judges offsets and caps, never the container. A read asks
 * the agent first, then Docker (an exec started while the agent was unreachable lives
 * there). The output lives as long as the container: until the sandbox ends. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/proto/detach.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/sandbox/exec.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/randid.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/sandbox/scripts.h"
#include "sandboxd/common/banned.h"

#define READ_MAX ((size_t)1 << 20) /* output per stream per read */
/* Bytes fetched before the offset asked for, so that a secret that began before it is
 * masked from every offset (capture_masked_through). */
#define CONTEXT ((uint64_t)CAPTURE_SECRET_MAX)

int exec_id_valid(const char *id)
{
	if (strlen(id) != EXEC_ID_LEN || strncmp(id, "ex_", 3))
		return 0;
	for (const char *p = id + 3; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

static void note_agent_error(char out[256], const struct err *ea)
{
	snprintf(out, 256, "%.255s", ea->msg);
}

/* Through the agent; *fallback set (with out->agent_error) when it could not be reached.
 * Once the request is sent its answer is final: a lost answer must not start the command a
 * second time through Docker. */
static int agent_start(const struct sandbox *s, const struct exec_spec *x,
		       char id[EXEC_ID_LEN + 1], struct exec_result *out, int *fallback,
		       struct err *e)
{
	const struct agent_exec_req r = { .cmd = x->cmd, .cwd = x->workdir, .env = x->env,
					  .timeout_ms = x->timeout_ms };
	struct agent_conn c = { .fd = -1 };
	char aid[AGENT_CLIENT_ID_MAX];
	struct err ea;
	int rc;

	*fallback = 1;
	if ((rc = sbagent_connect(s, x->network, &c, &ea))) {
		note_agent_error(out->agent_error, &ea);
		/* With the agent on, never Docker exec for a sandbox that has one (exec_run). */
		if (exec_agent_only(s, x)) {
			*fallback = 0;
			out->backend = "agent";
			return exec_agent_refusal(s, rc, ea.msg, e);
		}
		return 0;
	}
	*fallback = 0;
	out->backend = "agent";
	rc = agent_detach_start(&c, &r, aid, &ea);
	agent_close(&c);
	if (rc == ERR_FAIL)
		return err_box(e, 502, "the sandbox's agent broke off the exec: %s", ea.msg);
	if (rc == ERR_LIMIT)
		return exec_agent_refusal(s, rc, ea.msg, e);
	if (rc) {
		*e = ea;
		return rc;
	}
	if (!exec_id_valid(aid))
		return err_box(e, 502, "the sandbox's agent answered an exec id of another shape");
	memcpy(id, aid, EXEC_ID_LEN + 1);
	return 0;
}

int exec_detach_start(const struct sandbox *s, const struct exec_spec *x,
		      char id[EXEC_ID_LEN + 1], struct exec_result *out, struct err *e)
{
	char ms[32];
	int rc, fallback = 1;

	memset(out, 0, sizeof(*out));
	out->backend = "docker";
	if (x->agent && ((rc = agent_start(s, x, id, out, &fallback, e)) || !fallback))
		return rc;
	if (out->agent_error[0])
		log_info("detached exec in %s: through Docker exec: the agent: %s", s->id,
			 out->agent_error);
	if (randid(id, EXEC_ID_LEN + 1, "ex_", 12))
		return err_set(e, ERR_FAIL, "no randomness");
	snprintf(ms, sizeof(ms), "%lld", (long long)x->timeout_ms);
	const char *argv[] = { "bash", "-c", sh_detach, "sandboxd-detach", id, ms, x->cmd, NULL };
	struct box_exec bx = { .argv = argv, .env = x->env, .workdir = x->workdir };
	return box_exec_detached(s->container_id, &bx, BOX_CALL_MS, e);
}

struct out_stream {
	uint64_t first, total;     /* the bytes still kept: [first, total) */
	uint64_t want, from;       /* asked for; shown from */
	uint64_t ctx;              /* bytes fetched before from, for the mask's sake */
	size_t count;              /* to fetch */
	struct buf data;
};

static int collect(void *arg, int stream, const char *p, size_t n)
{
	struct out_stream *o = arg;

	return buf_append(&o[stream == DSTREAM_STDOUT ? 0 : 1].data, p, n);
}

/* The text of one stream from its fetched bytes; *next is the offset to ask for next. */
static int stream_text(const char *token, const struct secrets_set *sec, struct out_stream *o,
		       int ended, struct buf *text, uint64_t *next, struct err *e)
{
	struct capture_opts opts = { READ_MAX, 0, 1 };
	struct capture c;
	const char *p = o->data.data ? o->data.data : "";
	size_t len = o->data.len;
	uint64_t off = o->from;
	int rc = 0;

	capture_init(&c, &opts);
	if (token && (rc = capture_add_token(&c, token, strlen(token), e)))
		goto out;
	for (size_t k = 0; sec && k < sec->n; k++)
		if ((rc = capture_add_secret(&c, sec->values[k], strlen(sec->values[k]), e)))
			goto out;
	/* From a chosen offset: a secret that began before it is masked from it on, and bytes
	 * that may be the start of one still being written wait, as they do at the end. */
	if (o->ctx) {
		size_t at = o->ctx < len ? (size_t)o->ctx : len, end;
		int whole = ended && o->from - o->ctx + len == o->total;
		if (!whole && len - capture_pending(&c, p, len) < at) {
			*next = o->want;
			goto out;
		}
		end = capture_masked_through(&c, p, len, at);
		if (end > at && (rc = buf_puts(text, CAPTURE_MASK)))
			goto out;
		off += end - at;
		p += end;
		len -= end;
	}
	/* Where older output was dropped, a secret may have been cut: its end goes too. */
	if (o->want < o->from) {
		size_t k = capture_cut_fragment(&c, p, len);
		p += k;
		len -= k;
		off += k;
		if ((rc = capture_marker(text, off - o->want)))
			goto out;
	}
	if ((rc = capture_feed(&c, CAPTURE_STDOUT, p, len)))
		goto out;
	if (ended && off + len == o->total) {
		rc = capture_finish(&c, CAPTURE_STDOUT, text, NULL, NULL, e);
		*next = off + len;
	} else {
		rc = capture_take(&c, CAPTURE_STDOUT, text, e);
		*next = off + c.streams[0].sent;
	}
out:
	capture_release(&c);
	return rc;
}


/* What to fetch of each stream, given what the container keeps; ERR_INVALID for an offset
 * past the output. */
static int plan(struct out_stream o[2], const struct detach_state *ds, const uint64_t want[2],
		struct err *e)
{
	for (int i = 0; i < 2; i++) {
		o[i].want = want[i];
		o[i].first = ds->first[i];
		o[i].total = ds->total[i];
		if (o[i].want > o[i].total)
			return err_set(e, ERR_INVALID, "%s %llu is past the output (%llu bytes so far)",
				       i ? "stderrOffset" : "stdoutOffset",
				       (unsigned long long)o[i].want, (unsigned long long)o[i].total);
		o[i].from = o[i].want > o[i].first ? o[i].want : o[i].first;
		o[i].ctx = o[i].from - o[i].first < CONTEXT ? o[i].from - o[i].first : CONTEXT;
		o[i].count = o[i].total - o[i].from < READ_MAX ? (size_t)(o[i].total - o[i].from)
							       : READ_MAX;
		o[i].count += o[i].ctx;
	}
	return 0;
}

/* The bytes planned, both streams in one exec; 4 as *pruned when a chunk went meanwhile. */
static int fetch(const struct sandbox *s, const char *id, struct out_stream o[2], int *pruned,
		 struct err *e)
{
	char args[6][24];
	int rc;

	*pruned = 0;
	if (o[0].count + o[1].count == 0)
		return 0;
	for (int i = 0; i < 2; i++) {
		uint64_t start = o[i].from - o[i].ctx;
		snprintf(args[3 * i], 24, "%llu", (unsigned long long)(start / (uint64_t)DETACH_CHUNK));
		snprintf(args[3 * i + 1], 24, "%llu", (unsigned long long)(start % (uint64_t)DETACH_CHUNK));
		snprintf(args[3 * i + 2], 24, "%zu", o[i].count);
	}
	const char *argv[] = { "bash", "-c", sh_detach_read, "sandboxd-read", id, args[0],
			       args[1], args[2], args[3], args[4], args[5], NULL };
	struct box_exec bx = { .argv = argv, .sink = collect, .sink_arg = o };
	if ((rc = box_exec(s->container_id, &bx, BOX_CALL_MS, e)))
		return rc;
	*pruned = bx.exit_code == 4;
	return 0;
}

/* The state and the bytes planned through Docker exec of detach.sh's scripts. */
static int docker_fetch(const struct sandbox *s, const char *id, const uint64_t want[2],
			struct out_stream o[2], struct exec_output *out, struct err *e)
{
	const char *state_argv[] = { "bash", "-c", sh_detach_state, "sandboxd-state", id, NULL };
	struct sandbox_output g;
	struct detach_state ds;
	int rc, exit_code = 0, pruned = 0;

	if ((rc = sandbox_run(s->container_id, state_argv, &g, &exit_code, e)))
		return rc;
	if (exit_code == 3)
		return err_set(e, ERR_NOTFOUND, "no such exec: %s", id);
	detach_parse_state(g.out, &ds);
	if ((rc = plan(o, &ds, want, e)) || (rc = fetch(s, id, o, &pruned, e)))
		return rc;
	out->ended = ds.ended && !pruned;
	out->exit_code = ds.exit_code;
	out->killed = ds.killed;
	out->duration_ms = ds.duration_ms;
	/* A chunk pruned between the two looks: nothing this time, the next call jumps. */
	for (int i = 0; i < 2 && pruned; i++) {
		buf_clear(&o[i].data);
		o[i].from = o[i].want;
		o[i].ctx = 0;
	}
	return 0;
}

/* What the agent said of a detached exec: nothing (unreachable), that it has none (then
 * it may be Docker's), or its state and bytes. */
enum agent_said { AGENT_UNREACHED, AGENT_HAS_NONE, AGENT_ANSWERED };

/* The state and the bytes through the agent: asked from CONTEXT bytes before the offsets
 * (for the mask), judged here against the totals it counted. out->agent_error says why
 * when *said is not AGENT_ANSWERED. */
static int agent_fetch(const struct sandbox *s, const char *network, const char *id,
		       const uint64_t want[2], struct out_stream o[2], struct exec_output *out,
		       enum agent_said *said, struct err *e)
{
	struct agent_conn c = { .fd = -1 };
	struct agent_dstatus st;
	uint64_t ask[2];
	struct err ea;
	int rc, connected;

	*said = AGENT_UNREACHED;
	for (int i = 0; i < 2; i++)
		ask[i] = want[i] > CONTEXT ? want[i] - CONTEXT : 0;
	if ((connected = !(rc = sbagent_connect(s, network, &c, &ea)))) {
		rc = agent_detach_read(&c, id, ask, READ_MAX + CONTEXT, collect, o, &st, &ea);
		agent_close(&c);
	}
	if (!connected || rc == ERR_NOTFOUND) {
		note_agent_error(out->agent_error, &ea);
		*said = connected ? AGENT_HAS_NONE : AGENT_UNREACHED;
		return 0;
	}
	*said = AGENT_ANSWERED;
	out->backend = "agent";
	if (rc)
		return err_box(e, 502, "the sandbox's agent: %s", ea.msg);
	for (int i = 0; i < 2; i++) {
		if (want[i] > st.total[i])
			return err_set(e, ERR_INVALID, "%s %llu is past the output (%llu bytes so far)",
				       i ? "stderrOffset" : "stdoutOffset",
				       (unsigned long long)want[i], (unsigned long long)st.total[i]);
		o[i].want = want[i];
		o[i].total = st.total[i];
		o[i].from = want[i] > st.from[i] ? want[i] : st.from[i];
		o[i].ctx = o[i].from - st.from[i];
	}
	out->ended = !st.running;
	out->killed = st.x.killed;
	/* Its supervisor died without a result (something killed it): ended, as killed. */
	out->exit_code = st.lost ? 137 : st.x.timed_out ? 124 : st.x.exit_code;
	out->duration_ms = st.x.duration_ms;
	return 0;
}

int exec_detach_read(struct db *db, const struct sandbox *s, const char *network,
		     const char *id, const struct secrets_set *sec, const uint64_t want[2],
		     struct exec_output *out, struct err *e)
{
	struct exec_spec via = { .agent = network != NULL, .network = network };
	struct out_stream o[2];
	const char *token = NULL;
	enum agent_said said = AGENT_HAS_NONE;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(o, 0, sizeof(o));
	out->backend = "docker";
	for (int i = 0; i < 2; i++) {
		buf_init(&o[i].data, READ_MAX + CONTEXT);
		buf_init(&out->text[i], capture_text_max(&(struct capture_opts){ READ_MAX, 0, 1 }) +
						128);
		out->next[i] = want[i];
	}
	if (network && (rc = agent_fetch(s, network, id, want, o, out, &said, e)))
		goto out;
	if (said != AGENT_ANSWERED) {
		for (int i = 0; i < 2; i++)
			buf_clear(&o[i].data);
		rc = docker_fetch(s, id, want, o, out, e);
		/* Not Docker's, and the agent that may hold it did not answer: say so. */
		if (rc == ERR_NOTFOUND && said == AGENT_UNREACHED)
			rc = err_box(e, 502, "no such exec through Docker exec, and the sandbox's "
				      "agent did not answer: %s", out->agent_error);
		if (rc)
			goto out;
	}
	if ((rc = exec_token_for(db, s, &via, &token, e)))
		goto out;
	for (int i = 0; i < 2 && !rc; i++)
		rc = stream_text(token, sec, &o[i], out->ended, &out->text[i], &out->next[i], e);
out:
	buf_release(&o[0].data);
	buf_release(&o[1].data);
	return rc;
}
