/* api_metrics.c: GET /metrics, the Prometheus text exposition of every process's counts
 * (metrics.h), to a site admin's token or to an address of SANDBOXD_METRICS_ALLOW. */
#include "sandboxd/lib/addrlist.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/common/banned.h"

#ifndef SANDBOXD_VERSION
#define SANDBOXD_VERSION "unknown"
#endif

/* Read-only and about the whole service: a site admin's token of either scope, as for any
 * read; the route is public so that an allowed address needs no token at all. */
static int allowed(const struct req *r, struct err *e)
{
	const struct caller *c = &r->caller;

	if (addrlist_match(r->cfg->metrics_allow, r->remote_addr))
		return 0;
	return auth_site_admin_read(c, e);
}

int api_metrics(struct req *r, struct err *e)
{
	const struct metrics_names names = { r->routes, r->nroutes, SANDBOXD_VERSION };
	const struct metrics_region *m = metrics_region();
	int rc = allowed(r, e);

	if (rc)
		return rc;
	if (!m)
		return err_http(e, 503, "metrics unavailable");
	buf_clear(&r->out);
	if ((rc = metrics_expose(m, &names, &r->out, e)))
		return rc;
	http_body(r, 200, "text/plain; version=0.0.4; charset=utf-8");
	return 0;
}
