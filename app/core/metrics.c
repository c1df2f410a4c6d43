/* metrics.c: the shared region of counters (one slot per process, folded into slot 0 when
 * the process dies) and the Prometheus text exposition written from it (metrics.h). */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "sandboxd/core/metrics.h"
#include "sandboxd/common/banned.h"

/* The same bounds for every histogram, from a 1 ms Docker inspect to a long exec; in
 * microseconds, as observations are, so that a value on a bound falls in its bucket (le). */
static const int64_t bounds_us[METRICS_BUCKETS - 1] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000,
	5000000, 10000000, 30000000, 120000000,
};
static const char *const bound_text[METRICS_BUCKETS] = {
	"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5",
	"5", "10", "30", "120", "+Inf",
};
static const char *const methods[METRICS_METHODS] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other",
};
/* The codes this service and nginx answer; any other is counted by its class. */
static const int codes[] = {
	200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 409, 410, 411,
	413, 415, 416, 422, 429, 431, 499, 500, 501, 502, 503, 504,
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))
static const char *const classes[] = { "1xx", "2xx", "3xx", "4xx", "5xx", "other" };
static const char *const docker_ops[METRICS_DOCKER_OPS] = {
	"create", "start", "exec", "inspect", "remove", "archive", "list", "pull", "ping", "attach", "other",
};
static const char *const pools[METRICS_POOLS] = { "api", "git", "reaper", "holder" };
static const char *const states[METRICS_STATES] = {
	"free", "starting", "idle", "busy", "draining",
};

_Static_assert(NCODES + sizeof(classes) / sizeof(classes[0]) <= METRICS_STATUSES,
	       "METRICS_STATUSES holds every code and class");

static struct metrics_region *region;
static struct metrics_slot *mine;

#define ADD(p, n) __atomic_fetch_add((p), (n), __ATOMIC_RELAXED)
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

int metrics_region_map(int nslots, struct err *e)
{
	size_t size = sizeof(struct metrics_region) + (size_t)nslots * sizeof(struct metrics_slot);
	void *p;

	if (nslots < 1)
		return err_set(e, ERR_INVALID, "metrics: no slot");
	/* Anonymous and shared: every child forked after this sees the same pages; untouched
	 * pages cost nothing until a process writes them. */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return err_set(e, ERR_NOMEM, "metrics: cannot map %zu bytes", size);
	region = p;
	region->nslots = nslots;
	mine = &region->slots[0];
	return 0;
}

struct metrics_region *metrics_region(void)
{
	return region;
}

int metrics_slot_take(int pool)
{
	if (!region)
		return 0;
	for (int i = 1; i < region->nslots; i++) {
		struct metrics_slot *s = &region->slots[i];
		if (LOAD(&s->state) == METRICS_FREE) {
			STORE(&s->pool, pool);
			STORE(&s->pid, 0);
			for (int k = 0; k < METRICS_HELD_KINDS; k++)
				STORE(&s->holding[k], 0);
			__atomic_store_n(&s->state, METRICS_STARTING, __ATOMIC_RELEASE);
			return i;
		}
	}
	return 0;
}

/* Every counter of a slot is a uint64_t or a histogram of them: the fold walks the counts
 * as one array, so that a field added to metrics_counts cannot be forgotten here. */
_Static_assert(sizeof(struct metrics_counts) % sizeof(uint64_t) == 0,
	       "metrics_counts is an array of uint64_t");

void metrics_slot_fold(int i)
{
	struct metrics_slot *s;

	if (!region || i <= 0 || i >= region->nslots)
		return;
	s = &region->slots[i];
	/* The process is reaped: nobody writes the slot now. Scrapes that overlap the fold
	 * see fold_gen change and read again. */
	__atomic_fetch_add(&region->fold_gen, 1, __ATOMIC_ACQ_REL);
	uint64_t *to = (uint64_t *)&region->slots[0].c, *from = (uint64_t *)&s->c;
	for (size_t k = 0; k < sizeof(s->c) / sizeof(uint64_t); k++) {
		uint64_t v = LOAD(&from[k]);
		if (v) {
			ADD(&to[k], v);
			STORE(&from[k], 0);
		}
	}
	__atomic_fetch_add(&region->fold_gen, 1, __ATOMIC_RELEASE);
	STORE(&s->pid, 0);
	__atomic_store_n(&s->state, METRICS_FREE, __ATOMIC_RELEASE);
}

void metrics_slot_draining(int i)
{
	if (region && i > 0 && i < region->nslots &&
	    LOAD(&region->slots[i].state) != METRICS_FREE)
		STORE(&region->slots[i].state, METRICS_DRAINING);
}

void metrics_slot_use(int i)
{
	if (!region || i < 0 || i >= region->nslots)
		return;
	mine = &region->slots[i];
	if (i > 0)
		STORE(&mine->pid, (int)getpid());
}

void metrics_set_state(int state)
{
	if (!region || mine == &region->slots[0])
		return;
	int cur = LOAD(&mine->state);
	/* The master's DRAINING stands: the process is on its way out. */
	while (cur != METRICS_DRAINING && cur != state &&
	       !__atomic_compare_exchange_n(&mine->state, &cur, state, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

int metrics_method_index(const char *method)
{
	for (int i = 0; method && i < METRICS_METHODS - 1; i++)
		if (strcmp(method, methods[i]) == 0)
			return i;
	return METRICS_METHODS - 1;
}

int metrics_status_index(int status)
{
	for (size_t i = 0; i < NCODES; i++)
		if (codes[i] == status)
			return (int)i;
	if (status >= 100 && status <= 599)
		return (int)NCODES + status / 100 - 1;
	return (int)NCODES + 5;
}

/* docker*.c's names for their calls, by their verb and object. */
int metrics_docker_op(const char *op)
{
	static const struct { const char *name; int op; } ops[] = {
		{ "create container", METRICS_DOCKER_CREATE },
		{ "start container", METRICS_DOCKER_START },
		{ "create exec", METRICS_DOCKER_EXEC },
		{ "start exec", METRICS_DOCKER_EXEC },
		{ "start detached exec", METRICS_DOCKER_EXEC },
		{ "inspect exec", METRICS_DOCKER_EXEC },
		{ "inspect container", METRICS_DOCKER_INSPECT },
		{ "remove container", METRICS_DOCKER_REMOVE },
		{ "remove volume", METRICS_DOCKER_REMOVE },
		{ "write archive", METRICS_DOCKER_ARCHIVE },
		{ "read archive", METRICS_DOCKER_ARCHIVE },
		{ "read file", METRICS_DOCKER_ARCHIVE },
		{ "stat path", METRICS_DOCKER_ARCHIVE },
		{ "list containers", METRICS_DOCKER_LIST },
		{ "list volumes", METRICS_DOCKER_LIST },
		{ "pull image", METRICS_DOCKER_PULL },
		{ "ping", METRICS_DOCKER_PING },
		{ "attach stdin", METRICS_DOCKER_ATTACH },
	};
	for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(op, ops[i].name) == 0)
			return ops[i].op;
	return METRICS_DOCKER_OTHER;
}

static void observe(struct metrics_hist *h, int64_t usec)
{
	int b = 0;

	if (usec < 0)
		usec = 0;
	while (b < METRICS_BUCKETS - 1 && usec > bounds_us[b])
		b++;
	ADD(&h->bucket[b], 1);
	ADD(&h->sum_us, (uint64_t)usec);
}

static int any_method(const struct route *routes, size_t n, size_t route)
{
	return route >= n || strcmp(routes[route].method, "*") == 0;
}

int metrics_request_key(const struct route *routes, size_t n, size_t route, const char *method)
{
	size_t key = 0;

	if (route > n)
		return -1;
	for (size_t i = 0; i < route; i++)
		key += any_method(routes, n, i) ? METRICS_METHODS : 1;
	if (any_method(routes, n, route))
		key += (size_t)metrics_method_index(method);
	return key < METRICS_KEYS_MAX ? (int)key : -1;
}

void metrics_count_request(const struct route *routes, size_t nroutes, size_t route,
			   const char *method, int status, int64_t usec)
{
	int key;

	if (!mine || route >= METRICS_ROUTES_MAX ||
	    (key = metrics_request_key(routes, nroutes, route, method)) < 0)
		return;
	ADD(&mine->c.requests[key][metrics_status_index(status)], 1);
	observe(&mine->c.request_seconds[route], usec);
}

void metrics_observe_create(int64_t usec)
{
	if (mine)
		observe(&mine->c.create_seconds, usec);
}

void metrics_observe_exec(int64_t usec)
{
	if (mine)
		observe(&mine->c.exec_seconds, usec);
}

void metrics_observe_docker(int op, int64_t usec)
{
	if (mine && op >= 0 && op < METRICS_DOCKER_OPS)
		observe(&mine->c.docker_seconds[op], usec);
}

void metrics_count_git_bytes(int direction, uint64_t n)
{
	if (mine && (direction == METRICS_GIT_IN || direction == METRICS_GIT_OUT))
		ADD(&mine->c.git_bytes[direction], n);
}

void metrics_count_reaper_pass(void)
{
	if (mine)
		ADD(&mine->c.reaper_passes, 1);
}

void metrics_count_handover(int kind)
{
	if (mine && kind >= 0 && kind < METRICS_HELD_KINDS)
		ADD(&mine->c.handovers[kind], 1);
}

void metrics_set_holding(int kind, int64_t n)
{
	if (mine && mine != &region->slots[0] && kind >= 0 && kind < METRICS_HELD_KINDS)
		STORE(&mine->holding[kind], n);
}

void metrics_gauge_set(int i, const char *name, const char *help, int nrows,
		       const char (*labels)[METRICS_LABELS_MAX], const int64_t *value,
		       int64_t now_ms)
{
	struct metrics_gauge *g;
	uint32_t gen;

	if (!region || i < 0 || i >= METRICS_GAUGES_MAX)
		return;
	g = &region->gauges[i];
	gen = __atomic_load_n(&g->gen, __ATOMIC_ACQUIRE);
	/* One writer at a time: a reaper replaced on SIGHUP may overlap its successor. */
	if ((gen & 1) || !__atomic_compare_exchange_n(&g->gen, &gen, gen + 1, 0, __ATOMIC_ACQ_REL,
						      __ATOMIC_RELAXED))
		return;
	if (nrows > METRICS_GAUGE_ROWS)
		nrows = METRICS_GAUGE_ROWS;
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->help, sizeof(g->help), "%s", help);
	for (int k = 0; k < nrows; k++) {
		memcpy(g->labels[k], labels[k], METRICS_LABELS_MAX);
		g->labels[k][METRICS_LABELS_MAX - 1] = 0;
		g->value[k] = value[k];
	}
	g->nrows = nrows;
	g->refreshed_ms = now_ms;
	__atomic_store_n(&g->gen, gen + 2, __ATOMIC_RELEASE);
}

int metrics_escape(char *out, size_t max, const char *s)
{
	size_t o = 0;

	if (max == 0)
		return ERR_TOOBIG;
	for (; s && *s; s++) {
		const char *rep = *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\n' ? "\\n" : NULL;
		size_t n = rep ? 2 : 1;
		if (o + n >= max) {
			out[o] = 0;
			return ERR_TOOBIG;
		}
		if (rep)
			memcpy(out + o, rep, 2);
		else
			out[o] = *s;
		o += n;
	}
	out[o] = 0;
	return 0;
}

static void add_counts(struct metrics_counts *to, const struct metrics_counts *from)
{
	const uint64_t *f = (const uint64_t *)from;
	uint64_t *t = (uint64_t *)to;

	for (size_t k = 0; k < sizeof(*from) / sizeof(uint64_t); k++)
		t[k] += LOAD(&f[k]);
}

/* A fold done meanwhile (the generation changed) makes the sum read again, up to SUM_TRIES
 * times; a fold in progress (odd) is waited for, up to SUM_WAITS yields, which do not count
 * as tries: a fold of a whole slot takes far longer than a yield (much longer under
 * valgrind), and a sum read while one runs would be short of what it moves. Past both (a
 * master killed mid-fold) the last whole read stands. */
#define SUM_TRIES 1000
#define SUM_WAITS 1000000

void metrics_sum(const struct metrics_region *m, struct metrics_counts *out,
		 struct metrics_gauge gauges[METRICS_GAUGES_MAX])
{
	memset(out, 0, sizeof(*out));
	for (int t = 0, waits = 0; t < SUM_TRIES; t++) {
		uint32_t g1 = __atomic_load_n(&m->fold_gen, __ATOMIC_ACQUIRE);
		if ((g1 & 1) && waits++ < SUM_WAITS) {
			sched_yield();
			t--;
			continue;
		}
		memset(out, 0, sizeof(*out));
		/* Slot 0 always; the others only while in use (a free slot is zero, and reading
		 * it would make its pages resident in this process for nothing). */
		for (int i = 0; i < m->nslots; i++)
			if (i == 0 || LOAD(&m->slots[i].state) != METRICS_FREE)
				add_counts(out, &m->slots[i].c);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&m->fold_gen, __ATOMIC_RELAXED) == g1)
			break;
	}
	for (int i = 0; i < METRICS_GAUGES_MAX; i++) {
		const struct metrics_gauge *g = &m->gauges[i];
		gauges[i].name[0] = 0;
		gauges[i].nrows = 0;
		for (int t = 0; t < SUM_TRIES; t++) {
			uint32_t g1 = __atomic_load_n(&g->gen, __ATOMIC_ACQUIRE);
			if (g1 & 1) {
				sched_yield();
				continue;
			}
			memcpy(&gauges[i], g, sizeof(*g));
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&g->gen, __ATOMIC_RELAXED) == g1)
				break;
			gauges[i].nrows = 0;
		}
		if (gauges[i].nrows < 0 || gauges[i].nrows > METRICS_GAUGE_ROWS)
			gauges[i].nrows = 0;
		gauges[i].name[sizeof(gauges[i].name) - 1] = 0;
		gauges[i].help[sizeof(gauges[i].help) - 1] = 0;
	}
}

/* The exposition: one writer per kind of series, each appending to out and failing only
 * when out is full. */
struct expo {
	struct buf *out;
	int rc;
};

static void put(struct expo *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct expo *x, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (x->rc)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Every line is made of bounded names and labels: one longer than this is a bug. */
	if (n < 0 || (size_t)n >= sizeof(line)) {
		x->rc = ERR_FAIL;
		return;
	}
	x->rc = buf_append(x->out, line, (size_t)n);
}

static void head(struct expo *x, const char *name, const char *type, const char *help)
{
	put(x, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram's lines; labels is "" or `a="x",` (with the trailing comma). */
static void hist(struct expo *x, const char *name, const char *labels,
		 const struct metrics_hist *h)
{
	uint64_t cum = 0;
	size_t ln = strlen(labels);

	for (int b = 0; b < METRICS_BUCKETS; b++) {
		cum += h->bucket[b];
		put(x, "%s_bucket{%sle=\"%s\"} %llu\n", name, labels, bound_text[b],
		    (unsigned long long)cum);
	}
	/* _sum and _count take the labels without the trailing comma. */
	put(x, "%s_sum%s%.*s%s %llu.%06llu\n", name, ln ? "{" : "", (int)(ln ? ln - 1 : 0), labels,
	    ln ? "}" : "", (unsigned long long)(h->sum_us / 1000000),
	    (unsigned long long)(h->sum_us % 1000000));
	put(x, "%s_count%s%.*s%s %llu\n", name, ln ? "{" : "", (int)(ln ? ln - 1 : 0), labels,
	    ln ? "}" : "", (unsigned long long)cum);
}

static const char *route_name(const struct metrics_names *n, size_t i)
{
	return i < n->nroutes ? n->routes[i].pattern : "unmatched";
}

static const char *status_name(int s, char buf[8])
{
	if (s < (int)NCODES) {
		snprintf(buf, 8, "%d", codes[s]);
		return buf;
	}
	return classes[s - (int)NCODES];
}

static void requests(struct expo *x, const struct metrics_names *n, const struct metrics_counts *c)
{
	char route[METRICS_LABELS_MAX], labels[METRICS_LABELS_MAX + 16], sbuf[8];
	size_t nr = n->nroutes + 1;

	head(x, "sandboxd_http_requests_total", "counter",
	     "HTTP requests answered, by route pattern, method and status.");
	for (size_t r = 0, key = 0; r < nr; r++) {
		int any = any_method(n->routes, n->nroutes, r);
		int ok = metrics_escape(route, sizeof(route), route_name(n, r)) == 0;
		for (int m = 0; m < (any ? METRICS_METHODS : 1); m++, key++)
			for (int s = 0; ok && key < METRICS_KEYS_MAX && s < METRICS_STATUSES; s++)
				if (c->requests[key][s])
					put(x, "sandboxd_http_requests_total{route=\"%s\",method=\"%s\","
					    "status=\"%s\"} %llu\n", route,
					    any ? methods[m] : n->routes[r].method, status_name(s, sbuf),
					    (unsigned long long)c->requests[key][s]);
	}
	head(x, "sandboxd_http_request_duration_seconds", "histogram",
	     "Time from a request's arrival to the end of its answer, by route pattern.");
	for (size_t r = 0; r < nr; r++) {
		if (metrics_escape(route, sizeof(route), route_name(n, r)))
			continue;
		snprintf(labels, sizeof(labels), "route=\"%s\",", route);
		hist(x, "sandboxd_http_request_duration_seconds", labels, &c->request_seconds[r]);
	}
}

static void durations(struct expo *x, const struct metrics_counts *c)
{
	char labels[32];

	head(x, "sandboxd_sandbox_create_duration_seconds", "histogram",
	     "Time a successful sandbox create took, container started and clone begun.");
	hist(x, "sandboxd_sandbox_create_duration_seconds", "", &c->create_seconds);
	head(x, "sandboxd_exec_duration_seconds", "histogram",
	     "Time an attached or streamed exec ran, through the agent or Docker exec.");
	hist(x, "sandboxd_exec_duration_seconds", "", &c->exec_seconds);
	head(x, "sandboxd_docker_request_duration_seconds", "histogram",
	     "Time a Docker Engine API call took, by operation.");
	for (int o = 0; o < METRICS_DOCKER_OPS; o++) {
		snprintf(labels, sizeof(labels), "op=\"%s\",", docker_ops[o]);
		hist(x, "sandboxd_docker_request_duration_seconds", labels, &c->docker_seconds[o]);
	}
}

static void workers(struct expo *x, const struct metrics_region *m)
{
	int count[METRICS_POOLS][METRICS_STATES] = { { 0 } };

	for (int i = 1; i < m->nslots; i++) {
		int st = LOAD(&m->slots[i].state), pool = LOAD(&m->slots[i].pool);
		if (st > METRICS_FREE && st < METRICS_STATES && pool >= 0 && pool < METRICS_POOLS)
			count[pool][st]++;
	}
	head(x, "sandboxd_workers", "gauge", "Processes of the master, by pool and state.");
	for (int p = 0; p < METRICS_POOLS; p++)
		for (int s = METRICS_STARTING; s < METRICS_STATES; s++)
			put(x, "sandboxd_workers{pool=\"%s\",state=\"%s\"} %d\n", pools[p], states[s],
			    count[p][s]);
}

static const char *const held_kinds[METRICS_HELD_KINDS] = { "exec", "parked" };

/* The holder's calls: what it holds now (live slots only), and what it took in all. */
static void holding(struct expo *x, const struct metrics_region *m, const struct metrics_counts *c)
{
	int64_t now[METRICS_HELD_KINDS] = { 0 };

	for (int i = 1; i < m->nslots; i++)
		if (LOAD(&m->slots[i].state) > METRICS_FREE)
			for (int k = 0; k < METRICS_HELD_KINDS; k++)
				now[k] += LOAD(&m->slots[i].holding[k]);
	head(x, "sandboxd_holder_calls", "gauge",
	     "Calls the holder keeps now: running execs, and calls parked while a clone runs.");
	for (int k = 0; k < METRICS_HELD_KINDS; k++)
		put(x, "sandboxd_holder_calls{kind=\"%s\"} %lld\n", held_kinds[k], (long long)now[k]);
	head(x, "sandboxd_holder_handovers_total", "counter",
	     "Calls handed by workers to the holder, by kind.");
	for (int k = 0; k < METRICS_HELD_KINDS; k++)
		put(x, "sandboxd_holder_handovers_total{kind=\"%s\"} %llu\n", held_kinds[k],
		    (unsigned long long)c->handovers[k]);
}

static void gauges(struct expo *x, const struct metrics_gauge *g)
{
	for (int i = 0; i < METRICS_GAUGES_MAX; i++) {
		if (!g[i].name[0])
			continue;
		head(x, g[i].name, "gauge", g[i].help);
		for (int k = 0; k < g[i].nrows; k++) {
			char labels[METRICS_LABELS_MAX];
			memcpy(labels, g[i].labels[k], sizeof(labels));
			labels[sizeof(labels) - 1] = 0;
			put(x, "%s{%s} %lld\n", g[i].name, labels, (long long)g[i].value[k]);
		}
	}
}

int metrics_expose(const struct metrics_region *m, const struct metrics_names *n,
		   struct buf *out, struct err *e)
{
	struct metrics_gauge *g = malloc(sizeof(*g) * METRICS_GAUGES_MAX);
	struct metrics_counts *c = malloc(sizeof(*c));
	struct expo x = { out, 0 };
	char version[64];

	if (!g || !c) {
		x.rc = err_set(e, ERR_NOMEM, "metrics: out of memory");
		goto out;
	}
	if (n->nroutes >= METRICS_ROUTES_MAX ||
	    metrics_request_key(n->routes, n->nroutes, n->nroutes, "other") < 0) {
		x.rc = err_set(e, ERR_FAIL, "metrics: %zu routes, room for %d routes and %d keys",
			       n->nroutes, METRICS_ROUTES_MAX - 1, METRICS_KEYS_MAX);
		goto out;
	}
	metrics_sum(m, c, g);
	requests(&x, n, c);
	durations(&x, c);
	gauges(&x, g);
	workers(&x, m);
	holding(&x, m, c);
	head(&x, "sandboxd_git_bytes_total", "counter",
	     "Bytes of git smart HTTP bodies: in from clients (pushes), out to them (fetches).");
	put(&x, "sandboxd_git_bytes_total{direction=\"in\"} %llu\n",
	    (unsigned long long)c->git_bytes[METRICS_GIT_IN]);
	put(&x, "sandboxd_git_bytes_total{direction=\"out\"} %llu\n",
	    (unsigned long long)c->git_bytes[METRICS_GIT_OUT]);
	head(&x, "sandboxd_reaper_passes_total", "counter",
	     "Passes of the reaper (idle stops, stuck starts, reconciliation) under its lease.");
	put(&x, "sandboxd_reaper_passes_total %llu\n", (unsigned long long)c->reaper_passes);
	head(&x, "sandboxd_build_info", "gauge", "The running build; the value is always 1.");
	if (metrics_escape(version, sizeof(version), n->version ? n->version : "unknown"))
		version[0] = 0;
	put(&x, "sandboxd_build_info{version=\"%s\"} 1\n", version);
	if (x.rc == ERR_TOOBIG)
		err_set(e, x.rc, "metrics: the exposition is larger than %zu bytes", out->max);
	else if (x.rc)
		err_set(e, x.rc, "metrics: cannot write the exposition");
out:
	free(g);
	free(c);
	return x.rc;
}
