/* holder.c: the holder's process (holder.h): one epoll loop over the hand-overs' socket
 * and, for each exec it keeps, nginx's connection and the agent's. */
#define _GNU_SOURCE  /* accept4 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include "sandboxd/common/agentwire.h"
#include "sandboxd/core/db.h"
#include "sandboxd/holder/held.h"
#include "sandboxd/holder/holder.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/holder/parked.h"
#include "sandboxd/sandbox/exec_slots.h"
#include "sandboxd/lib/proc.h"
#include "sandboxd/common/banned.h"

#define EVENTS 256
#define TICK_MS 1000

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

struct holder {
	const struct config *cfg;
	struct db db;
	int ep;
	struct held *list;
	struct held *dead;         /* dropped in this turn: freed after its events */
	struct parked *parked;     /* calls waiting for their clone (parked.h) */
	struct parked *dead_parked;
	int count;                 /* execs and parked calls */
	int held[METRICS_HELD_KINDS];
	char me[128];              /* held_execs.holder: host:pid */
	long long next_beat, next_tick;
};

static struct held_tag listen_tag = { HELD_LISTEN, -1, NULL, NULL };

static void watch(struct holder *h, int op, int fd, uint32_t ev, void *tag)
{
	struct epoll_event e = { .events = ev, .data.ptr = tag };

	if (epoll_ctl(h->ep, op, fd, &e) && op != EPOLL_CTL_DEL)
		log_error("holder: epoll_ctl: %s", strerror(errno));
}

/* What each of x's connections waits for now. */
static void interest(struct holder *h, struct held *x, int op)
{
	uint32_t out = x->out_off < x->out.len ? EPOLLOUT : 0;

	if (x->fcgi >= 0)
		watch(h, op, x->fcgi, EPOLLRDHUP | out, &x->tag[0]);
	if (x->agent >= 0)
		watch(h, op, x->agent, held_wants_agent(x) ? EPOLLIN | EPOLLRDHUP : 0, &x->tag[1]);
}

/* What each of p's connections waits for now; one opened since (the replay's) is added. */
static void interest_parked(struct holder *h, struct parked *p)
{
	for (int i = 0; i < 3; i++) {
		if (p->fd[i] < 0)
			continue;
		struct epoll_event e = { .events = parked_wants(p, i), .data.ptr = &p->tag[i] };
		if (epoll_ctl(h->ep, EPOLL_CTL_MOD, p->fd[i], &e) && errno == ENOENT)
			watch(h, EPOLL_CTL_ADD, p->fd[i], e.events, &p->tag[i]);
	}
}

/* One call of kind more (d = 1: counted as a hand-over too) or less, in the metrics. */
static void counted(struct holder *h, int kind, int d)
{
	h->held[kind] += d;
	h->count += d;
	if (d > 0)
		metrics_count_handover(kind);
	metrics_set_holding(kind, h->held[kind]);
	metrics_set_state(h->count ? METRICS_BUSY : METRICS_IDLE);
}

/* A held exec's descriptor about to close: out of epoll first (held.h, forget). */
static void forget(void *arg, int fd)
{
	watch(arg, EPOLL_CTL_DEL, fd, 0, NULL);
}

static void drop(struct holder *h, struct held *x)
{
	held_close(x);
	if (x->prev)
		x->prev->next = x->next;
	else
		h->list = x->next;
	if (x->next)
		x->next->prev = x->prev;
	/* Another event of this turn may still name x: it is freed once they are done. */
	x->dropped = 1;
	x->next = h->dead;
	h->dead = x;
	counted(h, METRICS_HELD_EXEC, -1);
}

static void drop_parked(struct holder *h, struct parked *p)
{
	/* Its slot among the parked calls (park.c took it) goes back with it. */
	exec_slot_parked_done(&h->db, p->ho.w.sandbox_id, p->ho.w.request_id);
	parked_close(p);
	if (p->prev)
		p->prev->next = p->next;
	else
		h->parked = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->dropped = 1;
	p->next = h->dead_parked;
	h->dead_parked = p;
	counted(h, METRICS_HELD_PARKED, -1);
}

/* As settle, for a parked call. */
static void settle_parked(struct holder *h, struct parked *p)
{
	if (parked_write(p))
		drop_parked(h, p);
	else
		interest_parked(h, p);
}

static void take_parked(struct holder *h, struct handover *ho, const int fds[3])
{
	struct parked *p = calloc(1, sizeof(*p));
	struct err e;

	if (!p || parked_open(p, ho, fds, h->cfg->socket_path, &e)) {
		log_error("holder: a parked call: %s", p ? e.msg : "no memory");
		if (p) {
			parked_close(p);
			free(p);
		} else {
			for (int i = 0; i < 3; i++)
				close(fds[i]);
			handover_release(ho);
		}
		return;
	}
	p->forget = forget;
	p->forget_arg = h;
	p->next = h->parked;
	if (h->parked)
		h->parked->prev = p;
	h->parked = p;
	counted(h, METRICS_HELD_PARKED, 1);
	/* All the calls it keeps, whoever parked them: past SANDBOXD_HOLDER_PARKED the newest
	 * is answered 503 at once (the per-sandbox and per-account caps are the workers'). */
	if (h->held[METRICS_HELD_PARKED] > h->cfg->holder_parked) {
		char why[96];
		snprintf(why, sizeof(why), "the holder keeps too many parked calls (%d)",
			 h->cfg->holder_parked);
		parked_refuse(p, 503, why);
		settle_parked(h, p);
		return;
	}
	interest_parked(h, p);
}

/* After anything happened to x: its answer out, its end, or what it waits for next. A
 * descriptor closed meanwhile left epoll first (forget). */
static void settle(struct holder *h, struct held *x)
{
	int w;

	if (x->answered)
		held_audit(x);
	w = held_write(x);

	if (w != 0) {
		drop(h, x);
		return;
	}
	interest(h, x, EPOLL_CTL_MOD);
}

/* Says this holder keeps x (the row's holder); 0 when the reaper ended it already. */
static int claim(struct holder *h, long long id)
{
	char sid[24];
	struct err e;
	int code = 0, ok;
	PGresult *res;

	snprintf(sid, sizeof(sid), "%lld", id);
	res = db_ensure(&h->db, &e) ? NULL
	      : db_exec(&h->db, &e, &code, "UPDATE held_execs SET holder = $2, seen_at = now()"
					 " WHERE id = $1 AND holder IS NULL RETURNING 1",
		      2, sid, h->me);
	if (!res) {
		/* The database is away: keep the exec; the beat says so once it is back. */
		log_warn("holder: claiming exec %lld: %s", id, e.msg);
		return 1;
	}
	ok = PQntuples(res) == 1;
	PQclear(res);
	return ok;
}

static void take(struct holder *h, int conn)
{
	struct handover ho;
	struct held *x;
	struct err e;
	int fds[3];

	if (handover_recv(conn, &ho, fds, &e)) {
		log_warn("holder: %s", e.msg);
		return;
	}
	if (ho.w.park)
		return take_parked(h, &ho, fds);
	if (!claim(h, ho.w.held_id)) {
		log_warn("holder: exec %lld was ended before it came", (long long)ho.w.held_id);
		close(fds[0]);
		close(fds[1]);
		handover_release(&ho);
		return;
	}
	if (!(x = calloc(1, sizeof(*x))) || held_open(x, &ho, fds, &h->db, &e)) {
		log_error("holder: exec %lld: %s", (long long)ho.w.held_id, x ? e.msg : "no memory");
		if (x) {
			held_close(x);
			free(x);
		} else {
			close(fds[0]);
			close(fds[1]);
			handover_release(&ho);
		}
		return;
	}
	x->forget = forget;
	x->forget_arg = h;
	x->next = h->list;
	if (h->list)
		h->list->prev = x;
	h->list = x;
	counted(h, METRICS_HELD_EXEC, 1);
	interest(h, x, EPOLL_CTL_ADD);
	/* Frames may be waiting already. */
	held_agent_readable(x);
	settle(h, x);
}

static void accept_all(struct holder *h)
{
	for (;;) {
		int c = accept4(listen_tag.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (c < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				log_warn("holder: accept: %s", strerror(errno));
			return;
		}
		struct held_tag *t = malloc(sizeof(*t));
		if (!t) {
			close(c);
			continue;
		}
		*t = (struct held_tag){ HELD_CONN, c, NULL, NULL };
		watch(h, EPOLL_CTL_ADD, c, EPOLLIN | EPOLLRDHUP, t);
	}
}

static void beat(struct holder *h)
{
	struct err e;

	if (h->count && (db_ensure(&h->db, &e) || db_run(&h->db, &e, "UPDATE held_execs SET seen_at = now()"
					   " WHERE holder = $1", 1, h->me)))
		log_warn("holder: %s", e.msg);
}

static void timers(struct holder *h, long long now)
{
	if (now >= h->next_beat) {
		beat(h);
		h->next_beat = now + HOLDER_BEAT_MS;
	}
	if (now < h->next_tick)
		return;
	h->next_tick = now + TICK_MS;
	for (struct held *x = h->list, *next; x; x = next) {
		next = x->next;
		held_tick(x, now);
		settle(h, x);
	}
	for (struct parked *p = h->parked, *next; p; p = next) {
		next = p->next;
		parked_tick(p, now);
		settle_parked(h, p);
	}
}

static void event(struct holder *h, struct epoll_event *ev)
{
	struct held_tag *t = ev->data.ptr;

	switch (t->kind) {
	case HELD_LISTEN:
		accept_all(h);
		return;
	case HELD_CONN:
		/* A hand-over connection: its one message, then it closes. */
		take(h, t->fd);
		watch(h, EPOLL_CTL_DEL, t->fd, 0, NULL);
		close(t->fd);
		free(t);
		return;
	case HELD_PARKED:
		if (t->p->dropped)
			return;
		parked_event(t->p, t->fd, ev->events);
		settle_parked(h, t->p);
		return;
	case HELD_AGENT:
		if (t->x->dropped)
			return;
		held_agent_readable(t->x);
		break;
	default:
		if (t->x->dropped)
			return;
		if (ev->events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			held_client_gone(t->x);
	}
	settle(h, t->x);
}

static int holder_open(struct holder *h, const struct config *cfg, int listen_fd)
{
	char host[64] = "";

	memset(h, 0, sizeof(*h));
	h->cfg = cfg;
	gethostname(host, sizeof(host) - 1);
	snprintf(h->me, sizeof(h->me), "%.63s:%d", host, (int)getpid());
	db_init(&h->db, cfg->database_url);
	if ((h->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		log_error("holder: epoll: %s", strerror(errno));
		return -1;
	}
	listen_tag.fd = listen_fd;
	watch(h, EPOLL_CTL_ADD, listen_fd, EPOLLIN, &listen_tag);
	return 0;
}

int holder_run(const struct config *cfg, int listen_fd)
{
	struct epoll_event ev[EVENTS];
	struct holder h;

	proc_setup(on_term, "sandboxd-holder");
	if (holder_open(&h, cfg, listen_fd))
		return 1;
	metrics_set_state(METRICS_IDLE);
	log_info("holder ready as %s", h.me);
	/* The master stops the holder after the workers (master.c): nothing more can come
	 * once it is asked to stop; what it holds runs out first. */
	while (!stopping || h.list || h.parked) {
		int n = epoll_wait(h.ep, ev, EVENTS, TICK_MS);

		for (int i = 0; i < n; i++)
			event(&h, &ev[i]);
		timers(&h, agentwire_now_ms());
		while (h.dead) {
			struct held *x = h.dead;
			h.dead = x->next;
			free(x);
		}
		while (h.dead_parked) {
			struct parked *p = h.dead_parked;
			h.dead_parked = p->next;
			free(p);
		}
		if (stopping)
			metrics_set_state(METRICS_DRAINING);
	}
	log_info("holder stopping");
	close(h.ep);
	db_close(&h.db);
	return 0;
}
