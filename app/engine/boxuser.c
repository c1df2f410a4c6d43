/* boxuser.c: root inside when the engine keeps it from the host's, else the fallback user
 * (boxuser.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/common/banned.h"

/* Docker's default set less NET_RAW (raw sockets: spoofed packets on the sandbox network)
 * and MKNOD (device nodes), SPEC.md §4. */
static const char *const root_drop[] = { "NET_RAW", "MKNOD", NULL };

/* Each engine's answer (engine.h: calls go to one at a time): it changes only when the
 * engine restarts. Shared by every process forked after boxuser_share (master.c), so that
 * one worker's question serves them all for BOXUSER_TTL_S (a create that asks costs the
 * engine's /info, about 8 ms); without it, each process keeps its own. A seqlock: a writer
 * makes seq odd while it writes, and one that finds it odd leaves the writing to the
 * other; a reader copies, and looks again while seq moved. */
#define KEPT_MAX 16
struct kept {
	char host[520];
	char iso[8];
	time_t at;
};
struct share {
	unsigned seq;
	int n;
	struct kept k[KEPT_MAX];
};
static struct share own, *sh = &own;

int boxuser_share(void)
{
	void *p = mmap(NULL, sizeof(struct share), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	sh = p;
	return 0;
}

/* host's kept answer into out (its time into *at): 1, or 0 when none (or none readable). */
static int kept_get(const char *host, char out[8], time_t *at)
{
	for (int tries = 0; tries < 100; tries++) {
		unsigned seq = __atomic_load_n(&sh->seq, __ATOMIC_ACQUIRE);
		int found = 0, n;

		if (seq & 1)
			continue;
		n = sh->n < KEPT_MAX ? sh->n : KEPT_MAX;
		for (int i = 0; i < n && !found; i++)
			if (strncmp(sh->k[i].host, host, sizeof(sh->k[i].host)) == 0) {
				memcpy(out, sh->k[i].iso, 8);
				*at = sh->k[i].at;
				found = 1;
			}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&sh->seq, __ATOMIC_RELAXED) == seq) {
			out[7] = 0;
			return found;
		}
	}
	return 0;
}

/* host's answer kept (iso NULL: forgotten, so the next look asks), unless another process
 * is writing. */
static void kept_put(const char *host, const char *iso, time_t now)
{
	unsigned seq = __atomic_load_n(&sh->seq, __ATOMIC_RELAXED);
	int i;

	if ((seq & 1) || !__atomic_compare_exchange_n(&sh->seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE,
						      __ATOMIC_RELAXED))
		return;
	for (i = 0; i < sh->n && strcmp(sh->k[i].host, host); i++)
		;
	if (i == KEPT_MAX)
		i = (int)(now % KEPT_MAX);    /* more engines than slots: one is asked again */
	if (iso) {
		snprintf(sh->k[i].host, sizeof(sh->k[i].host), "%s", host);
		snprintf(sh->k[i].iso, sizeof(sh->k[i].iso), "%s", iso);
		sh->k[i].at = now;
		if (i == sh->n)
			sh->n++;
	} else if (i < sh->n) {
		sh->k[i].at = 0;
	}
	__atomic_store_n(&sh->seq, seq + 2, __ATOMIC_RELEASE);
}

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
	const char *host = box_selected()->current();
	time_t now = time(NULL), at = 0;
	int rc;

	if (kept_get(host, out, &at) && now - at < BOXUSER_TTL_S && now >= at)
		return 0;
	if ((rc = box_isolation(out, 8, BOX_CALL_MS, e))) {
		kept_put(host, NULL, now);
		return rc;
	}
	kept_put(host, out, now);
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
