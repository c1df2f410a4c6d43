/* exec_procs.c: detached execs as processes (exec.h, SPEC.md §4 "Processes"): the state of
 * several at once, without their output, for the list; and the kill. Each goes to the
 * backend that holds the exec (its row says which): the agent (one connection per exec:
 * its protocol has one request per connection) or Docker exec (one exec of detach-state.sh
 * for up to DOCKER_BATCH execs, and detach-kill.sh started detached). What either says is
 * bounded and parsed as the read's state is (detach.h, agent_client.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/proto/detach.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/sandbox/exec.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/sandbox/scripts.h"
#include "sandboxd/common/banned.h"

/* Execs asked of detach-state.sh at once: their state lines fit what sandbox_run keeps. */
#define DOCKER_BATCH 16

static int refuse_output(void *arg, int stream, const char *p, size_t n)
{
	return ERR_FAIL;           /* asked for none */
}

static int agent_state(const struct sandbox *s, const char *network, const char *id,
		       struct exec_state *out, struct err *e)
{
	static const uint64_t from[2] = { 0, 0 };
	struct agent_conn c = { .fd = -1 };
	struct agent_dstatus st;
	struct err ea;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sbagent_connect(s, network, &c, &ea)))
		return err_box(e, 502, "the sandbox's agent did not answer: %s", ea.msg);
	rc = agent_detach_read(&c, id, from, 0, refuse_output, NULL, &st, &ea);
	agent_close(&c);
	if (rc == ERR_NOTFOUND)
		return 0;
	if (rc)
		return err_box(e, 502, "the sandbox's agent: %s", ea.msg);
	out->found = 1;
	out->ended = !st.running;
	out->killed = st.x.killed;
	out->timed_out = st.x.timed_out;
	out->exit_code = st.lost ? 137 : st.x.timed_out ? 124 : st.x.exit_code;
	out->duration_ms = st.x.duration_ms;
	return 0;
}

static int docker_states(const struct sandbox *s, const char *const *ids, size_t n,
			 struct exec_state *out, struct err *e)
{
	const char *argv[DOCKER_BATCH + 5] = { "bash", "-c", sh_detach_state, "sandboxd-state" };
	struct detach_state ds[DOCKER_BATCH];
	int found[DOCKER_BATCH], exit_code = 0, rc;
	struct sandbox_output g;

	for (size_t i = 0; i < n; i++)
		argv[4 + i] = ids[i];
	argv[4 + n] = NULL;
	if ((rc = sandbox_run(s->container_id, argv, &g, &exit_code, e)))
		return rc;
	detach_parse_states(g.out, ids, n, ds, found);
	for (size_t i = 0; i < n; i++) {
		out[i] = (struct exec_state){ .found = found[i], .ended = ds[i].ended,
					      .exit_code = ds[i].exit_code,
					      .timed_out = ds[i].exit_code == 124,
					      .killed = ds[i].killed,
					      .duration_ms = ds[i].duration_ms };
	}
	return 0;
}

int exec_detach_states(const struct sandbox *s, const char *network, const char *backend,
		       const char *const *ids, size_t n, struct exec_state *out, struct err *e)
{
	int rc = 0;

	if (strcmp(backend, "agent") == 0) {
		for (size_t i = 0; i < n && !rc; i++)
			rc = agent_state(s, network, ids[i], &out[i], e);
		return rc;
	}
	for (size_t i = 0; i < n && !rc; i += DOCKER_BATCH)
		rc = docker_states(s, ids + i, n - i < DOCKER_BATCH ? n - i : DOCKER_BATCH, out + i,
				   e);
	return rc;
}

static const char *signal_name(int sig)
{
	return sig == SIGKILL ? "KILL" : sig == SIGINT ? "INT" : sig == SIGHUP ? "HUP" : "TERM";
}

int exec_detach_kill(const struct sandbox *s, const char *network, const char *backend,
		     const char *id, int sig, struct err *e)
{
	const char *argv[] = { "bash", "-c", sh_detach_kill, "sandboxd-kill", id,
			       signal_name(sig), NULL };
	struct box_exec bx = { .argv = argv };
	struct agent_conn c = { .fd = -1 };
	struct err ea;
	int rc;

	if (strcmp(backend, "agent"))
		return box_exec_detached(s->container_id, &bx, BOX_CALL_MS, e);
	if ((rc = sbagent_connect(s, network, &c, &ea)))
		return err_box(e, 502, "the sandbox's agent did not answer: %s", ea.msg);
	rc = agent_detach_kill(&c, id, sig, &ea);
	agent_close(&c);
	if (rc == ERR_NOTFOUND)
		return err_box(e, 404, "no such exec: %s", id);
	if (rc)
		return err_box(e, 502, "the sandbox's agent: %s", ea.msg);
	return 0;
}
