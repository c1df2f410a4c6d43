/* metrics_db.c: gauges read from tables into the shared region (metrics_db.h). */
#include <stdio.h>
#include <string.h>
#include "sandboxd/lib/log.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/core/metrics_db.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/common/banned.h"

/* One gauge: its series name and help, its labels (comma-separated), and the query that
 * gives one row per label set: the labels' values in that order, then the value. Adding a
 * gauge from a table is one line here. Each query must stay cheap and bounded: it runs every few seconds
 * on each host, and past METRICS_GAUGE_ROWS rows the rest is dropped. */
struct db_gauge {
	const char *name, *help, *labels, *sql;
};

static const struct db_gauge db_gauges[] = {
	{ "sandboxd_sandboxes", "Sandboxes by state (the sandboxes table, refreshed every 5 s).",
	  "state",
	  "SELECT s, (SELECT count(*) FROM sandboxes WHERE state = s)"
	  "  FROM unnest(ARRAY['starting', 'ready', 'stopped', 'closed', 'failed']) s" },
	/* Live warm containers per image (claimed and failed rows are history, not a gauge);
	 * an image is listed while it has live ones or had a claim in the last hour, so that a
	 * pool emptied by creates reads 0 rather than vanishing. */
	{ "sandboxd_pool_containers", "Warm pool containers by image and state (warm_containers).",
	  "image,state",
	  "SELECT i.image, s, (SELECT count(*) FROM warm_containers w"
	  "                     WHERE w.image = i.image AND w.state = s)"
	  "  FROM (SELECT DISTINCT image FROM warm_containers"
	  "         WHERE state IN ('starting', 'ready') OR claimed_at > now() - interval '1 hour') i"
	  " CROSS JOIN unnest(ARRAY['starting', 'ready']) s" },
	/* 1 for each engine's state now (down: it did not answer the reaper's last ping),
	 * 0 for the others, so that a change reads as two moves. */
	{ "sandboxd_docker_engines", "Docker engines by state (docker_engines: active, draining, "
	  "down).", "engine,state",
	  "SELECT e.name, s, ((CASE WHEN e.down_since IS NOT NULL THEN 'down' ELSE e.state END) = s)::int"
	  "  FROM docker_engines e CROSS JOIN unnest(ARRAY['active', 'draining', 'down']) s"
	  " ORDER BY e.name, s LIMIT 96" },
};
#define NGAUGES (sizeof(db_gauges) / sizeof(db_gauges[0]))
_Static_assert(NGAUGES <= METRICS_GAUGES_MAX, "room in the region for every gauge");

static int64_t last_ms[NGAUGES];
static int failing[NGAUGES];

/* Row k's labels rendered as name="value",… into out; -1 when they do not fit. */
static int render(const struct db_gauge *g, const PGresult *res, int k,
		  char out[METRICS_LABELS_MAX])
{
	const char *names = g->labels;
	size_t o = 0;

	out[0] = 0;
	for (int col = 0; *names; col++) {
		size_t nl = strcspn(names, ",");
		char val[METRICS_LABELS_MAX];
		if (metrics_escape(val, sizeof(val), db_val(res, k, col) ? db_val(res, k, col) : ""))
			return -1;
		int n = snprintf(out + o, METRICS_LABELS_MAX - o, "%s%.*s=\"%s\"", o ? "," : "",
				 (int)nl, names, val);
		if (n < 0 || (size_t)n >= METRICS_LABELS_MAX - o)
			return -1;
		o += (size_t)n;
		names += nl + (names[nl] == ',');
	}
	return 0;
}

static int ncols(const char *labels)
{
	int n = 1;

	for (; *labels; labels++)
		n += *labels == ',';
	return n;
}

static void refresh_one(struct db *db, size_t i, int64_t now_ms)
{
	static char labels[METRICS_GAUGE_ROWS][METRICS_LABELS_MAX];
	int64_t value[METRICS_GAUGE_ROWS];
	const struct db_gauge *g = &db_gauges[i];
	struct err e = { .msg = "" };
	int code = 0, rows = 0, nl = ncols(g->labels);
	PGresult *res = db_exec(db, &e, &code, g->sql, 0);

	last_ms[i] = now_ms;
	if (!res || PQnfields(res) != nl + 1) {
		if (!failing[i]++)
			log_warn("metrics: %s: %s", g->name, res ? "the query's columns do not match its labels" : e.msg);
		PQclear(res);
		return;
	}
	failing[i] = 0;
	if (PQntuples(res) > METRICS_GAUGE_ROWS)
		log_warn("metrics: %s: %d rows, only the first %d are shown", g->name,
			 PQntuples(res), METRICS_GAUGE_ROWS);
	for (int k = 0; k < PQntuples(res) && rows < METRICS_GAUGE_ROWS; k++) {
		int64_t v = 0;
		const char *s = db_val(res, k, nl);
		if (!s || num_parse(s, INT64_MIN, INT64_MAX, &v) || render(g, res, k, labels[rows]))
			continue;
		value[rows++] = v;
	}
	PQclear(res);
	metrics_gauge_set((int)i, g->name, g->help, rows, (const char (*)[METRICS_LABELS_MAX])labels,
			  value, now_ms);
}

void metrics_db_refresh(struct db *db, int64_t now_ms)
{
	if (!metrics_region())
		return;
	for (size_t i = 0; i < NGAUGES; i++)
		if (!last_ms[i] || now_ms - last_ms[i] >= METRICS_DB_REFRESH_MS)
			refresh_one(db, i, now_ms);
}
