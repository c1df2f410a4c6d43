/* sbagent.c: a sandbox's agent reached (sbagent.h). */
#include <stdio.h>
#include <string.h>
#include "sandboxd/engine/box.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/common/banned.h"

#define ADDR_CACHE 16

/* The containers' addresses on the sandbox network, as Docker's inspect reports them (the
 * container cannot choose it): the one written at the start (sandboxes.agent_ip), else asked,
 * and cached per worker. A container keeps its address while it lives, and an address
 * reused by a later container answers with another key. */
static struct {
	char cid[80];
	char ip[16];
} addr_cache[ADDR_CACHE];
static unsigned addr_next;

static int addr_of(const struct sandbox *s, const char *network, char ip[16], struct err *e)
{
	unsigned i;
	int rc;

	for (i = 0; i < ADDR_CACHE; i++)
		if (addr_cache[i].cid[0] && strcmp(addr_cache[i].cid, s->container_id) == 0) {
			memcpy(ip, addr_cache[i].ip, 16);
			return 0;
		}
	/* The address the engine gave at the start (sandboxes.agent_ip) spares the inspect. */
	if (s->agent_ip[0])
		snprintf(ip, 16, "%s", s->agent_ip);
	else if ((rc = box_address(s->container_id, network, ip, 16, BOX_CALL_MS, e)))
		return rc;
	i = addr_next++ % ADDR_CACHE;
	snprintf(addr_cache[i].cid, sizeof(addr_cache[i].cid), "%s", s->container_id);
	memcpy(addr_cache[i].ip, ip, 16);
	return 0;
}

int sbagent_connect(const struct sandbox *s, const char *network, struct agent_conn *c,
		    struct err *e)
{
	char ip[16];
	int rc;

	if (strlen(s->agent_key) != SANDBOX_AGENT_KEY_HEX)
		return err_set(e, ERR_NOTFOUND, "the sandbox has no agent key (made before the agent)");
	if ((rc = addr_of(s, network ? network : "bridge", ip, e)))
		return rc;
	return agent_connect(c, ip, SANDBOX_AGENT_PORT, (const unsigned char *)s->agent_key,
			     SANDBOX_AGENT_KEY_HEX, SBAGENT_CONNECT_MS, e);
}

static int read_start(void *arg, uint64_t size, struct err *e)
{
	return 0;
}

static int read_bytes(void *arg, const char *p, size_t n, struct err *e)
{
	struct sandbox_output *o = arg;
	size_t room = sizeof(o->out) - 1 - o->len;

	memcpy(o->out + o->len, p, n < room ? n : room);
	o->len += n < room ? n : room;
	o->out[o->len] = 0;
	return 0;
}

int sbagent_read(const struct sandbox *s, const char *network, const char *path,
		 struct sandbox_output *o, struct err *e)
{
	struct agent_conn c = { .fd = -1 };
	const struct files_sink sink = { read_start, read_bytes, o };
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = sbagent_connect(s, network, &c, e)))
		return rc;
	rc = agent_file_read(&c, path, 1 << 20, &sink, e);
	agent_close(&c);
	return rc;
}
