/* config.c: SANDBOXD_* settings with defaults; every bad value names its variable. */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "sandboxd/lib/addrlist.h"
#include "sandboxd/core/config.h"
#include "sandboxd/proto/engine_list.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/proto/relay.h"
#include "sandboxd/common/banned.h"

/* An IPv4 or IPv6 address literal, or empty. */
static int check_git_addr(struct config *c, struct err *e)
{
	unsigned char a[16];
	const char *v = c->sandbox_git_addr;

	if (!*v || inet_pton(AF_INET, v, a) == 1 || inet_pton(AF_INET6, v, a) == 1)
		return 0;
	return err_set(e, ERR_INVALID, "SANDBOXD_SANDBOX_GIT_ADDR must be an IPv4 or IPv6 address");
}

/* Each entry is an origin as browsers send it: http:// or https://, a host, no path. */
static int check_origins(struct config *c, struct err *e)
{
	const char *p = c->mcp_origins;

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

static void trim_slashes(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '/')
		s[--n] = 0;
}

static int check_database_url(struct config *c, struct err *e)
{
	if (!c->database_url[0])
		return err_set(e, ERR_INVALID, "SANDBOXD_DATABASE_URL is required");
	return 0;
}

/* The server's own settings, once all of them are read (their errors keep this order). */
static int check_server(struct config *c, struct err *e)
{
	if (c->socket_path[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_SOCKET must be an absolute path");
	if (strlen(c->socket_path) >= 108)
		return err_set(e, ERR_INVALID, "SANDBOXD_SOCKET is longer than 107 characters");
	if (c->repos_dir[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_REPOS_DIR must be an absolute path");
	if (strncmp(c->public_url, "http://", 7) && strncmp(c->public_url, "https://", 8))
		return err_set(e, ERR_INVALID, "SANDBOXD_PUBLIC_URL must start with http:// or https://");
	trim_slashes(c->public_url);
	if (!strchr(c->public_url, ':') || strlen(strchr(c->public_url, ':')) <= 3)
		return err_set(e, ERR_INVALID, "SANDBOXD_PUBLIC_URL must name a host");
	if (strncmp(c->docker_host, "unix://", 7) && strncmp(c->docker_host, "tcp://", 6) &&
	    strncmp(c->docker_host, "https://", 8))
		return err_set(e, ERR_INVALID,
			       "SANDBOXD_DOCKER_HOST must start with unix://, tcp:// or https://");
	if (c->log_level < 0)
		return err_set(e, ERR_INVALID,
			       "SANDBOXD_LOG_LEVEL must be debug, info, warn or error");
	return 0;
}

/* A socket beside the main one: fcgi.sock -> fcgi<suffix>.sock. */
static void socket_beside(const struct config *c, const char *suffix, char *out, size_t n)
{
	size_t sl = strlen(c->socket_path);

	if (sl > 5 && strcmp(c->socket_path + sl - 5, ".sock") == 0)
		snprintf(out, n, "%.*s%s.sock", (int)(sl - 5), c->socket_path, suffix);
	else
		snprintf(out, n, "%.240s%s", c->socket_path, suffix);
}

/* By default beside the main socket: fcgi.sock -> fcgi-git.sock, fcgi-holder.sock. */
static void git_socket_default(const struct config *c, char *out, size_t n)
{
	socket_beside(c, "-git", out, n);
}

static void holder_socket_default(const struct config *c, char *out, size_t n)
{
	socket_beside(c, "-holder", out, n);
}

static int check_spool(struct config *c, struct err *e)
{
	if (c->spool_dir[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_SPOOL_DIR must be an absolute path");
	return 0;
}

static int check_holder(struct config *c, struct err *e)
{
	if (c->holder_socket[0] != '/' || strlen(c->holder_socket) >= 108)
		return err_set(e, ERR_INVALID, "SANDBOXD_HOLDER_SOCKET must be an absolute path of "
			       "at most 107 characters (by default SANDBOXD_SOCKET with -holder)");
	if (!strcmp(c->holder_socket, c->socket_path) ||
	    !strcmp(c->holder_socket, c->git_socket_path))
		return err_set(e, ERR_INVALID, "SANDBOXD_HOLDER_SOCKET must differ from the "
			       "FastCGI sockets");
	if (strcmp(c->fault_handover, "") && strcmp(c->fault_handover, "before") &&
	    strcmp(c->fault_handover, "after"))
		return err_set(e, ERR_INVALID, "SANDBOXD_FAULT_HANDOVER must be before, after or "
			       "empty");
	return 0;
}

/* SANDBOXD_INSTANCE in an engine name's alphabet (it never had a rule of its own): lower
 * case, anything else '-', a first character that is not a letter or digit kept after an
 * 'e', at most 63. */
static void engine_name_default(const struct config *c, char *out, size_t n)
{
	size_t o = 0;

	if (n < 2)
		return;
	if (!((c->instance[0] >= 'a' && c->instance[0] <= 'z') ||
	      (c->instance[0] >= 'A' && c->instance[0] <= 'Z') ||
	      (c->instance[0] >= '0' && c->instance[0] <= '9')))
		out[o++] = 'e';
	for (const char *p = c->instance; *p && o + 1 < n && o < 63; p++) {
		char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
		out[o++] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
				   ch == '_' || ch == '-' ? ch : '-';
	}
	out[o] = 0;
}

/* The own engine's name and SANDBOXD_DOCKER_HOSTS (engine.h parses the list the same way
 * at registration; here a bad one stops the start with its reason). */
static int check_engines(struct config *c, struct err *e)
{
	if (!engine_name_valid(c->engine_name))
		return err_set(e, ERR_INVALID, "SANDBOXD_ENGINE_NAME must be 1 to 63 of [a-z0-9._-], "
			       "starting with a letter or digit (by default SANDBOXD_INSTANCE)");
	if (!c->docker_ca[0] && !c->docker_insecure && engine_url_plain_tcp(c->docker_host))
		return err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOST is plain tcp:// (whoever "
			       "reaches it is root on its machine): set SANDBOXD_DOCKER_CA, "
			       "SANDBOXD_DOCKER_CERT and SANDBOXD_DOCKER_KEY, or "
			       "SANDBOXD_DOCKER_INSECURE=1");
	return engine_list_check(c->docker_hosts, c->engine_name, c->docker_ca[0] != 0,
				 c->docker_insecure, e);
}

/* Several hosts: a relay URL nginx can proxy to without a resolver, and the key's file;
 * both or neither. */
static int check_relay(struct config *c, struct err *e)
{
	struct err why = { .msg = "" };

	trim_slashes(c->relay_url);
	if (c->relay_url[0] && relay_url_parse(c->relay_url, NULL, NULL, &why))
		return err_set(e, ERR_INVALID, "SANDBOXD_RELAY_URL: %s", why.msg);
	if (c->relay_key_file[0] && c->relay_key_file[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_RELAY_KEY_FILE must be an absolute path");
	if (!c->relay_url[0] != !c->relay_key_file[0])
		return err_set(e, ERR_INVALID, "SANDBOXD_RELAY_URL and SANDBOXD_RELAY_KEY_FILE go "
			       "together: set both (several hosts) or neither");
	return 0;
}

static int check_git_socket(struct config *c, struct err *e)
{
	char def[sizeof(c->git_socket_path)];

	if (c->git_socket_path[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT_SOCKET must be an absolute path");
	git_socket_default(c, def, sizeof(def));
	if (strlen(c->git_socket_path) >= 108)
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT_SOCKET is longer than 107 characters%s",
			       strcmp(c->git_socket_path, def) ? ""
			       : " (by default it is SANDBOXD_SOCKET with -git)");
	if (strcmp(c->git_socket_path, c->socket_path) == 0)
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT_SOCKET must differ from SANDBOXD_SOCKET");
	return 0;
}

static int check_sandbox(struct config *c, struct err *e)
{
	if (c->signing_key_file[0] && c->signing_key_file[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_SIGNING_KEY_FILE must be an absolute path");
	if (c->secrets_key_file[0] && c->secrets_key_file[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_SECRETS_KEY_FILE must be an absolute path");
	/* Docker's own rule for network names; "host" and "none" would undo the isolation. */
	if (strspn(c->sandbox_network, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				       "0123456789_.-") != strlen(c->sandbox_network) ||
	    !strcmp(c->sandbox_network, "host") || !strcmp(c->sandbox_network, "none") ||
	    c->sandbox_network[0] == '.' || c->sandbox_network[0] == '-')
		return err_set(e, ERR_INVALID,
			       "SANDBOXD_SANDBOX_NETWORK must name a Docker network (letters, digits, "
			       "'_', '.', '-'; not host or none)");
	if (config_egress_rank(c->egress) < 1)
		return err_set(e, ERR_INVALID, "SANDBOXD_EGRESS must be open or web");
	trim_slashes(c->sandbox_git_url);
	if (strncmp(c->sandbox_git_url, "http://", 7) && strncmp(c->sandbox_git_url, "https://", 8))
		return err_set(e, ERR_INVALID, "SANDBOXD_SANDBOX_GIT_URL must start with http:// or https://");
	return 0;
}

/* An image reference as the Docker client modules take it ([A-Za-z0-9._/:@-], no ".."
 * or empty component): refused at start, not at the first create. */
static int ref_ok(const char *ref, size_t n)
{
	char r[256];

	if (n == 0 || n >= sizeof(r))
		return 0;
	memcpy(r, ref, n);
	r[n] = 0;
	return strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@") == n &&
	       !strstr(r, "..") && !strstr(r, "//") && r[0] != '/';
}

/* SANDBOXD_IMAGES: name=image entries joined by commas, at most CONFIG_IMAGES_MAX, names
 * unique; a name as the database's CHECK has it (sql/016), and an image reference. */
static int parse_image(struct config *c, const char *item, size_t len, struct err *e)
{
	const char *eq = memchr(item, '=', len);
	size_t nl = eq ? (size_t)(eq - item) : 0, rl = eq ? len - nl - 1 : 0;
	struct config_image *im = &c->images[c->nimages];

	if (!eq || nl == 0 || nl > CONFIG_IMAGE_NAME_MAX || !ref_ok(eq + 1, rl) ||
	    strspn(item, "abcdefghijklmnopqrstuvwxyz0123456789._-") < nl ||
	    !strchr("abcdefghijklmnopqrstuvwxyz0123456789", item[0]))
		return err_set(e, ERR_INVALID, "SANDBOXD_IMAGES: '%.*s' is not name=image (a name "
			       "of lower-case letters, digits, '.', '_', '-', at most %d; an image "
			       "reference)", (int)(len > 80 ? 80 : len), item, CONFIG_IMAGE_NAME_MAX);
	if (c->nimages == CONFIG_IMAGES_MAX)
		return err_set(e, ERR_INVALID, "SANDBOXD_IMAGES names more than %d images",
			       CONFIG_IMAGES_MAX);
	snprintf(im->name, sizeof(im->name), "%.*s", (int)nl, item);
	snprintf(im->ref, sizeof(im->ref), "%.*s", (int)rl, eq + 1);
	if (config_image_find(c, im->name))
		return err_set(e, ERR_INVALID, "SANDBOXD_IMAGES names '%s' twice", im->name);
	c->nimages++;
	return 0;
}

static int check_images(struct config *c, struct err *e)
{
	const char *p = c->images_setting;
	int rc = 0;

	c->nimages = 0;
	while (!rc && *p) {
		size_t len = strcspn(p, ",");
		rc = parse_image(c, p, len, e);
		p += len + (p[len] == ',');
	}
	if (!rc && c->nimages == 0)
		rc = err_set(e, ERR_INVALID, "SANDBOXD_IMAGES names no image");
	return rc;
}

const struct config_image *config_image_find(const struct config *c, const char *name)
{
	for (int i = 0; name && i < c->nimages; i++)
		if (strcmp(c->images[i].name, name) == 0)
			return &c->images[i];
	return NULL;
}

int config_egress_rank(const char *mode)
{
	static const char *const modes[] = { "none", "web", "open" };

	for (int i = 0; i < 3; i++)
		if (mode && !strcmp(mode, modes[i]))
			return i;
	return -1;
}

int config_egress_network(const struct config *c, const char *mode,
			  char out[CONFIG_NETWORK_MAX], struct err *e)
{
	int rank = config_egress_rank(mode), mine = config_egress_rank(c->egress);

	if (rank < 0 || rank > mine)
		return err_set(e, ERR_INVALID, "egress %s is not one of this deployment's (%s)",
			       mode ? mode : "(none)", c->egress);
	if (rank == mine)
		snprintf(out, CONFIG_NETWORK_MAX, "%s", c->sandbox_network);
	else
		snprintf(out, CONFIG_NETWORK_MAX, "%s-%s", c->sandbox_network, mode);
	return 0;
}

const char *config_default_image(const struct config *c)
{
	return c->images[0].ref;
}

/* The public URL's origin: scheme and authority, without the path. */
static void public_origin(const struct config *c, char *out, size_t n)
{
	const char *auth = strstr(c->public_url, "://") + 3;

	snprintf(out, n, "%.*s", (int)(auth - c->public_url + strcspn(auth, "/")), c->public_url);
}

static int check_agent_path(struct config *c, struct err *e)
{
	if (c->agent_path[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_AGENT_PATH must be an absolute path");
	return 0;
}

static int check_git_paths(struct config *c, struct err *e)
{
	if (c->git_bin[0] != '/' || c->hooks_dir[0] != '/')
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT and SANDBOXD_HOOKS_DIR must be absolute paths");
	return 0;
}

static int check_metrics_allow(struct config *c, struct err *e)
{
	struct err why = { .msg = "" };

	if (addrlist_check(c->metrics_allow, &why))
		return err_set(e, ERR_INVALID, "SANDBOXD_METRICS_ALLOW: %s", why.msg);
	return 0;
}

/* An account's pushes in progress must leave git workers to everybody else: fewer than
 * SANDBOXD_GIT_WORKERS. Unset, 2, or one less than the git workers when they are fewer (1
 * with a single git worker, which one push then holds whatever the bound). */
static int check_git_pushes(struct config *c, struct err *e)
{
	int *k = &c->git_pushes_per_account;

	if (*k == 0) {
		*k = c->git_workers - 1 < 2 ? c->git_workers - 1 : 2;
		if (*k < 1)
			*k = 1;
		return 0;
	}
	if (*k >= c->git_workers)
		return err_set(e, ERR_INVALID, "SANDBOXD_GIT_PUSHES_PER_ACCOUNT (%d) must be less "
			       "than SANDBOXD_GIT_WORKERS (%d), so that one account's pushes never "
			       "hold every git worker", *k, c->git_workers);
	return 0;
}

/* DNS labels of letters, digits and '-' joined by dots (stored lower-case): a preview's
 * host is one more label in front of them. */
static int check_preview_domain(struct config *c, struct err *e)
{
	const char *p = c->preview_domain;
	size_t label = 0;

	for (; *p; p++) {
		char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
		c->preview_domain[p - c->preview_domain] = ch;
		if (ch == '.' && label == 0)
			break;
		if (ch != '.' && !((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
			break;
		label = ch == '.' ? 0 : label + 1;
		if (label > 63)
			break;
	}
	if (*p || label == 0)
		return err_set(e, ERR_INVALID, "SANDBOXD_PREVIEW_DOMAIN must be a DNS name (letters, "
			       "digits and '-' in labels of at most 63, joined by dots)");
	return 0;
}

/* What a setting is read into: a string field, the log level by its name, or a number
 * stored as int, as size_t, or as bytes from a count of MiB. */
enum kind { STR, LEVEL, INT, SIZE, MIB };

struct setting {
	const char *name;
	enum kind kind;
	size_t off, size;          /* the field in struct config */
	const char *def;           /* STR, LEVEL */
	/* STR: a default made from the settings read before it, instead of def */
	void (*def_from)(const struct config *c, char *out, size_t n);
	int64_t def_n, min, max;   /* numbers */
	/* Run once this setting is read, over everything read so far. */
	int (*check)(struct config *c, struct err *e);
};

#define FIELD(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)
#define S(env, f, d, ...) { env, STR, FIELD(f), .def = d, __VA_ARGS__ }
#define N(env, k, f, d, lo, hi, ...) \
	{ env, k, FIELD(f), .def_n = d, .min = lo, .max = hi, __VA_ARGS__ }

/* In the order they are read and checked: the first bad value is the one reported. */
static const struct setting settings[] = {
	S("SANDBOXD_DATABASE_URL", database_url, "", .check = check_database_url),
	S("SANDBOXD_SOCKET", socket_path, "/run/sandboxd/fcgi.sock"),
	S("SANDBOXD_SOCKET_GROUP", socket_group, ""),
	S("SANDBOXD_REPOS_DIR", repos_dir, "/var/lib/sandboxd/repos"),
	S("SANDBOXD_PUBLIC_URL", public_url, "http://127.0.0.1"),
	S("SANDBOXD_DOCKER_HOST", docker_host, "unix:///var/run/docker.sock"),
	S("SANDBOXD_PID_FILE", pid_file, ""),
	S("SANDBOXD_GIT", git_bin, "/usr/bin/git"),
	S("SANDBOXD_HOOKS_DIR", hooks_dir, "/usr/lib/sandboxd/hooks"),
	{ "SANDBOXD_LOG_LEVEL", LEVEL, FIELD(log_level), .def = "info", .check = check_server },
	N("SANDBOXD_WORKERS", INT, workers, 16, 1, 1024),
	N("SANDBOXD_GIT_WORKERS", INT, git_workers, 4, 1, 1024),
	S("SANDBOXD_GIT_SOCKET", git_socket_path, NULL, .def_from = git_socket_default,
	  .check = check_git_socket),
	N("SANDBOXD_HOLDER", INT, holder, 1, 0, 1),
	N("SANDBOXD_HOLD_AFTER_MS", INT, hold_after_ms, 50, 0, 1000),
	/* Tests only: a worker kills itself right before or after a hand-over. */
	S("SANDBOXD_FAULT_HANDOVER", fault_handover, ""),
	S("SANDBOXD_HOLDER_SOCKET", holder_socket, NULL, .def_from = holder_socket_default,
	  .check = check_holder),
	S("SANDBOXD_SPOOL_DIR", spool_dir, "/var/tmp", .check = check_spool),
	/* Plain tcp:// engines, on the operator's explicit word only (check_engines). */
	N("SANDBOXD_DOCKER_INSECURE", INT, docker_insecure, 0, 0, 1),
	S("SANDBOXD_DOCKER_CA", docker_ca, ""),
	S("SANDBOXD_DOCKER_CERT", docker_cert, ""),
	S("SANDBOXD_DOCKER_KEY", docker_key, ""),
	S("SANDBOXD_INSTANCE", instance, "sandboxd"),
	S("SANDBOXD_ENGINE_NAME", engine_name, NULL, .def_from = engine_name_default,
	  .check = check_engines),
	N("SANDBOXD_ENGINE_MAX_SANDBOXES", INT, engine_max, 1000, 0, 100000),
	S("SANDBOXD_DOCKER_HOSTS", docker_hosts, "", .check = check_engines),
	N("SANDBOXD_ENGINE_GRACE", INT, engine_grace, 300, 5, 86400),
	S("SANDBOXD_RELAY_URL", relay_url, ""),
	S("SANDBOXD_RELAY_KEY_FILE", relay_key_file, "", .check = check_relay),
	S("SANDBOXD_IMAGES", images_setting,
	  "standard=sandboxd-runner:standard,minimal=sandboxd-runner:minimal",
	  .check = check_images),
	S("SANDBOXD_SANDBOX_GIT_URL", sandbox_git_url, "http://sandboxd.internal"),
	S("SANDBOXD_SANDBOX_NETWORK", sandbox_network, "bridge"),
	S("SANDBOXD_EGRESS", egress, "open"),
	S("SANDBOXD_SIGNING_KEY_FILE", signing_key_file, "", .check = check_sandbox),
	S("SANDBOXD_SECRETS_KEY_FILE", secrets_key_file, ""),
	S("SANDBOXD_SANDBOX_GIT_ADDR", sandbox_git_addr, "", .check = check_git_addr),
	S("SANDBOXD_MCP_ORIGINS", mcp_origins, NULL, .def_from = public_origin,
	  .check = check_origins),
	N("SANDBOXD_IMAGE_PULL", INT, image_pull, 0, 0, 1),
	N("SANDBOXD_IDLE_TIMEOUT", INT, idle_timeout, 1800, 5, 86400),
	/* At most a day: the life of a sandbox's git credential (sandbox_create.c). */
	N("SANDBOXD_MAX_LIFETIME", INT, max_lifetime, 86400, 10, 86400),
	N("SANDBOXD_REAPER_INTERVAL", INT, reaper_interval, 10, 1, 3600),
	/* 30 days; at most ten years (an int of seconds, with room). */
	N("SANDBOXD_EPHEMERAL_TTL", INT, ephemeral_ttl, 2592000, 1, 315360000),
	/* LFS objects (decision 0089): 10 GiB a repository, 50 GiB an account (the sum over
	 * the repositories it owns), at most 1 PiB; an unreferenced object is collected a
	 * day after its upload or its last reference, at the least a second. */
	N("SANDBOXD_LFS_REPO_QUOTA_MB", MIB, lfs_repo_quota, 10240, 1, (int64_t)1 << 30),
	N("SANDBOXD_LFS_ACCOUNT_QUOTA_MB", MIB, lfs_account_quota, 51200, 1, (int64_t)1 << 30),
	N("SANDBOXD_LFS_GRACE", INT, lfs_grace, 86400, 1, 315360000),
	N("SANDBOXD_START_TIMEOUT", INT, start_timeout, 180, 5, 3600),
	N("SANDBOXD_POOL_SIZE", INT, pool_size, 2, 0, 64),
	N("SANDBOXD_MAX_SANDBOXES", INT, max_sandboxes, 20, 1, 10000),
	N("SANDBOXD_SANDBOX_MEMORY_MB", MIB, sandbox_memory, 2048, 64, 1 << 20),
	N("SANDBOXD_SANDBOX_MAX_MEMORY_MB", MIB, sandbox_max_memory, 8192, 64, 1 << 20),
	N("SANDBOXD_SANDBOX_MAX_CPUS", INT, sandbox_max_cpus, 8, 1, 256),
	N("SANDBOXD_SANDBOX_CPUS", INT, sandbox_cpus, 2, 1, 256),
	/* 10 GiB (SPEC §4 "Limits"), from 64 MiB: an image's own files do not count. */
	N("SANDBOXD_SANDBOX_DISK_MB", MIB, sandbox_disk, 10240, 64, 1 << 24),
	N("SANDBOXD_SANDBOX_MAX_DISK_MB", MIB, sandbox_max_disk, 102400, 64, 1 << 24),
	N("SANDBOXD_DISK_CHECK_INTERVAL", INT, disk_check_interval, 60, 1, 86400),
	/* The holder beats every 5 s (HOLDER_BEAT_MS): two beats missed at the least. */
	N("SANDBOXD_HELD_STALE", INT, held_stale, 30, 10, 3600),
	N("SANDBOXD_SANDBOX_PIDS", INT, sandbox_pids, 512, 16, 1 << 20),
	N("SANDBOXD_SANDBOX_UID", INT, sandbox_uid, 61000, 1, 2147483646),
	N("SANDBOXD_FILE_LIMIT", SIZE, file_limit, 32 << 20, 1, 1 << 30,
	  .check = check_git_paths),
	/* Raw transfers stream (api_files_raw.c): nginx's client_max_body_size is the same. */
	N("SANDBOXD_FILE_RAW_LIMIT", SIZE, file_raw_limit, 1 << 30, 1, (int64_t)64 << 30),
	N("SANDBOXD_GIT_TIMEOUT", INT, git_timeout, 3600, 10, 86400),
	N("SANDBOXD_GIT_BODY_STALL", INT, git_body_stall, 10, 1, 3600),
	N("SANDBOXD_GIT_BODY_GRACE", INT, git_body_grace, 10, 1, 3600),
	/* 32 KiB/s (README "Slow clients": why); at most 1 GiB/s, 0 turns the floor off. */
	N("SANDBOXD_GIT_BODY_MIN_RATE", SIZE, git_body_min_rate, 32768, 0, 1 << 30),
	/* 0: unset (check_git_pushes picks the default). */
	N("SANDBOXD_GIT_PUSHES_PER_ACCOUNT", INT, git_pushes_per_account, 0, 1, 1024,
	  .check = check_git_pushes),
	N("SANDBOXD_BODY_LIMIT", SIZE, body_limit, 1048576, 1024, 64 << 20),
	N("SANDBOXD_AGENT", INT, agent, 1, 0, 1),
	/* Concurrent execs (attached, streamed, detached) per sandbox and per account, kept by
	 * the service in exec_slots (exec_slots.h, decision 0085), never by the agent. */
	N("SANDBOXD_EXECS_PER_SANDBOX", INT, execs_per_sandbox, 16, 1, 1024),
	N("SANDBOXD_EXECS_PER_ACCOUNT", INT, execs_per_account, 64, 1, 65536),
	/* Calls parked in the holder (park.h): per sandbox and per account (429), in all (503);
	 * a body past park_memory waits in an unlinked file of SANDBOXD_SPOOL_DIR (0087). */
	N("SANDBOXD_PARKED_PER_SANDBOX", INT, parked_per_sandbox, 12, 1, 1024),
	N("SANDBOXD_PARKED_PER_ACCOUNT", INT, parked_per_account, 32, 1, 65536),
	N("SANDBOXD_HOLDER_PARKED", INT, holder_parked, 1024, 1, 65536),
	N("SANDBOXD_PARK_MEMORY", SIZE, park_memory, 65536, 0, 64 << 20),
	/* clone.sh's bounds on the clone and on git lfs pull (a .lfsconfig may stall it). */
	N("SANDBOXD_CLONE_TIMEOUT", INT, clone_timeout, 1800, 10, 86400),
	N("SANDBOXD_CLONE_LFS_TIMEOUT", INT, clone_lfs_timeout, 600, 10, 86400),
	S("SANDBOXD_AGENT_PATH", agent_path, "/usr/local/lib/sandboxd/sandboxd-agent",
	  .check = check_agent_path),
	S("SANDBOXD_METRICS_ALLOW", metrics_allow, "", .check = check_metrics_allow),
	S("SANDBOXD_PREVIEW_DOMAIN", preview_domain, "preview.localhost",
	  .check = check_preview_domain),
};

/* A string setting, or the log level's name (its own buffer: the field is an int). An
 * unknown level is stored as -1 and refused by check_server, after the settings before it. */
static int read_str(struct config *c, const struct setting *s, const char *v, struct err *e)
{
	char *field = (char *)c + s->off, level[16], def[1024];
	size_t n = s->kind == LEVEL ? sizeof(level) : s->size;

	if (!v || !*v) {
		v = s->def;
		if (s->def_from) {
			s->def_from(c, def, sizeof(def) < n ? sizeof(def) : n);
			v = def;
		}
	}
	if (strlen(v) >= n)
		return err_set(e, ERR_INVALID, "%s is longer than %zu characters", s->name, n - 1);
	if (s->kind == LEVEL)
		*(int *)field = log_parse_level(v);
	else
		snprintf(field, n, "%s", v);
	return 0;
}

static int read_num(struct config *c, const struct setting *s, const char *v, struct err *e)
{
	char *field = (char *)c + s->off;
	int64_t n = s->def_n;

	if (v && *v && num_parse(v, s->min, s->max, &n))
		return err_set(e, ERR_INVALID, "%s must be an integer between %lld and %lld",
			       s->name, (long long)s->min, (long long)s->max);
	if (s->kind == INT)
		*(int *)field = (int)n;
	else if (s->kind == SIZE)
		*(size_t *)field = (size_t)n;
	else
		*(int64_t *)field = n << 20;
	return 0;
}

int config_load(struct config *c, config_getenv_fn get, struct err *e)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const struct setting *s = &settings[i];
		const char *v = get(s->name);
		int rc = s->kind == STR || s->kind == LEVEL ? read_str(c, s, v, e)
							     : read_num(c, s, v, e);
		if (!rc && s->check)
			rc = s->check(c, e);
		if (rc)
			return rc;
	}
	/* Retired (SPEC §4): ignoring it would run sandboxes on an image other than the one
	 * the operator named. */
	const char *old = get("SANDBOXD_RUNNER_IMAGE");
	if (old && *old)
		return err_set(e, ERR_INVALID, "SANDBOXD_RUNNER_IMAGE is retired: name the images "
			       "in SANDBOXD_IMAGES (name=image,…; the first is the default)");
	return 0;
}
