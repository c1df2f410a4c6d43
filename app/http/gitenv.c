/* gitenv.c: the environment of git http-backend for one request (gitenv.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sandboxd/http/gitenv.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

#define ENV_MAX 64  /* a push uses about 46 */
#define ENV_PATH "/usr/local/bin:/usr/bin:/bin"

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

/* `git --exec-path` into out: 0, or -1 (out then ""). */
static int ask_exec_path(const char *git, char *out, size_t len)
{
	char *const argv[] = { (char *)git, (char *)"--exec-path", NULL };
	char *const envp[] = { (char *)"PATH=" ENV_PATH, NULL };
	size_t n = 0;
	ssize_t k;
	int fd[2], status = 0;
	pid_t pid;

	out[0] = 0;
	if (pipe2(fd, O_CLOEXEC))
		return -1;
	if ((pid = fork()) == 0) {
		if (dup2(fd[1], 1) >= 0)
			execve(git, argv, envp);
		_exit(127);
	}
	close(fd[1]);
	while (pid > 0 && n + 1 < len &&
	       ((k = read(fd[0], out + n, len - 1 - n)) > 0 || (k < 0 && errno == EINTR)))
		n += k > 0 ? (size_t)k : 0;
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || n == 0 || n + 1 >= len || out[0] != '/')
		return out[0] = 0, -1;
	out[n] = 0;
	out[strcspn(out, "\n")] = 0;
	return 0;
}

const char *gitenv_exec_path(const char *git)
{
	static char path[512], asked_for[512];
	static int asked;
	char prog[600];

	if (asked && strcmp(asked_for, git) == 0)
		return path;
	asked = 1;
	snprintf(asked_for, sizeof(asked_for), "%s", git);
	if (ask_exec_path(git, path, sizeof(path)) ||
	    snprintf(prog, sizeof(prog), "%s/git-http-backend", path) >= (int)sizeof(prog) ||
	    access(prog, X_OK)) {
		log_warn("git's exec path is not known (%s --exec-path): http-backend runs "
			 "through git", git);
		path[0] = 0;
	}
	return path;
}

/* What http-backend itself reads. */
static int env_cgi(struct strv *env, struct req *r, const struct git_route *g,
		   const struct repo *repo, const struct git_pusher *who)
{
	const char *service = g->service == GIT_UPLOAD_PACK ? "git-upload-pack"
			      : g->service == GIT_RECEIVE_PACK ? "git-receive-pack" : "info/refs";
	const char *path = pool_printf(r->pool, "/%s/%s.git/%s", repo->owner, repo->name, service);
	const char *exec_path = gitenv_exec_path(r->cfg->git_bin);
	const char *bin = exec_path[0] ? pool_printf(r->pool, "%s:%s", exec_path, ENV_PATH)
				       : ENV_PATH;
	const struct var vars[] = {
		{ "PATH", bin },
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

	if (!path || !bin)
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
		    const struct git_pusher *who, int scanned)
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
		/* The scanner's "done" pipe and records (streamscan.h), as spawn places them. */
		{ "SANDBOXD_HOOK_SCANNED", scanned ? "4 5" : "" },
		/* The pushing sandbox's secret values (valscan.h), as spawn places them. */
		{ "SANDBOXD_HOOK_VALUES", who->values_fd >= 0 ? "6" : "" },
	};

	if (!name)
		return ERR_NOMEM;
	return env_put(env, vars, sizeof(vars) / sizeof(vars[0]));
}

int gitenv_build(struct req *r, const struct git_route *g, const struct repo *repo,
		     const struct git_pusher *who, int scanned, struct strv *env, struct err *e)
{
	int rc = strv_init(env, r->pool, ENV_MAX);

	if (!rc)
		rc = env_cgi(env, r, g, repo, who);
	if (!rc)
		rc = env_config(env, r, who);
	if (!rc && g->push && who)
		rc = env_hook(env, r, repo, who, scanned);
	if (rc) {
		log_error("the environment for git http-backend is full (%d variables) or out of "
			  "memory: request refused", ENV_MAX);
		return err_set(e, ERR_FAIL, "the environment for git is full");
	}
	return 0;
}

