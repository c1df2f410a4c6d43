/* config.h: the SANDBOXD_* settings. config_load reads them from a getenv-like function
 * (the environment in production, a table in tests), applies defaults and validates
 * every value; a bad value is an error naming the variable. */
#ifndef SANDBOXD_CONFIG_H
#define SANDBOXD_CONFIG_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/relay.h"

/* One of SANDBOXD_IMAGES' entries: the name clients use (a create's image, a repository's
 * sandbox_image) and the engine's image reference it stands for. */
#define CONFIG_IMAGES_MAX 16
#define CONFIG_IMAGE_NAME_MAX 32
struct config_image {
	char name[CONFIG_IMAGE_NAME_MAX + 1];
	char ref[256];
};

/* Room for a sandbox's network name: SANDBOXD_SANDBOX_NETWORK and "-none". */
#define CONFIG_NETWORK_MAX 128

struct config {
	char database_url[1024];
	char socket_path[256];
	char git_socket_path[256];  /* git's own workers listen here (SANDBOXD_GIT_SOCKET) */
	char socket_group[64];      /* empty: no chown */
	/* The holder (holder.h): running attached and streamed execs are handed to it (0: each
	 * stays in its worker), on its socket; and the tests' fault point in the hand-over. */
	int holder;
	/* A command that ends within this many ms of its start is answered by its worker,
	 * not handed over (the hand-over's row and claim cost more). */
	int hold_after_ms;
	char holder_socket[256];
	/* Where a parked raw PUT's body waits (an unnamed O_TMPFILE) when it is larger than
	 * file_limit, which a memfd (memory) holds. */
	char spool_dir[256];
	char fault_handover[16];
	char repos_dir[512];
	char public_url[256];       /* no trailing slash */
	char docker_host[256];
	char pid_file[256];         /* empty: none */
	char git_bin[256];          /* the git executable that runs http-backend */
	char hooks_dir[256];        /* holds pre-receive (sandboxd-hook) */
	int git_timeout;            /* seconds one git request may take */
	/* Docker and sandboxes. */
	char docker_ca[256], docker_cert[256], docker_key[256]; /* TLS for tcp:// hosts */
	int docker_insecure;        /* SANDBOXD_DOCKER_INSECURE: plain tcp:// engines allowed */
	/* SANDBOXD_IMAGES as given ("name=image,…"), and parsed: images[0] is the default. */
	char images_setting[2048];
	struct config_image images[CONFIG_IMAGES_MAX];
	int nimages;
	int image_pull;             /* pull a sandbox's image when the Docker host lacks it */
	char instance[64];          /* label sandboxd.instance on every container: whose it is */
	/* The Docker engines (engine.h): this host's own (docker_host, its TLS files) under
	 * engine_name with room for engine_max sandboxes; more from docker_hosts
	 * ("name=url,…", the same TLS files), registered at start; an engine that does not
	 * answer for engine_grace seconds has its sandboxes failed. */
	char engine_name[64];
	int engine_max;
	char docker_hosts[1024];
	int engine_grace;
	/* Several hosts (relay.h): this host's relay listener, which names it (its engines'
	 * docker_engines.relay_url), and the file of the key all hosts share; both or neither
	 * (neither: one host, or hosts that all reach every engine). */
	char relay_url[RELAY_URL_MAX + 1];
	char relay_key_file[256];
	char sandbox_git_url[256];  /* how containers reach our git endpoint, no trailing / */
	/* The Docker network of the sandboxes of the deployment's egress (NetworkMode); a
	 * narrower egress's sandboxes join <network>-<mode> (config_egress_network), so the
	 * name leaves room for the suffix. */
	char sandbox_network[CONFIG_NETWORK_MAX - 5];
	char egress[8];             /* SANDBOXD_EGRESS: "open" or "web", the widest a create gets */
	/* The address sandboxd.internal maps to in sandboxes (the engine's host-gateway); empty:
	 * asked of the engine (hostaddr.h). Checked to be one of this host's own. */
	char sandbox_git_addr[64];
	/* Origins a browser may post to /mcp from (comma-separated scheme://host[:port]);
	 * default: the origin of public_url. A request with another Origin is refused. */
	char mcp_origins[1024];
	char signing_key_file[256]; /* PEM P-256 key that signs git URLs; empty: the database's */
	char secrets_key_file[256]; /* 64 hex digits: the sandbox secrets' key; empty: none */
	int idle_timeout;           /* seconds without a call before a sandbox is stopped */
	int max_lifetime;           /* seconds a sandbox lives at most, whatever its activity */
	int reaper_interval;        /* seconds between the reaper's passes */
	/* Seconds an ephemeral ref may go without an update before the reaper deletes it. */
	int ephemeral_ttl;
	int64_t lfs_repo_quota;     /* bytes of LFS objects one repository may store */
	int64_t lfs_account_quota;  /* the same over every repository of one owner */
	int lfs_grace;              /* seconds an unreferenced LFS object is kept */
	int start_timeout;          /* seconds a container may take to start */
	int pool_size;              /* warm containers kept started ahead (0: none) */
	int max_sandboxes;          /* running sandboxes per account */
	int64_t sandbox_memory;     /* bytes */
	int sandbox_cpus;
	int64_t sandbox_max_memory; /* the most a create may ask for (bytes), at least the default */
	int sandbox_max_cpus;       /* the same for CPUs */
	int64_t sandbox_disk;       /* bytes of writable layer (and so /workspace) per sandbox */
	int64_t sandbox_max_disk;   /* the most a create may ask for (bytes) */
	int held_stale;             /* seconds without its holder's beat before the reaper
				     * ends a held exec's row (holder.h) */
	int disk_check_interval;    /* seconds between the reaper's measures of one sandbox
				     * whose engine does not enforce its disk limit */
	int sandbox_pids;
	/* The user commands run as when the engine cannot keep root inside from being root
	 * outside (boxuser.h): a uid no host account uses. */
	int sandbox_uid;
	size_t file_limit;          /* read and write, bytes */
	int execs_per_sandbox;      /* concurrent execs (exec_slots.h) */
	int execs_per_account;
	int parked_per_sandbox;     /* calls parked in the holder (park.h) */
	int parked_per_account;
	int holder_parked;          /* all the holder keeps at once */
	size_t park_memory;         /* a parked body past it waits in a spool file */
	int clone_timeout;          /* seconds: clone.sh's clone, and its git lfs pull */
	int clone_lfs_timeout;
	size_t file_raw_limit;      /* PUT and GET …/files/{path}, bytes */
	int workers;
	int git_workers;            /* serve git only, so that execs never starve it */
	/* A push's body streams to a git worker (bodyrate.h): no byte for git_body_stall
	 * seconds ends it, and so do fewer than git_body_min_rate bytes per second on average
	 * (0: no floor) once the worker has waited git_body_grace seconds for it. */
	int git_body_stall;
	int git_body_grace;
	size_t git_body_min_rate;
	/* Pushes in progress per account (pushslot.h): fewer than git_workers. */
	int git_pushes_per_account;
	size_t body_limit;
	int log_level;
	/* The agent in every sandbox (README "The agent"): attached execs through it (0: Docker
	 * exec only), and the host's copy bind-mounted read-only into each container. */
	int agent;
	char agent_path[256];
	/* Addresses and networks (addrlist.h) that may read GET /metrics without a token; empty:
	 * only a site admin's token may. */
	char metrics_allow[1024];
	/* Previews (SPEC §4): <id>.<preview_domain> is a sandbox's port through nginx; lower-case
	 * DNS labels, no leading or trailing dot. */
	char preview_domain[200];
};

/* The entry named name, or NULL (an unknown name). */
const struct config_image *config_image_find(const struct config *c, const char *name);
/* The default image's engine reference (SANDBOXD_IMAGES' first). */
const char *config_default_image(const struct config *c);

/* Egress modes (SPEC §4 "Limits"), narrowest first: 0 none, 1 web, 2 open; -1 for any
 * other text. */
int config_egress_rank(const char *mode) __attribute__((warn_unused_result));
/* The Docker network of a sandbox of egress mode (at most the deployment's): the
 * deployment's own network for its mode, <network>-<mode> for a narrower one
 * (deploy/egress.sh makes and confines them under the same names). ERR_INVALID for a mode
 * wider than the deployment's or not a mode. */
int config_egress_network(const struct config *c, const char *mode,
			  char out[CONFIG_NETWORK_MAX], struct err *e)
	__attribute__((warn_unused_result));

typedef const char *(*config_getenv_fn)(const char *name);

int config_load(struct config *c, config_getenv_fn get, struct err *e)
	__attribute__((warn_unused_result));

#endif
