/* container.c: a sandbox's container (container.h), made the same way for a create and for
 * the warm pool, and the clone's parameters put into it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/sandbox/container.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/sandbox/scripts.h"
#include "sandboxd/proto/tar.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

/* env with HOME=<the user's home> in front (an exec inherits the container's). */
static int env_with_home(const struct boxuser *bu, const char **env, const char **out,
			 size_t max, char *home, size_t home_len)
{
	size_t n = 0;

	snprintf(home, home_len, "HOME=%s", bu->home);
	out[n++] = home;
	for (; env && *env; env++) {
		if (strncmp(*env, "HOME=", 5) == 0)
			continue;
		if (n + 1 >= max)
			return -1;
		out[n++] = *env;
	}
	out[n] = NULL;
	return 0;
}

/* -1 not known yet, 0 the engine cannot limit a box's disk, 1 it can. */
static int storage_quota = -1;

int sandbox_container_new(const struct config *cfg, const struct boxuser *bu, const char *owner,
			  const char **env, const struct sandbox_limits *lim, long timeout_ms,
			  char cid[BOX_ID_MAX], int *disk_enforced, struct err *e)
{
	size_t np = strlen(WARM_OWNER_PREFIX);
	char label[64], ilabel[96], plabel[64], home[64];
	const char *envh[32];
	int rc, enforced;

	if (env_with_home(bu, env, envh, sizeof(envh) / sizeof(envh[0]), home, sizeof(home)))
		return err_set(e, ERR_INVALID, "too many environment variables for a container");

	snprintf(label, sizeof(label), SANDBOX_LABEL "=%s", owner);
	snprintf(ilabel, sizeof(ilabel), "sandboxd.instance=%s", cfg->instance);
	snprintf(plabel, sizeof(plabel), POOL_LABEL "=%s", owner + np);
	const char *labels[] = { label, ilabel, strncmp(owner, WARM_OWNER_PREFIX, np) ? NULL : plabel,
				 NULL };
	/* The script holds no secret: it may stand in the container's configuration. */
	char ct[16], lt[16];
	snprintf(ct, sizeof(ct), "%d", cfg->clone_timeout);
	snprintf(lt, sizeof(lt), "%d", cfg->clone_lfs_timeout);
	const char *cmd[] = { "bash", "-c", sh_clone, "sandboxd-clone", ct, lt, NULL };
	struct box_spec bs = {
		.image = lim && lim->image ? lim->image : config_default_image(cfg),
		.labels = labels,
		.env = envh, .cmd = cmd, .user = bu->user, .cap_drop = bu->cap_drop,
		.gateway_name = "sandboxd.internal",
		.network = lim && lim->network ? lim->network : cfg->sandbox_network,
		.memory = lim && lim->memory ? lim->memory : cfg->sandbox_memory,
		.nano_cpus = lim && lim->nano_cpus ? lim->nano_cpus
						   : (int64_t)cfg->sandbox_cpus * 1000000000,
		.pids_limit = cfg->sandbox_pids,
		.disk = storage_quota == 0 ? 0 : lim && lim->disk ? lim->disk : cfg->sandbox_disk,
		/* The host's agent, read-only: the container can neither change nor replace it.
		 * Missing on the host: a sandbox without one (its execs take Docker exec). */
		.ro_bind_source = access(cfg->agent_path, R_OK) == 0 ? cfg->agent_path : NULL,
		.ro_bind_target = SANDBOX_AGENT_BIN,
		/* Its first process reads there what the service writes before the start: the
		 * clone's parameters, or a warm container's agent key (app/sandbox/sh/clone.sh). */
		.open_stdin = 1,
		/* A gVisor sandbox's runtime, out of the engine's remapping: runsc cannot work in
		 * a remapped user namespace, and its root is the sentry's (decision 0084). */
		.runtime = lim ? lim->runtime : NULL,
		.userns_host = lim && lim->runtime,
	};

	if (!bs.ro_bind_source)
		log_warn("%s: no agent at %s (SANDBOXD_AGENT_PATH)", owner, cfg->agent_path);
	/* An engine that cannot limit the disk makes the box without (and says so in the
	 * log): asked once. */
	rc = box_create(&bs, cid, &enforced, timeout_ms, e);
	if (bs.disk && !enforced)
		storage_quota = 0;
	else if (!rc && bs.disk)
		storage_quota = 1;
	if (disk_enforced)
		*disk_enforced = enforced;
	return rc;
}

/* An archive made for cid (rc its making's outcome) extracted under /tmp, then wiped: it
 * holds a credential. */
static int put_secret_tar(const char *cid, struct buf *tar, int rc, struct err *e)
{
	if (!rc)
		rc = box_file_put_buf(cid, "/tmp", tar->data, tar->len, BOX_CALL_MS, e);
	if (tar->data)
		OPENSSL_cleanse(tar->data, tar->len);
	buf_release(tar);
	return rc;
}

/* Bytes for a container's first process on its input, before its start: 0, or the
 * failure, logged (the caller then takes the archive API). what names them in the log. */
static int put_input(const char *cid, const char *what, const char *data, size_t len)
{
	struct err e;
	int rc = box_input(cid, data, len, BOX_CALL_MS, &e);

	if (rc)
		log_warn("container %.12s: its input did not take %s (%s): by the archive API "
			 "instead", cid, what, e.msg);
	return rc;
}

int sandbox_put_clone(const char *cid, unsigned owner, const char *params, size_t len,
		      int started, const char **how, struct err *e)
{
	struct buf tar;
	int64_t now = (int64_t)time(NULL);
	int rc;

	*how = "stdin";
	if (!started && !put_input(cid, "the clone's parameters", params, len))
		return 0;
	*how = "archive";
	/* One archive, the parameters file and then the marker clone.sh waits for: Docker
	 * extracts in order, so the marker appears only once the file is whole. tar_write_file
	 * ends an archive, so the first one's end blocks come off before the second entry. */
	buf_init(&tar, 65536);
	rc = tar_write_file(&tar, ".sandboxd/clone", 0600, owner, now, params, len, e);
	if (!rc) {
		tar.len -= 2 * TAR_BLOCK;
		rc = tar_write_file(&tar, ".sandboxd/go", 0600, owner, now, "", 0, e);
	}
	return put_secret_tar(cid, &tar, rc, e);
}

int sandbox_agent_key_new(char hex[SANDBOX_AGENT_KEY_HEX + 1])
{
	unsigned char k[SANDBOX_AGENT_KEY_HEX / 2];

	if (RAND_bytes(k, sizeof(k)) != 1)
		return -1;
	hex_encode(hex, k, sizeof(k));
	OPENSSL_cleanse(k, sizeof(k));
	return 0;
}

int sandbox_put_agent_key(const char *cid, unsigned owner, const char *key, struct err *e)
{
	char line[8 + SANDBOX_AGENT_KEY_HEX];
	struct buf tar;
	int rc;

	/* On its input ("key", then the key: clone.sh tells it from a cold container's
	 * parameters), else as a file. */
	snprintf(line, sizeof(line), "key\n%s\n", key);
	rc = put_input(cid, "the agent's key", line, strlen(line));
	OPENSSL_cleanse(line, sizeof(line));
	if (!rc)
		return 0;
	buf_init(&tar, 4096);
	rc = tar_write_file(&tar, ".sandboxd/agent.key", 0400, owner, (int64_t)time(NULL), key,
			    strlen(key), e);
	return put_secret_tar(cid, &tar, rc, e);
}
