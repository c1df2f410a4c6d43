/* parked.h: one call the holder keeps while its sandbox clones (park.h): the clone's wait
 * on the agent's connection, then the replay to a worker and its answer passed on to
 * nginx. Nothing of the answer is the holder's: it only changes each record's request id
 * to nginx's (fcgirec_relay). */
#ifndef SANDBOXD_PARKED_H
#define SANDBOXD_PARKED_H
#include <stdint.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/proto/fcgirec.h"
#include "sandboxd/holder/handover.h"
#include "sandboxd/holder/held.h"

/* Past the wait the worker asked for: what the agent takes to say so. */
#define PARKED_SLACK_MS 20000

enum { PARKED_NGINX, PARKED_AGENT, PARKED_WORKER };

struct parked {
	struct handover ho;
	const char *worker_socket;    /* the workers' FastCGI socket (SANDBOXD_SOCKET) */
	int fd[3];                    /* nginx's, the agent's, the replay's; -1 once closed */
	unsigned char *req;           /* the request's records (the memfd, mapped) */
	size_t req_len;
	struct buf extra;             /* the holder's parameters and the end of FCGI_PARAMS */
	size_t sent;                  /* of the replay: req's params, extra, req's stdin */
	int waiting;                  /* the clone's wait is on */
	int gone;                     /* nginx closed: the client left */
	int replayed;                 /* the replay's worker closed: no more answer comes */
	struct fcgirec_relay relay;
	struct buf out;               /* records for nginx, from out_off */
	size_t out_off;
	long long deadline_ms;        /* the wait's end, whatever the agent says */
	long long retry_ms;           /* the workers' socket was full: connect again then */
	int dropped;
	void (*forget)(void *arg, int fd);
	void *forget_arg;
	struct parked *prev, *next;
	struct held_tag tag[3];
};

/* Takes ho and the three descriptors (nginx's, the agent's, the memfd, which is mapped
 * and closed) into p. */
int parked_open(struct parked *p, struct handover *ho, const int fds[3],
		const char *worker_socket, struct err *e) __attribute__((warn_unused_result));
/* An event on one of p's connections (PARKED_*), with epoll's bits. */
void parked_event(struct parked *p, int which, uint32_t events);
/* The wait's deadline and a connect to retry, at now (CLOCK_MONOTONIC ms). */
void parked_tick(struct parked *p, long long now);
/* Writes what nginx takes: 1 when p is over (its answer out, or no one to take it). */
int parked_write(struct parked *p) __attribute__((warn_unused_result));
/* The epoll events p waits for on connection which (0: none). */
uint32_t parked_wants(const struct parked *p, int which) __attribute__((warn_unused_result));
/* Answers p at once with status and why ({"message": why}), without a replay: the holder
 * refuses to keep it (SANDBOXD_HOLDER_PARKED). */
void parked_refuse(struct parked *p, int status, const char *why);
void parked_close(struct parked *p);

#endif
