/* metrics_db.h: the gauges that come from PostgreSQL tables (sandboxes by state, …), read
 * by one process per host (the reaper) into the shared region, so that a scrape never
 * queries the database: each worker's scrape shows what the last refresh read.
 * Staleness: at most METRICS_DB_REFRESH_MS, or one reaper pass when a pass runs longer. */
#ifndef SANDBOXD_METRICS_DB_H
#define SANDBOXD_METRICS_DB_H
#include <stdint.h>
#include "sandboxd/core/db.h"

#define METRICS_DB_REFRESH_MS 5000

/* Refreshes every gauge of the table whose time has come (now_ms - its last refresh >=
 * METRICS_DB_REFRESH_MS); a query that fails keeps the gauge's last values (logged once
 * per failure streak). Needs metrics_region(); does nothing without one. */
void metrics_db_refresh(struct db *db, int64_t now_ms);

#endif
