/* githttp.c: smart HTTP through `git http-backend`, streamed both ways. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "sandboxd/http/bodyrate.h"
#include "sandboxd/proto/cgi.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/http/gitenv.h"
#include "sandboxd/http/githttp.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/proto/pushreport.h"
#include "sandboxd/git/pushtee.h"
#include "sandboxd/git/streamscan.h"
#include "sandboxd/lib/strv.h"
#include "sandboxd/common/banned.h"

#define CHUNK 65536
#define IDLE_MS (10 * 60 * 1000)  /* no byte either way for this long: give up */
#define END_GRACE_MS 2000         /* git's own cleanup after SIGTERM, before SIGKILL */

int githttp_match(const char *path, const char *query, struct git_route *out)
{
	const char *p = path + 1, *slash, *rest;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (path[0] != '/' || !(slash = strchr(p, '/')))
		return 0;
	rest = strstr(slash + 1, ".git/");
	if (!rest || memchr(slash + 1, '/', (size_t)(rest - slash - 1)))
		return 0;
	if (router_decode_segment(p, (size_t)(slash - p), out->owner, sizeof(out->owner)))
		return 1;
	n = (size_t)(rest - slash - 1);
	if (router_decode_segment(slash + 1, n, out->name, sizeof(out->name)))
		return 1;
	rest += 5;
	if (strcmp(rest, "info/refs") == 0) {
		out->method = "GET";
		if (query && strcmp(query, "service=git-upload-pack") == 0)
			out->service = GIT_INFO_REFS;
		else if (query && strcmp(query, "service=git-receive-pack") == 0)
			out->service = GIT_INFO_REFS, out->push = 1;
	} else if (strcmp(rest, "git-upload-pack") == 0) {
		out->method = "POST";
		out->service = GIT_UPLOAD_PACK;
	} else if (strcmp(rest, "git-receive-pack") == 0) {
		out->method = "POST";
		out->service = GIT_RECEIVE_PACK;
		out->push = 1;
	} else if (strcmp(rest, "info/lfs/objects/batch") == 0) {
		out->method = "POST";
		out->service = GIT_LFS_BATCH;
	} else if (strncmp(rest, "info/lfs/objects/", 17) == 0 && strlen(rest + 17) <= 64 &&
		   !strchr(rest + 17, '/')) {
		out->service = GIT_LFS_OBJECT;
		snprintf(out->oid, sizeof(out->oid), "%s", rest + 17);
	}
	return 1;
}

/* In the child: extra[i] (or nothing, -1) becomes descriptor 3 + i, and nothing else
 * but 0 to 2 stays open. Git leaves descriptors it did not open alone, so they reach the
 * hooks through http-backend and receive-pack: 3 the hooks' report, 4 and 5 the scanner's
 * "done" pipe and records, 6 the pushing sandbox's secret values. */
#define EXTRA_FDS 4
static int child_fds(const int extra[EXTRA_FDS])
{
	int tmp[EXTRA_FDS];

	/* Out of the way of 3 to 6 first: a source may sit on a target's number. */
	for (int i = 0; i < EXTRA_FDS; i++)
		if ((tmp[i] = extra[i] >= 0 ? fcntl(extra[i], F_DUPFD, 10) : -1) < 0 && extra[i] >= 0)
			return -1;
	for (int i = 0; i < EXTRA_FDS; i++)
		if (tmp[i] >= 0 ? dup2(tmp[i], 3 + i) < 0 : (close(3 + i), 0))
			return -1;
	closefrom(3 + EXTRA_FDS);
	return 0;
}

static pid_t spawn(const char *git, char *const *envp, int in[2], int out[2],
		   const int extra[EXTRA_FDS])
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* The child: its own process group, so a time-out ends the whole tree. */
	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || child_fds(extra))
		_exit(127);
	/* git's own http-backend program, run directly when its place is known: through
	 * `git http-backend`, git would start it as one more process. */
	const char *dir = gitenv_exec_path(git);
	char prog[600];
	char *argv[] = { (char *)git, (char *)"http-backend", NULL };
	if (dir[0] && snprintf(prog, sizeof(prog), "%s/git-http-backend", dir) < (int)sizeof(prog)) {
		char *direct[] = { prog, NULL };
		execve(prog, direct, envp);
	}
	execve(git, argv, envp);
	_exit(127);
}

static int put(struct req *r, const char *data, size_t n)
{
	return n == 0 || http_write(r, data, n) == 0 ? 0 : -1;
}

/* Sends our header block: the child's status and headers, plus ours. */
static int send_head(struct req *r, int status, const struct buf *headers)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "Status: %d\r\nX-Request-Id: %s\r\n", status,
			 r->request_id);

	return put(r, head, (size_t)n) || put(r, headers->data ? headers->data : "", headers->len) ||
	       put(r, "\r\n", 2) ? -1 : 0;
}

/* One request's child and the bytes in flight both ways. Resources start at -1/NULL;
 * proc_finish closes, kills, reaps and frees them all, whatever happened. */
struct proc {
	struct req *r;
	int in[2], out[2];          /* the child's stdin and stdout; ours are in[1], out[0] */
	pid_t pid;
	char *inbuf, *outbuf;       /* the request body on its way, the child's answer */
	size_t inlen, inoff, outlen;
	int in_eof;                 /* the body is all forwarded, or the child stopped reading */
	int head_parsed;            /* the child's header block is read (status, headers) */
	int head_done;              /* our header block is sent: the response has begun */
	int status;                 /* the child's status, once head_parsed */
	int client_gone;
	int64_t deadline, last;     /* the time limit; the last byte moved either way */
	struct bodyrate rate;       /* how fast the request body arrives (bodyrate.h) */
	struct pushtee tee;         /* a push's scanner, fed a copy of the body (pushtee.h) */
	size_t teeoff;              /* of the request buffer, what the scanner has taken */
	size_t bodyoff;             /* of a body read whole already (r->body), what was taken */
	int body_failed;            /* it stalled, trickled or was cut: nothing of it is kept */
	struct buf headers;
};

static void proc_init(struct proc *p, struct req *r)
{
	const struct config *c = r->cfg;

	memset(p, 0, sizeof(*p));
	p->r = r;
	p->in[0] = p->in[1] = p->out[0] = p->out[1] = -1;
	p->pid = -1;
	p->last = clock_ms();
	p->deadline = p->last + (int64_t)c->git_timeout * 1000;
	pushtee_init(&p->tee);
	bodyrate_init(&p->rate, (int64_t)c->git_body_stall * 1000,
		      (int64_t)c->git_body_grace * 1000, c->git_body_min_rate);
	buf_init(&p->headers, CGI_HEADERS_MAX);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A push's scanner (pushtee.h): the hook binary under the scanner's name. A body that is
 * gzip'd reaches git inflated by http-backend, so there is nothing to tee (git only sends
 * small requests gzip'd). Without a scanner the hook scans it all, as before. */
static void start_scanner(struct proc *p)
{
	const char *enc = http_param(p->r, "HTTP_CONTENT_ENCODING");
	const char *prog = pool_printf(p->r->pool, "%s/pre-receive", p->r->cfg->hooks_dir);
	struct err e = { .msg = "" };

	if ((enc && enc[0]) || !prog)
		return;
	if (pushtee_start(&p->tee, prog, &e))
		log_warn("%s: the hook scans the whole push", e.msg);
}

/* Buffers, environment, pipes and the child, which then holds its ends alone. */
static int proc_start(struct proc *p, const struct git_route *g, const struct repo *repo,
		      const struct git_pusher *who, struct err *e)
{
	struct strv env;
	int rc, extra[EXTRA_FDS];

	p->inbuf = malloc(CHUNK);
	p->outbuf = malloc(CGI_HEADERS_MAX + CHUNK);
	if (!p->inbuf || !p->outbuf)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (g->service == GIT_RECEIVE_PACK && who)
		start_scanner(p);
	if ((rc = gitenv_build(p->r, g, repo, who, p->tee.pid > 0, &env, e)))
		return rc;
	if (pipe2(p->in, O_CLOEXEC) || pipe2(p->out, O_CLOEXEC))
		return err_set(e, ERR_FAIL, "pipe: %s", strerror(errno));
	extra[0] = who ? who->report_fd : -1;
	extra[1] = p->tee.done;
	extra[2] = p->tee.records;
	extra[3] = who ? who->values_fd : -1;
	p->pid = spawn(p->r->cfg->git_bin, env.v, p->in, p->out, extra);
	if (p->pid < 0)
		return err_set(e, ERR_FAIL, "fork: %s", strerror(errno));
	/* The child does it too: whichever runs first, the group exists before a kill. */
	setpgid(p->pid, p->pid);
	close_fd(&p->in[0]);
	close_fd(&p->out[1]);
	/* The hook's now (through git): the scanner's end alone must close "done". */
	close_fd(&p->tee.done);
	if (strcmp(g->method, "GET") == 0) {
		/* No body to forward. */
		close_fd(&p->in[1]);
		p->in_eof = 1;
	} else {
		fcntl(p->in[1], F_SETFL, O_NONBLOCK);
	}
	return 0;
}

/* Gives the scanner what it takes of the request buffer (all of it once it is let go). */
static void proc_tee(struct proc *p, int64_t now)
{
	if (p->teeoff < p->inlen)
		p->teeoff += pushtee_write(&p->tee, p->inbuf + p->teeoff, p->inlen - p->teeoff, now);
}

/* 1 when git and the scanner both have the whole request buffer: the next piece may come. */
static int proc_drained(const struct proc *p)
{
	return p->inoff == p->inlen && p->teeoff == p->inlen;
}

/* The next piece of the request body into inbuf: from the request's memory when it was
 * read whole already (api_git.c: a push over its account's slots), else from nginx's
 * connection (ready: a poll found it readable). As http_read_nowait answers. */
static long proc_next(struct proc *p, int ready)
{
	struct req *r = p->r;
	size_t k;

	if (!r->body)
		return ready ? http_read_ready(r, p->inbuf, CHUNK) : http_read_nowait(r, p->inbuf, CHUNK);
	k = r->body_len - p->bodyoff < CHUNK ? r->body_len - p->bodyoff : CHUNK;
	memcpy(p->inbuf, r->body + p->bodyoff, k);
	p->bodyoff += k;
	return (long)k;
}

/* Takes what has arrived of the request body once the last piece is all written to the
 * child and the scanner, never waiting on the client (ready: a poll found nginx's
 * connection readable). Nothing there: the wait for the client is timed (bodyrate). 0, or
 * ERR_CANCELLED when the connection from nginx failed: its client went away in the middle
 * of the body. */
static int proc_refill(struct proc *p, int ready, struct err *e)
{
	long n;

	if (p->in_eof || !proc_drained(p))
		return 0;
	n = proc_next(p, ready);
	if (n == HTTP_READ_WAIT) {
		bodyrate_wait(&p->rate, clock_ms());
		return 0;
	}
	if (n <= 0) {
		p->in_eof = 1;
		close_fd(&p->in[1]);
		pushtee_end(&p->tee);
		if (n == 0)
			return 0;
		p->body_failed = 1;
		return err_set(e, ERR_CANCELLED, "the client went away while sending the request body");
	}
	p->inlen = (size_t)n;
	p->inoff = p->teeoff = 0;
	metrics_count_git_bytes(METRICS_GIT_IN, (uint64_t)n);
	p->last = clock_ms();
	bodyrate_got(&p->rate, p->last, (size_t)n);
	proc_tee(p, p->last);
	return 0;
}

/* The worker waits for the client's body: 1 (poll nginx's connection), else 0. */
static int proc_waits(const struct proc *p)
{
	return !p->in_eof && proc_drained(p) && p->rate.wait_since >= 0;
}

/* A body that stalls or trickles ends the request: 408 naming the bound, while nothing of
 * the answer has gone out (proc_send holds the child's header block back until then). */
static int proc_check_body(struct proc *p, int64_t now, struct err *e)
{
	enum bodyrate_verdict v = proc_waits(p) ? bodyrate_check(&p->rate, now) : BODYRATE_OK;
	char msg[200];

	if (v == BODYRATE_OK)
		return 0;
	p->body_failed = 1;
	bodyrate_describe(&p->rate, v, now, msg, sizeof(msg));
	log_warn("git push ended: %s", msg);
	return err_http(e, 408, "%s", msg);
}

/* Writes what the child can take of the request buffer. */
static void proc_feed(struct proc *p)
{
	ssize_t w = write(p->in[1], p->inbuf + p->inoff, p->inlen - p->inoff);

	if (w > 0) {
		p->inoff += (size_t)w;
		p->last = clock_ms();
	} else if (w < 0 && errno != EAGAIN) {
		/* The child stopped reading (it answers an error): drop the rest. */
		close_fd(&p->in[1]);
		p->in_eof = 1;
		p->inoff = p->inlen;
	}
}

/* Passes on what the child wrote, our header block first (made from the child's CGI
 * headers). The block waits while the request body still streams and the child has written
 * nothing after it (http-backend writes it before receive-pack reads a byte): until the
 * body is whole, the request may still be refused whole (408 for a body too slow). */
static void proc_send(struct proc *p)
{
	if (!p->head_parsed || p->client_gone)
		return;
	if (!p->head_done) {
		if (!p->in_eof && p->outlen == 0 && p->out[0] >= 0)
			return;
		p->head_done = 1;
		if (send_head(p->r, p->status, &p->headers)) {
			p->client_gone = 1;
			return;
		}
	}
	if (put(p->r, p->outbuf, p->outlen))
		p->client_gone = 1;
	else
		metrics_count_git_bytes(METRICS_GIT_OUT, p->outlen);
	p->outlen = 0;
}

/* Reads what the child wrote, parses its header block once it is all there, and passes it
 * on (proc_send). Closes out[0] at the child's end; sets client_gone when the client cannot
 * take more. 0, or ERR_FAIL on a bad header block. */
static int proc_drain(struct proc *p, struct err *e)
{
	ssize_t got = read(p->out[0], p->outbuf + p->outlen,
			   (p->head_parsed ? CHUNK : CGI_HEADERS_MAX + CHUNK) - p->outlen);
	long end;

	if (got < 0 && errno == EINTR)
		return 0;
	if (got <= 0) {
		close_fd(&p->out[0]);
		proc_send(p);
		return 0;
	}
	p->last = clock_ms();
	p->outlen += (size_t)got;
	if (!p->head_parsed) {
		end = cgi_parse_headers(p->outbuf, p->outlen, &p->status, &p->headers);
		if (end == 0 && p->outlen < CGI_HEADERS_MAX + CHUNK)
			return 0;  /* the header block is not all there yet */
		if (end <= 0)
			return err_set(e, ERR_FAIL, "git http-backend wrote a bad header block");
		p->head_parsed = 1;
		memmove(p->outbuf, p->outbuf + end, p->outlen - (size_t)end);
		p->outlen -= (size_t)end;
	}
	proc_send(p);
	return 0;
}

/* How long the next poll may sleep: a second at most, less before the deadline or a bound
 * of the body. */
static int poll_ms(const struct proc *p, int64_t now)
{
	int64_t wait = p->deadline - now < 1000 ? p->deadline - now : 1000;
	int64_t body = proc_waits(p) ? bodyrate_next_ms(&p->rate, now) : INT64_MAX;

	if (body < wait)
		wait = body;
	return wait < 0 ? 0 : (int)wait;
}

/* Moves bytes both ways until the child's answer ends, the client goes, or time runs out
 * (a whole run past the limit, no byte either way for IDLE_MS, or a request body that
 * stalls or trickles: bodyrate.h). Never blocks on the client: nginx's connection is
 * polled with the child's pipes. */
static int proc_pump(struct proc *p, const char *method, struct err *e)
{
	int rc = 0;

	while (!rc && p->out[0] >= 0 && !p->client_gone) {
		struct pollfd fds[4];
		int nfds = 0, in_at = -1, fcgi_at = -1, tee_at = -1;
		int64_t now = clock_ms();

		if (now > p->deadline || now - p->last > IDLE_MS) {
			log_warn("git %s timed out; ending its process group", method);
			rc = err_set(e, ERR_FAIL, "git took too long");
			break;
		}
		if ((rc = proc_refill(p, 0, e)) || (rc = proc_check_body(p, now, e)))
			break;
		proc_send(p);   /* a header block held back for the body, which is whole now */
		proc_tee(p, now);
		fds[nfds].fd = p->out[0];
		fds[nfds++].events = POLLIN;
		if (p->in[1] >= 0 && p->inoff < p->inlen) {
			fds[in_at = nfds].fd = p->in[1];
			fds[nfds++].events = POLLOUT;
		}
		if (p->teeoff < p->inlen) {
			fds[tee_at = nfds].fd = p->tee.body;
			fds[nfds++].events = POLLOUT;
		}
		if (proc_waits(p)) {
			fds[fcgi_at = nfds].fd = http_fcgi_fd(p->r);
			fds[nfds++].events = POLLIN;
		}
		if (poll(fds, (nfds_t)nfds, poll_ms(p, now)) < 0) {
			if (errno == EINTR)
				continue;
			rc = err_set(e, ERR_FAIL, "poll: %s", strerror(errno));
			break;
		}
		if (fcgi_at >= 0 && fds[fcgi_at].revents && (rc = proc_refill(p, 1, e)))
			break;
		if (in_at >= 0 && (fds[in_at].revents & (POLLOUT | POLLERR | POLLHUP)))
			proc_feed(p);
		if (tee_at >= 0 && fds[tee_at].revents)
			proc_tee(p, clock_ms());
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
			rc = proc_drain(p, e);
	}
	/* What was sent goes out now, even when the run ended badly: the client sees how far
	 * it got. */
	if (p->head_done && !p->client_gone && http_flush(p->r))
		p->client_gone = 1;
	return rc;
}

/* Waits up to ms for the child to end and its group to empty (receive-pack, index-pack,
 * hooks): 1 when it has, 0 when time ran out. Reaps the child into *wstatus once. */
static int wait_group(pid_t pid, int *reaped, int *wstatus, int64_t ms)
{
	int64_t until = clock_ms() + ms;

	for (;;) {
		if (!*reaped && waitpid(pid, wstatus, WNOHANG) == pid)
			*reaped = 1;
		if (*reaped && kill(-pid, 0) < 0)
			return 1;
		if (clock_ms() >= until)
			return 0;
		usleep(5000);
	}
}

/* Ends the child's process group, its stdin and stdout already closed. Where the request
 * body failed (soft), git is let end by itself first: index-pack fails on the cut pack
 * and receive-pack removes its quarantine (a signal now would race the two clean-ups and
 * leave directories behind). Then SIGTERM, so that git still removes what it was writing
 * (a quarantine, a temporary pack, ref locks), then SIGKILL for whatever is left. */
static void end_group(pid_t pid, int *wstatus, int soft)
{
	int reaped = 0;

	if (!(soft && wait_group(pid, &reaped, wstatus, END_GRACE_MS))) {
		kill(-pid, SIGTERM);
		wait_group(pid, &reaped, wstatus, END_GRACE_MS);
		kill(-pid, SIGKILL);
	}
	while (!reaped && waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
		;
}

/* Closes, ends (unless it answered whole: rc is 0 and the client took it all), reaps and
 * frees everything p holds. */
/* A push whose body failed: git reads the end of its stdin, and its answer (receive-pack's
 * "unpack error" report) is read and dropped until it ends, for at most END_GRACE_MS.
 * Closing its stdout instead would kill receive-pack with SIGPIPE in its report, which
 * leaves its quarantine directory behind (git 2.39). */
static void proc_let_fail(struct proc *p)
{
	int64_t until = clock_ms() + END_GRACE_MS;

	close_fd(&p->in[1]);
	while (p->out[0] >= 0 && clock_ms() < until) {
		struct pollfd f = { .fd = p->out[0], .events = POLLIN };
		ssize_t got;

		if (poll(&f, 1, (int)(until - clock_ms())) <= 0)
			continue;
		got = read(p->out[0], p->outbuf, CHUNK);
		if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
			close_fd(&p->out[0]);
	}
}

static void proc_finish(struct proc *p, int rc)
{
	int wstatus = 0;

	if (p->body_failed && p->pid > 0 && p->outbuf)
		proc_let_fail(p);
	close_fd(&p->in[0]);
	close_fd(&p->in[1]);
	close_fd(&p->out[0]);
	close_fd(&p->out[1]);
	if (p->pid > 0) {
		/* Whatever is left of the tree (a time-out, a client gone, a body too slow) ends
		 * now, and nothing of a push is kept. */
		if (rc || p->client_gone || !p->head_done)
			end_group(p->pid, &wstatus, p->body_failed);
		else
			while (waitpid(p->pid, &wstatus, 0) < 0 && errno == EINTR)
				;
		if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) && !rc)
			log_info("git http-backend exited with %d", WEXITSTATUS(wstatus));
	}
	if (p->tee.records >= 0)
		json_add_int(p->r->audit_details, "blobs_scanned_streaming", pushtee_count(&p->tee));
	pushtee_finish(&p->tee);
	free(p->inbuf);
	free(p->outbuf);
	buf_release(&p->headers);
	if (p->client_gone)
		log_info("git client went away");
}

int githttp_serve(struct req *r, const struct git_route *g, const struct repo *repo,
		  const struct git_pusher *who, struct err *e)
{
	struct proc p;
	int rc;

	proc_init(&p, r);
	rc = proc_start(&p, g, repo, who, e);
	if (!rc)
		rc = proc_pump(&p, g->method, e);
	proc_finish(&p, rc);
	/* Once our header block went out the response has begun: its status is the answer,
	 * and a later failure ends it short (logged above). */
	if (p.head_done) {
		r->status = p.status;
		r->responded = 1;
		r->streamed = 1;
		return 0;
	}
	if (!rc)
		rc = err_set(e, ERR_FAIL, "git http-backend answered nothing");
	return rc;
}
