/* config.c: SANDBOXD_* settings with defaults; every bad value names its variable. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "sandboxd/config.h"
#include "sandboxd/log.h"
#include "sandboxd/num.h"
#include "sandboxd/banned.h"

static int set_str(char *dst, size_t n, config_getenv_fn get, const char *name,
		   const char *def, struct err *e)
{
	const char *v = get(name);

	if (!v || !*v)
		v = def;
	if (strlen(v) >= n)
		return err_set(e, ERR_INVALID, "%s is longer than %zu characters", name, n - 1);
	snprintf(dst, n, "%s", v);
	return 0;
}

static int set_num(int64_t *dst, config_getenv_fn get, const char *name, int64_t def,
		   int64_t min, int64_t max, struct err *e)
{
	const char *v = get(name);

	if (!v || !*v) {
		*dst = def;
		return 0;
	}
	if (num_parse(v, min, max, dst))
		return err_set(e, ERR_INVALID, "%s must be an integer between %lld and %lld",
			       name, (long long)min, (long long)max);
	return 0;
}

/* An IPv4 or IPv6 address literal, or empty. */
static int check_git_addr(const char *v, struct err *e)
{
	unsigned char a[16];

	if (!*v || inet_pton(AF_INET, v, a) == 1 || inet_pton(AF_INET6, v, a) == 1)
		return 0;
	return err_set(e, ERR_INVALID, "SANDBOXD_SANDBOX_GIT_ADDR must be an IPv4 or IPv6 address");
}

/* Each entry is an origin as browsers send it: http:// or https://, a host, no path. */
static int check_origins(const char *v, struct err *e)
{
	const char *p = v;

	while (*p) {
		size_t len = strcspn(p, ","), skip = 0;
		while (skip < len && p[skip] == ' ')
			skip++;
		const char *q = p + skip;
		size_t ql = len - skip, hl;
		while (ql > 0 && q[ql - 1] == ' ')
			ql--;
		if (ql > 8 && strncmp(q, "https://", 8) == 0)
			hl = ql - 8, q += 8;
		else if (ql > 7 && strncmp(q, "http://", 7) == 0)
			hl = ql - 7, q += 7;
		else
			hl = 0;
		if (!hl || memchr(q, '/', hl) || memchr(q, ' ', hl))
			return err_set(e, ERR_INVALID,
				       "SANDBOXD_MCP_ORIGINS must be a comma-separated list of origins "
				       "like https://app.example.com:8443 (no path)");
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* SANDBOXD_AGENT and SANDBOXD_AGENT_PATH: the sandboxes' agent. */
static int config_agent(struct config *c, config_getenv_fn get, struct err *e)
{
	int64_t n;
	int rc;

	if ((rc = set_num(&n, get, "SANDBOXD_AGENT", 1, 0, 1, e)) ||
	    (rc = set_str(c->agent_path, sizeof(c->agent_path), get, "SANDBOXD_AGENT_PATH",
			  "/usr/local/lib/sandboxd/sandboxd-agent", e)))
		return rc;
	c->agent = (int)n;
	if (c->agent_path[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_AGENT_PATH must be an absolute path");
	return 0;
}

int config_load(struct config *c, config_getenv_fn get, struct err *e)
{
	int64_t n;
	char level[16];
	int rc;

	memset(c, 0, sizeof(*c));
	if ((rc = set_str(c->database_url, sizeof(c->database_url), get,
			  "SANDBOXD_DATABASE_URL", "", e)))
		return rc;
	if (!c->database_url[0])
		return err_set(e, ERR_INVALID, "SANDBOXD_DATABASE_URL is required");
	if ((rc = set_str(c->socket_path, sizeof(c->socket_path), get, "SANDBOXD_SOCKET",
			  "/run/sandboxd/fcgi.sock", e)) ||
	    (rc = set_str(c->socket_group, sizeof(c->socket_group), get,
			  "SANDBOXD_SOCKET_GROUP", "", e)) ||
	    (rc = set_str(c->repos_dir, sizeof(c->repos_dir), get, "SANDBOXD_REPOS_DIR",
			  "/var/lib/sandboxd/repos", e)) ||
	    (rc = set_str(c->public_url, sizeof(c->public_url), get, "SANDBOXD_PUBLIC_URL",
			  "http://127.0.0.1", e)) ||
	    (rc = set_str(c->docker_host, sizeof(c->docker_host), get, "SANDBOXD_DOCKER_HOST",
			  "unix:///var/run/docker.sock", e)) ||
	    (rc = set_str(c->pid_file, sizeof(c->pid_file), get, "SANDBOXD_PID_FILE", "", e)) ||
	    (rc = set_str(c->git_bin, sizeof(c->git_bin), get, "SANDBOXD_GIT", "/usr/bin/git", e)) ||
	    (rc = set_str(c->hooks_dir, sizeof(c->hooks_dir), get, "SANDBOXD_HOOKS_DIR",
			  "/usr/lib/sandboxd/hooks", e)) ||
	    (rc = set_str(level, sizeof(level), get, "SANDBOXD_LOG_LEVEL", "info", e)))
		return rc;
	if (c->socket_path[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_SOCKET must be an absolute path");
	if (strlen(c->socket_path) >= 108)
		return err_set(e, ERR_INVALID, "SANDBOXD_SOCKET is longer than 107 characters");
	if (c->repos_dir[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_REPOS_DIR must be an absolute path");
	if (strncmp(c->public_url, "http://", 7) && strncmp(c->public_url, "https://", 8))
		return err_set(e, ERR_INVALID, "SANDBOXD_PUBLIC_URL must start with http:// or https://");
	size_t ul = strlen(c->public_url);
	while (ul > 0 && c->public_url[ul - 1] == '/')
		c->public_url[--ul] = 0;
	if (!strchr(c->public_url, ':') || strlen(strchr(c->public_url, ':')) <= 3)
		return err_set(e, ERR_INVALID, "SANDBOXD_PUBLIC_URL must name a host");
	if (strncmp(c->docker_host, "unix://", 7) && strncmp(c->docker_host, "tcp://", 6) &&
	    strncmp(c->docker_host, "https://", 8))
		return err_set(e, ERR_INVALID,
			       "SANDBOXD_DOCKER_HOST must start with unix://, tcp:// or https://");
	if ((c->log_level = log_parse_level(level)) < 0)
		return err_set(e, ERR_INVALID,
			       "SANDBOXD_LOG_LEVEL must be debug, info, warn or error");
	if ((rc = set_num(&n, get, "SANDBOXD_WORKERS", 16, 1, 1024, e)))
		return rc;
	c->workers = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_GIT_WORKERS", 4, 1, 1024, e)))
		return rc;
	c->git_workers = (int)n;
	/* By default beside the main socket: fcgi.sock -> fcgi-git.sock. */
	char git_default[sizeof(c->git_socket_path)];
	size_t sl = strlen(c->socket_path);
	if (sl > 5 && strcmp(c->socket_path + sl - 5, ".sock") == 0)
		snprintf(git_default, sizeof(git_default), "%.*s-git.sock", (int)(sl - 5),
			 c->socket_path);
	else
		snprintf(git_default, sizeof(git_default), "%.250s-git", c->socket_path);
	if ((rc = set_str(c->git_socket_path, sizeof(c->git_socket_path), get,
			  "SANDBOXD_GIT_SOCKET", git_default, e)))
		return rc;
	if (c->git_socket_path[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT_SOCKET must be an absolute path");
	if (strlen(c->git_socket_path) >= 108)
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT_SOCKET is longer than 107 characters%s",
			       strcmp(c->git_socket_path, git_default) ? ""
			       : " (by default it is SANDBOXD_SOCKET with -git)");
	if (strcmp(c->git_socket_path, c->socket_path) == 0)
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT_SOCKET must differ from SANDBOXD_SOCKET");
	if ((rc = set_str(c->docker_ca, sizeof(c->docker_ca), get, "SANDBOXD_DOCKER_CA", "", e)) ||
	    (rc = set_str(c->docker_cert, sizeof(c->docker_cert), get, "SANDBOXD_DOCKER_CERT", "", e)) ||
	    (rc = set_str(c->docker_key, sizeof(c->docker_key), get, "SANDBOXD_DOCKER_KEY", "", e)) ||
	    (rc = set_str(c->instance, sizeof(c->instance), get, "SANDBOXD_INSTANCE", "sandboxd", e)) ||
	    (rc = set_str(c->runner_image, sizeof(c->runner_image), get, "SANDBOXD_RUNNER_IMAGE",
			  "sandboxd-runner:bookworm", e)) ||
	    (rc = set_str(c->sandbox_git_url, sizeof(c->sandbox_git_url), get,
			  "SANDBOXD_SANDBOX_GIT_URL", "http://sandboxd.internal", e)) ||
	    (rc = set_str(c->sandbox_network, sizeof(c->sandbox_network), get,
			  "SANDBOXD_SANDBOX_NETWORK", "bridge", e)) ||
	    (rc = set_str(c->signing_key_file, sizeof(c->signing_key_file), get,
			  "SANDBOXD_SIGNING_KEY_FILE", "", e)))
		return rc;
	if (c->signing_key_file[0] && c->signing_key_file[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_SIGNING_KEY_FILE must be an absolute path");
	/* Docker's own rule for network names; "host" and "none" would undo the isolation. */
	if (strspn(c->sandbox_network, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				       "0123456789_.-") != strlen(c->sandbox_network) ||
	    !strcmp(c->sandbox_network, "host") || !strcmp(c->sandbox_network, "none") ||
	    c->sandbox_network[0] == '.' || c->sandbox_network[0] == '-')
		return err_set(e, ERR_INVALID,
			       "SANDBOXD_SANDBOX_NETWORK must name a Docker network (letters, digits, "
			       "'_', '.', '-'; not host or none)");
	ul = strlen(c->sandbox_git_url);
	while (ul > 0 && c->sandbox_git_url[ul - 1] == '/')
		c->sandbox_git_url[--ul] = 0;
	if (strncmp(c->sandbox_git_url, "http://", 7) && strncmp(c->sandbox_git_url, "https://", 8))
		return err_set(e, ERR_INVALID, "SANDBOXD_SANDBOX_GIT_URL must start with http:// or https://");
	if ((rc = set_str(c->sandbox_git_addr, sizeof(c->sandbox_git_addr), get,
			  "SANDBOXD_SANDBOX_GIT_ADDR", "", e)) ||
	    (rc = check_git_addr(c->sandbox_git_addr, e)))
		return rc;
	/* The public URL's origin: scheme and authority, without the path. */
	char origin[sizeof(c->public_url)];
	const char *auth = strstr(c->public_url, "://") + 3;
	snprintf(origin, sizeof(origin), "%.*s", (int)(auth - c->public_url + strcspn(auth, "/")),
		 c->public_url);
	if ((rc = set_str(c->mcp_origins, sizeof(c->mcp_origins), get, "SANDBOXD_MCP_ORIGINS",
			  origin, e)) ||
	    (rc = check_origins(c->mcp_origins, e)))
		return rc;
	if ((rc = set_num(&n, get, "SANDBOXD_IMAGE_PULL", 0, 0, 1, e)))
		return rc;
	c->image_pull = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_IDLE_TIMEOUT", 1800, 5, 86400, e)))
		return rc;
	c->idle_timeout = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_REAPER_INTERVAL", 10, 1, 3600, e)))
		return rc;
	c->reaper_interval = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_START_TIMEOUT", 180, 5, 3600, e)))
		return rc;
	c->start_timeout = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_MAX_SANDBOXES", 20, 1, 10000, e)))
		return rc;
	c->max_sandboxes = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_SANDBOX_MEMORY_MB", 2048, 64, 1 << 20, e)))
		return rc;
	c->sandbox_memory = n << 20;
	if ((rc = set_num(&n, get, "SANDBOXD_SANDBOX_CPUS", 2, 1, 256, e)))
		return rc;
	c->sandbox_cpus = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_SANDBOX_PIDS", 512, 16, 1 << 20, e)))
		return rc;
	c->sandbox_pids = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_FILE_LIMIT", 32 << 20, 1, 1 << 30, e)))
		return rc;
	c->file_limit = (size_t)n;
	if (c->git_bin[0] != '/' || c->hooks_dir[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT and SANDBOXD_HOOKS_DIR must be absolute paths");
	if ((rc = set_num(&n, get, "SANDBOXD_GIT_TIMEOUT", 3600, 10, 86400, e)))
		return rc;
	c->git_timeout = (int)n;
	if ((rc = set_num(&n, get, "SANDBOXD_BODY_LIMIT", 1048576, 1024, 64 << 20, e)))
		return rc;
	c->body_limit = (size_t)n;
	return config_agent(c, get, e);
}
