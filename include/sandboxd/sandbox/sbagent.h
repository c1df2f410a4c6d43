/* sbagent.h: reaching a sandbox's own agent (README "The agent"): its address on the
 * sandbox network as Docker's inspect reports it (cached per worker by container id; never
 * an address, a name or a path the container could choose) and an authenticated connection
 * with the sandbox's key; and small reads of a file of its through it. The layer between
 * the sandbox's row (sandbox.h) and the agent's protocol (agent_client.h), shared by the
 * exec service and the clone's wait. */
#ifndef SANDBOXD_SBAGENT_H
#define SANDBOXD_SBAGENT_H
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/common/err.h"
#include "sandboxd/sandbox/sandbox.h"

#define SBAGENT_CONNECT_MS 1500

/* Connects c to s's agent on network (NULL: "bridge") within SBAGENT_CONNECT_MS,
 * handshake included. ERR_NOTFOUND when the sandbox has no key (made before the agent);
 * else as agent_connect. */
int sbagent_connect(const struct sandbox *s, const char *network, struct agent_conn *c,
		    struct err *e) __attribute__((warn_unused_result));
/* The first sizeof(o->out) - 1 bytes of the file at path in s, through its agent, into o
 * (NUL-terminated; o->len set). ERR_NOTFOUND for no such file (or no key), else the
 * connection's or the agent's error. */
int sbagent_read(const struct sandbox *s, const char *network, const char *path,
		 struct sandbox_output *o, struct err *e) __attribute__((warn_unused_result));

#endif
