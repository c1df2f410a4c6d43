/* docker_box.c: the engine interface (box.h) on the Docker Engine API (docker.h): the
 * table every engine uses today. Most operations are one Docker call of the same shape;
 * what is here is where Docker's shape differs: a box made again without a disk limit
 * the storage cannot take, the git host name as Docker's host-gateway entry, and a command
 * as exec create, start and inspect. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

_Static_assert(BOX_ID_MAX >= DOCKER_ID_MAX + 1, "a box id buffer holds a Docker id");

static int dk_init(const struct box_target *own, struct err *e)
{
	struct docker_conf c = { own->url, own->ca_file, own->cert_file, own->key_file };

	return docker_init(&c, e);
}

static int dk_use(const struct box_target *t, struct err *e)
{
	struct docker_conf c;

	if (!t)
		return docker_use(NULL, e);
	c = (struct docker_conf){ t->url, t->ca_file, t->cert_file, t->key_file };
	return docker_use(&c, e);
}

/* The hardening is docker_container_create's own (CapDrop, no-new-privileges, Init, no
 * log). Where the storage cannot limit a container's size (StorageOpt size needs overlay2
 * on XFS with pquota), the container is made again without. */
static int dk_create(const struct box_spec *s, char id[BOX_ID_MAX], int *disk_enforced,
		     long timeout_ms, struct err *e)
{
	char gw[300];
	const char *hosts[] = { gw, NULL };
	struct docker_create dc = {
		.image = s->image, .labels = s->labels, .volume_labels = s->labels,
		.env = s->env, .cmd = s->cmd, .user = s->user, .cap_drop = s->cap_drop,
		.cap_add = s->cap_add, .network = s->network,
		.extra_hosts = s->gateway_name ? hosts : NULL,
		.memory = s->memory, .nano_cpus = s->nano_cpus, .pids_limit = s->pids_limit,
		.storage_size = s->disk,
		.ro_bind_source = s->ro_bind_source, .ro_bind_target = s->ro_bind_target,
		.open_stdin = s->open_stdin,
		.runtime = s->runtime, .userns_host = s->userns_host,
	};
	int rc;

	*disk_enforced = s->disk > 0;
	id[0] = 0;
	if (s->gateway_name &&
	    (size_t)snprintf(gw, sizeof(gw), "%s:host-gateway", s->gateway_name) >= sizeof(gw))
		return err_set(e, ERR_INVALID, "docker create container: a long gateway name");
	rc = docker_container_create(&dc, id, timeout_ms, e);
	if (rc && dc.storage_size && docker_storage_refused(e)) {
		log_warn("the engine cannot limit a container's disk (%s): the reaper measures "
			 "sandboxes instead", e->msg);
		dc.storage_size = 0;
		rc = docker_container_create(&dc, id, timeout_ms, e);
	}
	*disk_enforced = dc.storage_size > 0;
	return rc;
}

/* Exec create, then start attached until the engine closes the stream, then inspect for
 * the exit code: Docker reports a command that could not run inside the 200 stream, so
 * the truth is the inspect's. No inspect after a timeout: nothing is left to learn. */
static int dk_exec(const char *id, struct box_exec *x, long timeout_ms, struct err *e)
{
	struct docker_exec_opts o = { .cmd = x->argv, .env = x->env, .workdir = x->workdir,
				      .attach_stdin = x->stdin_tied };
	struct docker_exec_io io = { .sink = x->sink, .sink_arg = x->sink_arg,
				     .cancel = x->cancel, .cancel_arg = x->cancel_arg };
	struct docker_exec_state st = { 0, -1, 0 };
	char xid[DOCKER_ID_MAX + 1];
	int rc;

	x->exit_code = -1;
	x->timed_out = x->cancelled = 0;
	if ((rc = docker_exec_create(id, &o, xid, BOX_CALL_MS, e)))
		return rc;
	if (x->started && x->started(x->started_arg)) {
		x->cancelled = 1;
		return err_set(e, ERR_CANCELLED, "the caller stopped waiting");
	}
	rc = docker_exec_start(xid, &io, timeout_ms, e);
	x->timed_out = io.timed_out;
	x->cancelled = io.cancelled;
	if (rc || (rc = docker_exec_inspect(xid, &st, BOX_CALL_MS, e)))
		return rc;
	x->exit_code = st.exit_code;
	return 0;
}

static int dk_exec_detached(const char *id, const struct box_exec *x, long timeout_ms,
			    struct err *e)
{
	struct docker_exec_opts o = { .cmd = x->argv, .env = x->env, .workdir = x->workdir };
	char xid[DOCKER_ID_MAX + 1];
	int rc;

	if ((rc = docker_exec_create(id, &o, xid, BOX_CALL_MS, e)))
		return rc;
	return docker_exec_start_detached(xid, timeout_ms, e);
}

/* Docker's answer is box_runtimes' shape, field for field. */
static int dk_runtimes(const char *want, struct box_runtimes *out, long timeout_ms,
		       struct err *e)
{
	struct docker_runtimes rt;
	int rc = docker_info_runtimes(want, &rt, timeout_ms, e);

	memset(out, 0, sizeof(*out));
	if (!rc) {
		out->listed = rt.listed;
		out->has = rt.has;
		snprintf(out->deflt, sizeof(out->deflt), "%s", rt.deflt);
	}
	return rc;
}

const struct engine_ops docker_engine_ops = {
	.kind = "docker",
	.init = dk_init,
	.use = dk_use,
	.refuse = docker_refuse,
	.current = docker_current_host,
	.cleanup = docker_cleanup,
	.ping = docker_ping,
	.isolation = docker_info_isolation,
	.runtimes = dk_runtimes,
	.create = dk_create,
	.input = docker_stdin_put,
	.start = docker_container_start,
	.state = docker_container_inspect,
	.address = docker_container_ip,
	.resize = docker_container_update,
	.disk_used = docker_container_size,
	.remove = docker_container_remove,
	.list = docker_container_list,
	.leftovers = docker_volume_list,
	.leftover_remove = docker_volume_remove,
	.file_put = docker_archive_put_parts,
	.path_stat = docker_archive_stat,
	.exec = dk_exec,
	.exec_detached = dk_exec_detached,
	.image_info = docker_image_inspect,
	.image_pull = docker_image_pull,
};
