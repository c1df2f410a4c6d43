/* sandbox.h: the sandbox lifecycle. A sandbox is a row first (state starting), then a
 * container labelled with its id, then ready; its repository is cloned inside the
 * container in the background with a fresh sandbox token (dst_) in the clone's git config.
 * Every step is visible in the database, so any worker on any host can serve the next
 * call, and a reconciler can repair what a crash left half done. */
#ifndef SANDBOXD_SANDBOX_H
#define SANDBOXD_SANDBOX_H
#include <stdint.h>
#include <json-c/json.h>
#include "sandboxd/forge/auth.h"
#include "sandboxd/core/config.h"
#include "sandboxd/proto/engine_list.h"
#include "sandboxd/core/db.h"
#include "sandboxd/lib/json.h"

#define SANDBOX_ID_LEN 27              /* "sb_" + 24 hex */
/* The clone's git config, which holds the sandbox's git credential (app/sandbox/sh/clone.sh). */
#define SANDBOX_GIT_CONFIG "/workspace/repo/.git/config"
/* How the clone ended, "done" or "failed", once it has (app/sandbox/sh/clone.sh); why beside it. */
#define SANDBOX_CLONE_STATE "/workspace/.sandboxd/clone.state"
#define SANDBOX_LABEL "sandboxd.sandbox"

struct sandbox {
	char id[SANDBOX_ID_LEN + 1];
	char repository_id[DB_ID_MAX];
	char account_id[DB_ID_MAX];
	char creator[48];
	char ref[256];
	char commit[41];
	char state[12];
	char clone_state[12];
	char clone_error[256];
	char container_id[80];
	char created_at[32], last_used_at[32], idle_stop_at[32];
	int pooled;                /* sandbox_create only: its container came from the warm pool */
	char handed[8];            /* and how its parameters went in: "agent", "stdin" or "archive" */
	/* Its agent's key (sandboxes.agent_key, SANDBOX_AGENT_KEY_HEX hex digits; "": none:
	 * made before the agent, or ended). */
	char agent_key[65];
	/* Its token sealed with the secrets key (sandboxes.token_sealed, 023; "": none), what
	 * exec_token opens to mask it (exec.h). */
	char token_sealed[401];
	/* Its container's address (sandboxes.agent_ip, 024), as the engine reported it at the
	 * start; "": not known (ask the engine). */
	char agent_ip[16];
	/* The HOME of its container's user (sandboxes.home, 026), decided when the container
	 * was made; "": made before 026 (boxuser_home()). */
	char home[16];
	char saved_ref[96];        /* where a stop saved its work (sandbox_save.h), or "" */
	char image[CONFIG_IMAGE_NAME_MAX + 1]; /* its SANDBOXD_IMAGES name; "": made before 016 */
	/* Its egress (none, web, open) and the Docker network that gives it; both "" for a
	 * sandbox made before 018 (on SANDBOXD_SANDBOX_NETWORK): use sandbox_network(). */
	char egress[8];
	char network[CONFIG_NETWORK_MAX];
	char end_reason[512];      /* why it ended (cut to fit); "" while it lives */
	/* Its kernel boundary (isolation.h, 031): "container" or "gvisor", and the Docker
	 * runtime its container was made with ("": not known, or made before 031). */
	char isolation[12];
	char runtime[64];
	int64_t nano_cpus, memory; /* as created (019); 0 for a sandbox made before */
	int64_t disk;              /* its disk limit, bytes, as created (020); 0 before */
	char engine[ENGINE_NAME_MAX + 1]; /* the engine it runs on (021); "": the own */
	/* The relay URL of the host that owns its engine when that is another host (022:
	 * only that host calls the engine; its calls are relayed there); "": this host may. */
	char host[RELAY_URL_MAX + 1];
};
/* The Docker network the sandbox's container is on: the one to ask its address of. */
const char *sandbox_network(const struct config *cfg, const struct sandbox *s);
#define SANDBOX_AGENT_KEY_HEX 64
#define SANDBOX_AGENT_PORT 7070
#define SANDBOX_AGENT_BIN "/usr/local/lib/sandboxd/sandboxd-agent"  /* in the container */

/* The creating call holds a session advisory lock on this key (for the sandbox id as $1)
 * from before its row is committed until it ends. A row in state starting whose lock is
 * free and that no transaction holds tells the reaper its creator is gone (its database
 * connection or its process died): the sandbox can be failed at once. */
/* A create's own limits (SPEC §4 "Limits"); 0: the configured default. */
struct sandbox_limits {
	int64_t memory;            /* bytes */
	int64_t nano_cpus;
	int64_t disk;              /* bytes of writable layer; 0: SANDBOXD_SANDBOX_DISK_MB */
	const char *image;         /* the engine's image reference; NULL: the default image */
	const char *network;       /* its Docker network; NULL: SANDBOXD_SANDBOX_NETWORK */
	/* The engine's runtime it runs under, outside the engine's user remapping (a gVisor
	 * sandbox's: isolation.h); NULL: the engine's default runtime, as the engine maps. */
	const char *runtime;
};

#define SANDBOX_LOCK_KEY "1935764068, hashtext($1)"  /* 1935764068: "sand" */
/* What a new sandbox is made of: the caller (creator, author of the clone's commits), the
 * repository and ref (NULL, "" or "HEAD": the default branch; refs/heads/X is branch X). */
struct sandbox_new {
	struct db *db;
	const struct config *cfg;
	struct pool *pool;
	const struct caller *caller;
	const struct repo *repo;
	const char *ref;
	int64_t depth;             /* > 0: a shallow clone of that many commits; 0: all */
	int blobless;              /* filter blob:none: file contents fetched when needed */
	const char *secrets;       /* the repository's secrets its execs get: a text[] literal
				    * of checked names ("{A,B}"), or NULL for none */
	struct sandbox_limits limits;  /* its own memory and CPUs; 0: the defaults */
	/* The SANDBOXD_IMAGES entry it runs (the create's, else the repository's); NULL: the
	 * default. limits.image is set from it by sandbox_create. */
	const struct config_image *image;
	/* Its egress mode (config_egress_rank), at most the deployment's; NULL: the
	 * deployment's. A narrower one runs on its own network and never from the warm pool. */
	const char *egress;
	/* Placed on this host's engines only (a create relayed here: never relayed again). */
	int here_only;
	/* Isolation gvisor (isolation.h): only on an engine with a gVisor runtime, under it,
	 * root inside, started cold (the warm pool's containers run the default runtime). */
	int gvisor;
};
/* Creates a sandbox (sandbox_create.c): its row, its container, its clone started. out gets
 * it (out->id as soon as it has one, for the audit row, even on failure). ERR_RELAY when
 * the placement chose another host's engine (out->host: that host's relay URL), before
 * any row is made. Errors: ERR_LIMIT
 * (the caller's sandbox limit), ERR_NOTFOUND (unknown ref), ERR_NOSTART (the container did
 * not start: e says what the client reads; detail, sandbox_detail_max bytes, says why, for
 * the audit row), ERR_DB, ERR_FAIL. A failure after the container was made removes it, also
 * when the database is gone (then ERR_DB, and the row, still starting, is the reaper's).
 * The transaction on db is committed along the way (the row must outlive a later
 * failure); on success the row's update to ready is left for the caller's commit. */
#define SANDBOX_DETAIL_MAX 256
#define SANDBOX_DEPTH_MAX 1000000  /* the most commits a shallow clone asks for */
int sandbox_create(const struct sandbox_new *n, struct sandbox *out,
		   char detail[SANDBOX_DETAIL_MAX], struct err *e)
	__attribute__((warn_unused_result));
/* Removes a container (an empty id: nothing to do); one already gone is no error. A
 * failure is only logged: the reaper removes containers that no live sandbox owns. */
void sandbox_remove_container(const char *cid);
/* The environment of the sandbox's processes (the container's and every exec's):
 * SANDBOX_ID, SANDBOX_REPOSITORY (repo, "owner/name"), SANDBOX_REF, SANDBOX_COMMIT, HOME and
 * PATH, in a pool array with room for extra more and the NULL; *n is the count so far. */
int sandbox_env(struct pool *p, const struct sandbox *s, const char *repo, size_t extra,
		const char ***out, size_t *n, struct err *e) __attribute__((warn_unused_result));
/* Loads sandbox id of repo. ERR_NOTFOUND when it does not exist on that repository. Its
 * Docker calls go to its engine from here (engine_use); those of a sandbox another host
 * owns (out->host) fail with docker unavailable: the caller relays the call there. */
int sandbox_load(struct db *db, const char *repo_id, const char *id, struct sandbox *out,
		 struct err *e) __attribute__((warn_unused_result));
/* Marks a call: last_used_at now, idle deadline moved (by the sandbox's own idle limit
 * when PATCH set one, else the setting's). */
int sandbox_touch(struct db *db, int idle_timeout, const struct sandbox *s, struct err *e)
	__attribute__((warn_unused_result));
/* Ends a sandbox: token revoked and state set (closed, stopped, failed) with reason, then
 * the container removed. A transaction in progress on db is committed (and a new one
 * begun) between the two, so that no one reads the missing container as a failure.
 * Idempotent. */
int sandbox_end(struct db *db, const struct sandbox *s, const char *state, const char *reason,
		struct err *e) __attribute__((warn_unused_result));
/* The clone's state as the container reports it; updates the row when it changed. Waits up
 * to wait_ms for a pending clone, and stops waiting (0, the clone still pending) as soon
 * as gone(arg) says the caller went away (gone NULL: never asked). */
int sandbox_clone_wait(struct db *db, const struct config *cfg, struct sandbox *s,
		       long wait_ms, int (*gone)(void *arg), void *arg, struct err *e)
	__attribute__((warn_unused_result));
/* What a short internal command printed on stdout: at most sizeof(out) - 1 bytes, always
 * NUL-terminated. */
struct sandbox_output {
	char out[4096];
	size_t len;
};
/* Runs argv in container as the sandbox user (the service's own short commands: the clone's
 * state, the git config, killing a process group) and collects its stdout and exit code
 * (exit_code may be NULL). 0, or the Docker error. */
int sandbox_run(const char *container, const char *const *argv, struct sandbox_output *o,
		int *exit_code, struct err *e) __attribute__((warn_unused_result));
/* The same with env ("NAME=value", NULL-terminated) for the command: values that must
 * not stand in an argument. */
int sandbox_run_env(const char *container, const char *const *argv, const char *const *env,
		    struct sandbox_output *o, int *exit_code, struct err *e)
	__attribute__((warn_unused_result));
/* {id, ref, commit, state, image, egress, clone, created_at, last_used_at, idle_stop_at,
 * saved_ref?}. */
json_object *sandbox_json(const struct sandbox *s);

/* The name its token is sealed under (secrets_seal's, with the sandbox's id in place of the
 * repository's): no secret's name has a space. */
#define SANDBOX_TOKEN_SEALED_AS "sandbox token"

#endif
