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
#include "sandboxd/cgi.h"
#include "sandboxd/githttp.h"
#include "sandboxd/log.h"
#include "sandboxd/metrics.h"
#include "sandboxd/pushreport.h"
#include "sandboxd/strv.h"
#include "sandboxd/banned.h"

#define CHUNK 65536
#define ENV_MAX 64  /* a push uses about 45 */
#define IDLE_MS (10 * 60 * 1000)  /* no byte either way for this long: give up */

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

/* The child's environment is built from scratch: nothing of ours or of the client's
 * headers leaks in, and the trusted values for the hook have names that no header can
 * forge. It is bounded and never cut short (strv.h): a variable that does not fit fails
 * the request, since the hook would otherwise run without, say, its ref policies. A NULL
 * value leaves a variable out on purpose. */
struct var {
	const char *name, *value;
};

static int env_put(struct strv *env, const struct var *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strv_setenv(env, v[i].name, v[i].value))
			break;
	return env->err;
}

/* What http-backend itself reads. */
static int env_cgi(struct strv *env, struct req *r, const struct git_route *g,
		   const struct repo *repo, const struct git_pusher *who)
{
	const char *service = g->service == GIT_UPLOAD_PACK ? "git-upload-pack"
			      : g->service == GIT_RECEIVE_PACK ? "git-receive-pack" : "info/refs";
	const char *path = pool_printf(r->pool, "/%s/%s.git/%s", repo->owner, repo->name, service);
	const struct var vars[] = {
		{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
		{ "HOME", "/nonexistent" },
		{ "GIT_CONFIG_NOSYSTEM", "1" },
		{ "GIT_CONFIG_GLOBAL", "/dev/null" },
		{ "GIT_PROJECT_ROOT", r->cfg->repos_dir },
		{ "GIT_HTTP_EXPORT_ALL", "1" },
		{ "PATH_INFO", path },
		{ "REQUEST_METHOD", g->method },
		{ "QUERY_STRING", r->query },
		{ "CONTENT_TYPE", http_param(r, "CONTENT_TYPE") },
		{ "REMOTE_ADDR", r->remote_addr },
		/* http-backend refuses receive-pack without REMOTE_USER; we set it, never nginx. */
		{ "REMOTE_USER", who ? who->login : NULL },
		{ "HTTP_GIT_PROTOCOL", http_param(r, "HTTP_GIT_PROTOCOL") },
		{ "HTTP_CONTENT_ENCODING", http_param(r, "HTTP_CONTENT_ENCODING") },
		{ "GIT_NAMESPACE", who ? who->namespace_ : NULL },
	};

	if (!path)
		return ERR_NOMEM;
	return env_put(env, vars, sizeof(vars) / sizeof(vars[0]));
}

/* Configuration for this run only (GIT_CONFIG_COUNT): no hook files in repositories, no
 * surprises from a config file. Repositories may belong to another user than the
 * service. */
static int env_config(struct strv *env, const struct req *r, const struct git_pusher *who)
{
	const struct var config[] = {
		{ "core.hooksPath", r->cfg->hooks_dir },
		{ "safe.directory", "*" },
		{ "uploadpack.allowReachableSHA1InWant", "true" },
		{ "uploadpack.allowFilter", "true" },
		{ "receive.denyNonFastForwards", "false" },
		{ "receive.fsckObjects", "true" },
		/* The namespaced client sees its own refs; everybody else sees none of them. */
		{ "transfer.hideRefs", who && who->namespace_ ? NULL : "refs/namespaces" },
	};
	int n = 0;

	for (size_t i = 0; i < sizeof(config) / sizeof(config[0]); i++) {
		if (!config[i].value)
			continue;
		if (strv_addf(env, "GIT_CONFIG_KEY_%d=%s", n, config[i].name) ||
		    strv_addf(env, "GIT_CONFIG_VALUE_%d=%s", n, config[i].value))
			return env->err;
		n++;
	}
	return strv_addf(env, "GIT_CONFIG_COUNT=%d", n);
}

/* Every hook variable is set, empty when there is nothing to say: the hook refuses a push
 * when one is missing, so a cut environment can never drop a check. */
static int env_hook(struct strv *env, struct req *r, const struct repo *repo,
		    const struct git_pusher *who)
{
	const char *name = pool_printf(r->pool, "%s/%s", repo->owner, repo->name);
	const struct var vars[] = {
		{ "SANDBOXD_DATABASE_URL", r->cfg->database_url },
		{ "SANDBOXD_HOOK_REPO", name },
		{ "SANDBOXD_HOOK_REPO_ID", repo->id },
		{ "SANDBOXD_HOOK_DEFAULT_BRANCH", repo->default_branch },
		{ "SANDBOXD_HOOK_LOGIN", who->login ? who->login : "" },
		{ "SANDBOXD_HOOK_ACCOUNT_ID", who->account_id ? who->account_id : "" },
		{ "SANDBOXD_HOOK_AGENT", who->agent ? "1" : "0" },
		{ "SANDBOXD_HOOK_TOKEN_ID", who->token_id ? who->token_id : "" },
		{ "SANDBOXD_HOOK_TOKEN_KIND", who->token_kind ? who->token_kind : "" },
		{ "SANDBOXD_HOOK_POLICIES", who->policies ? who->policies : "" },
		{ "SANDBOXD_HOOK_REQUEST_ID", r->request_id },
		{ "SANDBOXD_HOOK_NAMESPACE", who->namespace_ ? who->namespace_ : "" },
		{ "SANDBOXD_HOOK_REPORT_FD", who->report_fd >= 0 ? "3" : "" },
	};

	if (!name)
		return ERR_NOMEM;
	return env_put(env, vars, sizeof(vars) / sizeof(vars[0]));
}

/* The child's whole environment in env (the request's pool). 0, or ERR_FAIL when a
 * variable did not fit or memory ran out (logged: a bug to fix, ENV_MAX too small). */
static int build_env(struct req *r, const struct git_route *g, const struct repo *repo,
		     const struct git_pusher *who, struct strv *env, struct err *e)
{
	int rc = strv_init(env, r->pool, ENV_MAX);

	if (!rc)
		rc = env_cgi(env, r, g, repo, who);
	if (!rc)
		rc = env_config(env, r, who);
	if (!rc && g->push && who)
		rc = env_hook(env, r, repo, who);
	if (rc) {
		log_error("the environment for git http-backend is full (%d variables) or out of "
			  "memory: request refused", ENV_MAX);
		return err_set(e, ERR_FAIL, "the environment for git is full");
	}
	return 0;
}

static pid_t spawn(const char *git, char *const *envp, int in[2], int out[2], int report)
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
	if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
		_exit(127);
	/* The hooks' report as fd 3, through http-backend and receive-pack (git leaves
	 * descriptors it did not open alone). */
	if (report >= 0 && (report == PUSH_REPORT_FD ? fcntl(report, F_SETFD, 0)
						    : dup2(report, PUSH_REPORT_FD)) < 0)
		_exit(127);
	closefrom(report >= 0 ? PUSH_REPORT_FD + 1 : 3);
	char *argv[] = { (char *)git, (char *)"http-backend", NULL };
	execve(git, argv, envp);
	_exit(127);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	int head_done;              /* our header block is sent: the response has begun */
	int status;                 /* the child's status, once head_done */
	int client_gone;
	long deadline, last;        /* the time limit; the last byte moved either way */
	struct buf headers;
};

static void proc_init(struct proc *p, struct req *r)
{
	memset(p, 0, sizeof(*p));
	p->r = r;
	p->in[0] = p->in[1] = p->out[0] = p->out[1] = -1;
	p->pid = -1;
	p->last = now_ms();
	p->deadline = p->last + (long)r->cfg->git_timeout * 1000;
	buf_init(&p->headers, CGI_HEADERS_MAX);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Buffers, environment, pipes and the child, which then holds its ends alone. */
static int proc_start(struct proc *p, const struct git_route *g, const struct repo *repo,
		      const struct git_pusher *who, struct err *e)
{
	struct strv env;
	int rc;

	p->inbuf = malloc(CHUNK);
	p->outbuf = malloc(CGI_HEADERS_MAX + CHUNK);
	if (!p->inbuf || !p->outbuf)
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((rc = build_env(p->r, g, repo, who, &env, e)))
		return rc;
	if (pipe2(p->in, O_CLOEXEC) || pipe2(p->out, O_CLOEXEC))
		return err_set(e, ERR_FAIL, "pipe: %s", strerror(errno));
	p->pid = spawn(p->r->cfg->git_bin, env.v, p->in, p->out, who ? who->report_fd : -1);
	if (p->pid < 0)
		return err_set(e, ERR_FAIL, "fork: %s", strerror(errno));
	close_fd(&p->in[0]);
	close_fd(&p->out[1]);
	if (strcmp(g->method, "GET") == 0) {
		/* No body to forward. */
		close_fd(&p->in[1]);
		p->in_eof = 1;
	} else {
		fcntl(p->in[1], F_SETFL, O_NONBLOCK);
	}
	return 0;
}

/* Refills the request buffer once it is all written: blocks only until the client sends
 * more or ends. */
static void proc_refill(struct proc *p)
{
	long n;

	if (p->in_eof || p->inoff < p->inlen)
		return;
	n = http_read(p->r, p->inbuf, CHUNK);
	if (n <= 0) {
		p->in_eof = 1;
		close_fd(&p->in[1]);
		return;
	}
	p->inlen = (size_t)n;
	p->inoff = 0;
	metrics_count_git_bytes(METRICS_GIT_IN, (uint64_t)n);
	p->last = now_ms();
}

/* Writes what the child can take of the request buffer. */
static void proc_feed(struct proc *p)
{
	ssize_t w = write(p->in[1], p->inbuf + p->inoff, p->inlen - p->inoff);

	if (w > 0) {
		p->inoff += (size_t)w;
		p->last = now_ms();
	} else if (w < 0 && errno != EAGAIN) {
		/* The child stopped reading (it answers an error): drop the rest. */
		close_fd(&p->in[1]);
		p->in_eof = 1;
		p->inoff = p->inlen;
	}
}

/* Reads what the child wrote and passes it on: first our header block made from its CGI
 * headers, then its bytes as they are. Closes out[0] at the child's end; sets client_gone
 * when the client cannot take more. 0, or ERR_FAIL on a bad header block. */
static int proc_drain(struct proc *p, struct err *e)
{
	ssize_t got = read(p->out[0], p->outbuf + p->outlen,
			   (p->head_done ? CHUNK : CGI_HEADERS_MAX + CHUNK) - p->outlen);
	long end;

	if (got < 0 && errno == EINTR)
		return 0;
	if (got <= 0) {
		close_fd(&p->out[0]);
		return 0;
	}
	p->last = now_ms();
	p->outlen += (size_t)got;
	if (!p->head_done) {
		end = cgi_parse_headers(p->outbuf, p->outlen, &p->status, &p->headers);
		if (end == 0 && p->outlen < CGI_HEADERS_MAX + CHUNK)
			return 0;  /* the header block is not all there yet */
		if (end <= 0)
			return err_set(e, ERR_FAIL, "git http-backend wrote a bad header block");
		p->head_done = 1;
		if (send_head(p->r, p->status, &p->headers)) {
			p->client_gone = 1;
			return 0;
		}
		memmove(p->outbuf, p->outbuf + end, p->outlen - (size_t)end);
		p->outlen -= (size_t)end;
	}
	if (put(p->r, p->outbuf, p->outlen))
		p->client_gone = 1;
	else
		metrics_count_git_bytes(METRICS_GIT_OUT, p->outlen);
	p->outlen = 0;
	return 0;
}

/* Moves bytes both ways until the child's answer ends, the client goes, or time runs
 * out (a whole run past the limit, or no byte either way for IDLE_MS). */
static int proc_pump(struct proc *p, const char *method, struct err *e)
{
	int rc = 0;

	while (!rc && p->out[0] >= 0 && !p->client_gone) {
		struct pollfd fds[2];
		int nfds = 0, wait;
		long now = now_ms();

		if (now > p->deadline || now - p->last > IDLE_MS) {
			log_warn("git %s timed out; ending its process group", method);
			rc = err_set(e, ERR_FAIL, "git took too long");
			break;
		}
		proc_refill(p);
		fds[nfds].fd = p->out[0];
		fds[nfds++].events = POLLIN;
		if (p->in[1] >= 0 && p->inoff < p->inlen) {
			fds[nfds].fd = p->in[1];
			fds[nfds++].events = POLLOUT;
		}
		wait = (int)(p->deadline - now < 1000 ? p->deadline - now : 1000);
		if (poll(fds, (nfds_t)nfds, wait < 0 ? 0 : wait) < 0) {
			if (errno == EINTR)
				continue;
			rc = err_set(e, ERR_FAIL, "poll: %s", strerror(errno));
			break;
		}
		if (nfds == 2 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP)))
			proc_feed(p);
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
			rc = proc_drain(p, e);
	}
	/* What was sent goes out now, even when the run ended badly: the client sees how far
	 * it got. */
	if (p->head_done && !p->client_gone && http_flush(p->r))
		p->client_gone = 1;
	return rc;
}

/* Closes, ends (unless it answered whole: rc is 0 and the client took it all), reaps and
 * frees everything p holds. */
static void proc_finish(struct proc *p, int rc)
{
	int wstatus = 0;

	close_fd(&p->in[0]);
	close_fd(&p->in[1]);
	close_fd(&p->out[0]);
	close_fd(&p->out[1]);
	if (p->pid > 0) {
		/* Whatever is left of the tree (a time-out, a client gone) ends now. */
		if (rc || p->client_gone || !p->head_done)
			kill(-p->pid, SIGKILL);
		while (waitpid(p->pid, &wstatus, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) && !rc)
			log_info("git http-backend exited with %d", WEXITSTATUS(wstatus));
	}
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
