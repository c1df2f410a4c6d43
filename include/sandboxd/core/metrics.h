/* metrics.h: the service's counters and histograms in memory that every process shares, and
 * their Prometheus text exposition (format 0.0.4).
 *
 * Prefork processes share nothing the master did not map before forking: the master maps
 * one MAP_SHARED anonymous region (metrics_region_map) and gives each process it forks a
 * slot of its own (metrics_slot_take, then metrics_slot_use in the child). A process adds
 * to its slot only, with relaxed atomic adds: no lock, no contention, and a process killed
 * mid-way leaves whole numbers (each add is one instruction). A scrape sums every slot in
 * use. When the master reaps a process it folds the slot into slot 0, the retired slot,
 * and only then frees it; the fold runs under a sequence counter so that a scrape that
 * overlaps it reads again instead of counting the slot twice or not at all (a counter that
 * went down would look like a restart to Prometheus). Slot 0 also takes a process for which
 * no slot is free (several SIGHUPs in a row); adds there are atomic too, so nothing is lost.
 *
 * Every table has a fixed size (routes of the route table, methods, status codes, buckets,
 * Docker operations), so the region's size is known before the fork and no label takes an
 * unbounded value. Gauges read from PostgreSQL (metrics_db.h) live in the region too, with
 * their labels already rendered, under a sequence counter of their own.
 *
 * Without a region (sandboxctl, unit tests, a failed map) every metrics_count_* and
 * metrics_observe_* call does nothing: counting never fails a request. */
#ifndef SANDBOXD_METRICS_H
#define SANDBOXD_METRICS_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/router.h"

/* Rows of the route table, plus one for requests that match no route ("unmatched"). */
#define METRICS_ROUTES_MAX 96
#define METRICS_METHODS 8      /* GET HEAD POST PUT PATCH DELETE OPTIONS, and any other */
/* Request counters are kept by (route, method) key: a route of one method has one key (the
 * router gives it no other method), a route of any method ("*") and the unmatched row have
 * METRICS_METHODS each. Five times smaller than a route x method table, and a scrape reads
 * every slot in use: its cost is the slots' size. */
#define METRICS_KEYS_MAX 128
#define METRICS_STATUSES 36    /* the codes of metrics_status_index, classes, and "other" */
#define METRICS_BUCKETS 16     /* 15 bounds and +Inf */
#define METRICS_GAUGES_MAX 4   /* gauges from tables (metrics_db.c) */
#define METRICS_GAUGE_ROWS 96  /* label sets per gauge; more rows are dropped (logged) */
#define METRICS_LABELS_MAX 160 /* one row's rendered labels: a="x",b="y" */

enum metrics_docker_op {
	METRICS_DOCKER_CREATE, METRICS_DOCKER_START, METRICS_DOCKER_EXEC, METRICS_DOCKER_INSPECT,
	METRICS_DOCKER_REMOVE, METRICS_DOCKER_ARCHIVE, METRICS_DOCKER_LIST, METRICS_DOCKER_PULL,
	METRICS_DOCKER_PING, METRICS_DOCKER_ATTACH, METRICS_DOCKER_OTHER, METRICS_DOCKER_OPS
};
enum metrics_pool {
	METRICS_POOL_API, METRICS_POOL_GIT, METRICS_POOL_REAPER, METRICS_POOL_HOLDER, METRICS_POOLS
};
/* A slot's state: FREE is unused (and zero); the rest is sandboxd_workers' state label. */
enum metrics_state {
	METRICS_FREE, METRICS_STARTING, METRICS_IDLE, METRICS_BUSY, METRICS_DRAINING,
	METRICS_STATES
};
enum metrics_git_dir { METRICS_GIT_IN, METRICS_GIT_OUT };
/* What the holder keeps: running execs, and calls parked while their clone runs. */
enum metrics_held { METRICS_HELD_EXEC, METRICS_HELD_PARKED, METRICS_HELD_KINDS };

/* Buckets are not cumulative here (one add per observation); the sum is in microseconds,
 * an integer, so that it too is a plain atomic add. */
struct metrics_hist {
	uint64_t bucket[METRICS_BUCKETS];
	uint64_t sum_us;
};

/* What one process counts; all fields only grow while the process lives. */
struct metrics_counts {
	uint64_t requests[METRICS_KEYS_MAX][METRICS_STATUSES];
	struct metrics_hist request_seconds[METRICS_ROUTES_MAX];
	struct metrics_hist create_seconds, exec_seconds;
	struct metrics_hist docker_seconds[METRICS_DOCKER_OPS];
	uint64_t git_bytes[2];
	uint64_t reaper_passes;
	uint64_t handovers[METRICS_HELD_KINDS];  /* taken by the holder */
};

struct metrics_slot {
	int state;            /* enum metrics_state */
	int pool;             /* enum metrics_pool */
	int pid;
	/* What the process holds now, by enum metrics_held: a gauge, not folded when the
	 * process ends (what it held ended with it). */
	int64_t holding[METRICS_HELD_KINDS];
	struct metrics_counts c;
};

/* A gauge from a table, as last refreshed: nrows label sets (already escaped) and values. */
struct metrics_gauge {
	uint32_t gen;         /* odd while the refresher writes */
	char name[64], help[128];
	int nrows;
	int64_t refreshed_ms; /* CLOCK_MONOTONIC of the refresh; 0: never */
	char labels[METRICS_GAUGE_ROWS][METRICS_LABELS_MAX];
	int64_t value[METRICS_GAUGE_ROWS];
};

struct metrics_region {
	uint32_t fold_gen;    /* odd while the master folds a slot into slot 0 */
	int nslots;           /* slot 0 (retired) included */
	struct metrics_gauge gauges[METRICS_GAUGES_MAX];
	struct metrics_slot slots[];
};

/* What the exposition names that the region does not hold. */
struct metrics_names {
	const struct route *routes;  /* the route table the dispatcher counts by */
	size_t nroutes;              /* at most METRICS_ROUTES_MAX - 1, METRICS_KEYS_MAX keys */
	const char *version;         /* sandboxd_build_info's label */
};

/* Master, before forking: maps a region with nslots slots (0 the retired one) and makes it
 * this process's (and its children's). 0, or ERR_NOMEM (logged by the caller; the service
 * then runs without metrics). */
int metrics_region_map(int nslots, struct err *e) __attribute__((warn_unused_result));
/* The region of this process, or NULL. */
struct metrics_region *metrics_region(void);
/* Master: a free slot for a process of pool about to be forked, marked STARTING; 0 (the
 * retired slot, shared) when none is free or there is no region. */
int metrics_slot_take(int pool) __attribute__((warn_unused_result));
/* Master, after the process of slot i was reaped: folds it into slot 0 and frees it. */
void metrics_slot_fold(int i);
/* Master: slot i's process was asked to finish (SIGHUP, SIGTERM). */
void metrics_slot_draining(int i);
/* Child, right after fork: slot i is this process's; its pid is recorded. */
void metrics_slot_use(int i);
/* This process's state (idle, busy); a slot already DRAINING stays so. */
void metrics_set_state(int state);

/* The method and status indexes of the tables (the last index of each: any other). */
int metrics_method_index(const char *method) __attribute__((warn_unused_result));
int metrics_status_index(int status) __attribute__((warn_unused_result));
int metrics_docker_op(const char *op) __attribute__((warn_unused_result));

/* The counter key of a request on row route of routes[n] (n: it matched none) by method;
 * -1 when the table has more keys than METRICS_KEYS_MAX. */
int metrics_request_key(const struct route *routes, size_t n, size_t route, const char *method)
	__attribute__((warn_unused_result));
/* Counting into this process's slot. A request: its route row (nroutes when it matched
 * none) of the table, its method and status, its duration; out-of-range values are counted
 * as "other" or dropped. */
void metrics_count_request(const struct route *routes, size_t nroutes, size_t route,
			   const char *method, int status, int64_t usec);
void metrics_observe_create(int64_t usec);
void metrics_observe_exec(int64_t usec);
void metrics_observe_docker(int op, int64_t usec);
void metrics_count_git_bytes(int direction, uint64_t n);
void metrics_count_reaper_pass(void);
/* The holder took one call of kind (enum metrics_held): counted, and its gauge set to n. */
void metrics_count_handover(int kind);
/* The holder's gauge of kind: it holds n now. */
void metrics_set_holding(int kind, int64_t n);

/* The region's gauge i is name/help with nrows rows, from the one refresher (a second one
 * that starts meanwhile skips its turn). labels[k] must already be escaped. */
void metrics_gauge_set(int i, const char *name, const char *help, int nrows,
		       const char (*labels)[METRICS_LABELS_MAX], const int64_t *value,
		       int64_t now_ms);

/* Writes s into out escaped as a label value (backslash, quote, newline), at most max
 * bytes with the NUL; ERR_TOOBIG when it did not fit (out then holds a cut, valid prefix). */
int metrics_escape(char *out, size_t max, const char *s) __attribute__((warn_unused_result));

/* The sum of every slot in use, read consistently with the folds, into *out (zeroed first),
 * and the gauges into gauges[]. Pure: no I/O; reads the region only. */
void metrics_sum(const struct metrics_region *m, struct metrics_counts *out,
		 struct metrics_gauge gauges[METRICS_GAUGES_MAX]);
/* The text exposition of region m (counts summed as metrics_sum, worker states, gauges,
 * build info) appended to out. Pure: region in, text out. 0, ERR_TOOBIG or ERR_NOMEM when
 * out cannot hold it (e says so). */
int metrics_expose(const struct metrics_region *m, const struct metrics_names *n,
		   struct buf *out, struct err *e) __attribute__((warn_unused_result));

#endif
