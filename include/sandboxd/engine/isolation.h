/* isolation.h: a sandbox's kernel boundary (issue 32 C; docs/api/sandboxes.md, "Isolation
 * per sandbox"; decisions 0083, 0084).
 *
 * "container", the default: the engine's default runtime (normally runc), namespaces,
 * seccomp and boxuser.h's user and capabilities on the host's kernel. "gvisor": the
 * engine's gVisor runtime (runsc), named by the operator per engine
 * (docker_engines.gvisor_runtime: sandboxctl engine add --runtime, engine runtime): the
 * sandbox's system calls are served by gVisor's kernel in user space (the sentry), and
 * its root is the sentry's. A gVisor sandbox only ever runs under that runtime: when no
 * engine offers one the create is refused (422), when the engine chosen does not list it
 * (no runsc, an old Docker) too (503, naming both); it never falls back to runc.
 *
 * The engine's /info is asked at most every ISOLATION_TTL_S seconds per process and
 * engine; an answer without the runtime is not kept (the operator's fix counts at once).
 */
#ifndef SANDBOXD_ISOLATION_H
#define SANDBOXD_ISOLATION_H
#include <json-c/json.h>
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"
#include "sandboxd/engine/box.h"

#define ISOLATION_CONTAINER "container"
#define ISOLATION_GVISOR "gvisor"
#define ISOLATION_TTL_S 30

/* *offered 1 when an active engine has a gVisor runtime (any host's: the placement relays
 * to its owner), else 0. 0, or ERR_DB. */
int isolation_gvisor_offered(struct db *db, int *offered, struct err *e)
	__attribute__((warn_unused_result));

/* The Docker runtime a new sandbox on engine (already the target of Docker calls:
 * engine_use) runs under, into runtime. gvisor: the engine's gvisor_runtime, which its
 * /info must list, else ERR_NOSTART "the engine E has no runtime R: isolation gvisor cannot
 * run there" (or the engine's own error when it does not answer). Not gvisor: its
 * DefaultRuntime, "" when it does not say or answer (never an error: a container create
 * goes on as before). */
int isolation_runtime(struct db *db, const char *engine, int gvisor,
		      char runtime[BOX_RUNTIME_MAX + 1], struct err *e)
	__attribute__((warn_unused_result));

/* GET /healthz's "isolation": {"gvisor": [{"engine", "runtime", "ready", "error"?}]}, one
 * entry per engine of this host with a gVisor runtime: ready when its /info lists it. Calls
 * go to those engines; the configured one is the target again after. NULL when the
 * database does not answer. */
json_object *isolation_health(struct db *db);
#endif
