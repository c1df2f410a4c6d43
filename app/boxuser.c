/* boxuser.c: root inside when the engine keeps it from the host's, else the fallback user
 * (boxuser.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "sandboxd/boxuser.h"
#include "sandboxd/docker.h"
#include "sandboxd/banned.h"

/* Docker's default set less NET_RAW (raw sockets: spoofed packets on the sandbox network)
 * and MKNOD (device nodes), SPEC.md §4. */
static const char *const root_drop[] = { "NET_RAW", "MKNOD", NULL };

/* Each engine's answer (engine.h: calls go to one at a time), per process: it changes
 * only when the engine restarts. */
#define KEPT_MAX 16
static struct {
	char host[520];
	char iso[8];
	time_t at;
} kept[KEPT_MAX];
static int nkept;

void boxuser_for(const struct config *cfg, const char *isolation, struct boxuser *out)
{
	memset(out, 0, sizeof(*out));
	out->root = isolation && (strcmp(isolation, "userns") == 0 || strcmp(isolation, "runsc") == 0);
	out->mode = !out->root ? "fallback" : isolation[0] == 'u' ? "userns" : "runsc";
	out->uid = out->root ? 0 : (unsigned)cfg->sandbox_uid;
	snprintf(out->user, sizeof(out->user), "%u:%u", out->uid, out->uid);
	out->home = out->root ? "/root" : "/home/sandbox";
	out->cap_drop = out->root ? root_drop : NULL;
}

/* The engine's isolation ("userns", "runsc", ""), asked at most every BOXUSER_TTL_S. */
static int isolation_get(char out[8], struct err *e)
{
	const char *host = docker_current_host();
	time_t now = time(NULL);
	int i, rc;

	for (i = 0; i < nkept && strcmp(kept[i].host, host); i++)
		;
	if (i == KEPT_MAX)
		i = (int)(now % KEPT_MAX);    /* more engines than slots: one is asked again */
	if (i == nkept || strcmp(kept[i].host, host) || now - kept[i].at >= BOXUSER_TTL_S ||
	    now < kept[i].at) {
		if ((rc = docker_info_isolation(out, 8, DOCKER_CALL_MS, e))) {
			if (i < nkept)
				kept[i].at = 0;
			return rc;
		}
		snprintf(kept[i].host, sizeof(kept[i].host), "%s", host);
		memcpy(kept[i].iso, out, 8);
		kept[i].at = now;
		if (i == nkept)
			nkept++;
	}
	memcpy(out, kept[i].iso, 8);
	return 0;
}

int boxuser_get(const struct config *cfg, struct boxuser *out, struct err *e)
{
	char iso[8];
	int rc;

	boxuser_for(cfg, "", out);
	if ((rc = isolation_get(iso, e)))
		return rc;
	boxuser_for(cfg, iso, out);
	return 0;
}

const char *boxuser_home(void)
{
	struct err e = { .msg = "" };
	char iso[8];

	if (isolation_get(iso, &e) || (strcmp(iso, "userns") && strcmp(iso, "runsc")))
		return "/home/sandbox";
	return "/root";
}
