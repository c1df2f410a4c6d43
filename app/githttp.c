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
#include <fcgiapp.h>
#include "sandboxd/githttp.h"
#include "sandboxd/log.h"
#include "sandboxd/pushreport.h"
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
	}
	return 1;
}

/* The child's environment: bounded, and never cut short. A variable that does not fit
 * fails the request (the hook would otherwise run without, say, its ref policies). */
struct env {
	char *v[ENV_MAX + 1];
	int n;
	int full;        /* a variable did not fit, or memory ran out: the request fails */
	struct pool *pool;
};

/* Adds name=value; a NULL value adds nothing (the variable is absent on purpose). */
static void env_add(struct env *env, const char *name, const char *value)
{
	if (!value)
		return;
	if (env->n >= ENV_MAX || !name) {
		env->full = 1;
		return;
	}
	if (!(env->v[env->n] = pool_printf(env->pool, "%s=%s", name, value))) {
		env->full = 1;
		return;
	}
	env->n++;
}

/* The child's whole environment, from scratch: nothing of ours or of the client's headers
 * leaks in, and the trusted values for the hook have names that no header can forge.
 * 0, or ERR_FAIL when a variable did not fit (logged: a bug to fix, ENV_MAX too small). */
static int build_env(struct req *r, const struct git_route *g, const struct repo *repo,
		     const struct git_pusher *who, struct env *env, struct err *e)
{
	const char *ce = http_param(r, "HTTP_CONTENT_ENCODING");
	const char *gp = http_param(r, "HTTP_GIT_PROTOCOL");
	const char *service = g->service == GIT_UPLOAD_PACK ? "git-upload-pack"
			      : g->service == GIT_RECEIVE_PACK ? "git-receive-pack" : "info/refs";
	int cfg = 0;

	env->n = 0;
	env->full = 0;
	env->pool = r->pool;
	env_add(env, "PATH", "/usr/local/bin:/usr/bin:/bin");
	env_add(env, "HOME", "/nonexistent");
	env_add(env, "GIT_CONFIG_NOSYSTEM", "1");
	env_add(env, "GIT_CONFIG_GLOBAL", "/dev/null");
	env_add(env, "GIT_PROJECT_ROOT", r->cfg->repos_dir);
	env_add(env, "GIT_HTTP_EXPORT_ALL", "1");
	env_add(env, "PATH_INFO", pool_printf(r->pool, "/%s/%s.git/%s", repo->owner, repo->name,
					      service));
	env_add(env, "REQUEST_METHOD", g->method);
	env_add(env, "QUERY_STRING", r->query);
	env_add(env, "CONTENT_TYPE", http_param(r, "CONTENT_TYPE"));
	env_add(env, "REMOTE_ADDR", r->remote_addr);
	/* http-backend refuses receive-pack without REMOTE_USER; we set it, never nginx. */
	if (who && who->login)
		env_add(env, "REMOTE_USER", who->login);
	if (gp)
		env_add(env, "HTTP_GIT_PROTOCOL", gp);
	if (ce)
		env_add(env, "HTTP_CONTENT_ENCODING", ce);
	if (who && who->namespace_)
		env_add(env, "GIT_NAMESPACE", who->namespace_);

	/* Configuration for this run only: no hook files in repositories, no surprises from
	 * a config file. Repositories may belong to another user than the service. */
#define CONFIG(k, v) do { \
		env_add(env, pool_printf(r->pool, "GIT_CONFIG_KEY_%d", cfg), k); \
		env_add(env, pool_printf(r->pool, "GIT_CONFIG_VALUE_%d", cfg), v); \
		cfg++; \
	} while (0)
	CONFIG("core.hooksPath", r->cfg->hooks_dir);
	CONFIG("safe.directory", "*");
	CONFIG("uploadpack.allowReachableSHA1InWant", "true");
	CONFIG("uploadpack.allowFilter", "true");
	CONFIG("receive.denyNonFastForwards", "false");
	CONFIG("receive.fsckObjects", "true");
	/* The namespaced client sees its own refs; everybody else sees none of them. */
	if (!(who && who->namespace_))
		CONFIG("transfer.hideRefs", "refs/namespaces");
#undef CONFIG
	env_add(env, "GIT_CONFIG_COUNT", pool_printf(r->pool, "%d", cfg));

	/* Every hook variable is set, empty when there is nothing to say: the hook refuses a
	 * push when one is missing, so a cut environment can never drop a check. */
	if (g->push && who) {
		env_add(env, "SANDBOXD_DATABASE_URL", r->cfg->database_url);
		env_add(env, "SANDBOXD_HOOK_REPO", pool_printf(r->pool, "%s/%s", repo->owner,
							       repo->name));
		env_add(env, "SANDBOXD_HOOK_REPO_ID", repo->id);
		env_add(env, "SANDBOXD_HOOK_DEFAULT_BRANCH", repo->default_branch);
		env_add(env, "SANDBOXD_HOOK_LOGIN", who->login ? who->login : "");
		env_add(env, "SANDBOXD_HOOK_ACCOUNT_ID", who->account_id ? who->account_id : "");
		env_add(env, "SANDBOXD_HOOK_AGENT", who->agent ? "1" : "0");
		env_add(env, "SANDBOXD_HOOK_TOKEN_ID", who->token_id ? who->token_id : "");
		env_add(env, "SANDBOXD_HOOK_TOKEN_KIND", who->token_kind ? who->token_kind : "");
		env_add(env, "SANDBOXD_HOOK_POLICIES", who->policies ? who->policies : "");
		env_add(env, "SANDBOXD_HOOK_REQUEST_ID", r->request_id);
		env_add(env, "SANDBOXD_HOOK_NAMESPACE", who->namespace_ ? who->namespace_ : "");
		env_add(env, "SANDBOXD_HOOK_REPORT_FD", who->report_fd >= 0 ? "3" : "");
	}
	env->v[env->n] = NULL;
	if (env->full) {
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
	return n == 0 || FCGX_PutStr(data, (int)n, r->fcgx->out) == (int)n ? 0 : -1;
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

int githttp_serve(struct req *r, const struct git_route *g, const struct repo *repo,
		  const struct git_pusher *who, struct err *e)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	char *inbuf = NULL, *outbuf = NULL;
	size_t inlen = 0, inoff = 0, outlen = 0;
	int in_eof = 0, head_done = 0, status = 0, client_gone = 0, wstatus = 0, rc = 0;
	long deadline = now_ms() + (long)r->cfg->git_timeout * 1000, last = now_ms();
	struct buf headers;
	struct env env;
	pid_t pid = -1;

	buf_init(&headers, CGI_HEADERS_MAX);
	inbuf = malloc(CHUNK);
	outbuf = malloc(CGI_HEADERS_MAX + CHUNK);
	if (!inbuf || !outbuf) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = build_env(r, g, repo, who, &env, e)))
		goto out;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		rc = err_set(e, ERR_FAIL, "pipe: %s", strerror(errno));
		goto out;
	}
	pid = spawn(r->cfg->git_bin, env.v, in, out, who ? who->report_fd : -1);
	if (pid < 0) {
		rc = err_set(e, ERR_FAIL, "fork: %s", strerror(errno));
		goto out;
	}
	close(in[0]);
	close(out[1]);
	in[0] = out[1] = -1;
	if (strcmp(g->method, "GET") == 0) {
		/* No body to forward. */
		close(in[1]);
		in[1] = -1;
		in_eof = 1;
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);

	while (out[0] >= 0) {
		struct pollfd p[2];
		int np = 0, wait;
		long now = now_ms();

		if (now > deadline || now - last > IDLE_MS) {
			log_warn("git %s timed out; ending its process group", g->method);
			rc = err_set(e, ERR_FAIL, "git took too long");
			break;
		}
		/* Refill the request buffer: blocks only until the client sends more or ends. */
		if (!in_eof && inoff == inlen) {
			int n = FCGX_GetStr(inbuf, CHUNK, r->fcgx->in);
			if (n <= 0) {
				in_eof = 1;
				close(in[1]);
				in[1] = -1;
			} else {
				inlen = (size_t)n;
				inoff = 0;
				last = now_ms();
			}
		}
		p[np].fd = out[0];
		p[np++].events = POLLIN;
		if (in[1] >= 0 && inoff < inlen) {
			p[np].fd = in[1];
			p[np++].events = POLLOUT;
		}
		wait = (int)(deadline - now < 1000 ? deadline - now : 1000);
		if (poll(p, (nfds_t)np, wait < 0 ? 0 : wait) < 0) {
			if (errno == EINTR)
				continue;
			rc = err_set(e, ERR_FAIL, "poll: %s", strerror(errno));
			break;
		}
		if (np == 2 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(in[1], inbuf + inoff, inlen - inoff);
			if (w > 0) {
				inoff += (size_t)w;
				last = now_ms();
			} else if (w < 0 && errno != EAGAIN) {
				/* The child stopped reading (it answers an error): drop the rest. */
				close(in[1]);
				in[1] = -1;
				in_eof = 1;
				inoff = inlen;
			}
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t got = read(out[0], outbuf + outlen,
				   (head_done ? CHUNK : CGI_HEADERS_MAX + CHUNK) - outlen);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			close(out[0]);
			out[0] = -1;
			break;
		}
		last = now_ms();
		outlen += (size_t)got;
		if (!head_done) {
			long end = cgi_parse_headers(outbuf, outlen, &status, &headers);
			if (end == 0 && outlen < CGI_HEADERS_MAX + CHUNK)
				continue;
			if (end <= 0) {
				rc = err_set(e, ERR_FAIL, "git http-backend wrote a bad header block");
				break;
			}
			head_done = 1;
			if (send_head(r, status, &headers)) {
				client_gone = 1;
				break;
			}
			memmove(outbuf, outbuf + end, outlen - (size_t)end);
			outlen -= (size_t)end;
		}
		if (put(r, outbuf, outlen)) {
			client_gone = 1;
			break;
		}
		outlen = 0;
	}
	if (head_done && !client_gone && FCGX_FFlush(r->fcgx->out) < 0)
		client_gone = 1;
out:
	if (in[0] >= 0) close(in[0]);
	if (in[1] >= 0) close(in[1]);
	if (out[0] >= 0) close(out[0]);
	if (out[1] >= 0) close(out[1]);
	if (pid > 0) {
		/* Whatever is left of the tree (a time-out, a client gone) ends now. */
		if (rc || client_gone || !head_done)
			kill(-pid, SIGKILL);
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) && !rc)
			log_info("git http-backend exited with %d", WEXITSTATUS(wstatus));
	}
	free(inbuf);
	free(outbuf);
	buf_release(&headers);
	if (client_gone)
		log_info("git client went away");
	if (head_done)
		return status;
	if (!rc)
		rc = err_set(e, ERR_FAIL, "git http-backend answered nothing");
	return rc;
}
