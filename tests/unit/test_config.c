/* test_config.c: SANDBOXD_* settings read through a fake getenv table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/core/config.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/common/banned.h"

#define MAX_VARS 16

/* The fake environment: name/value pairs; a NULL value is unset. */
static struct {
	const char *name;
	const char *value;
} env[MAX_VARS];
static int asked_other;   /* set when config asks for a name outside SANDBOXD_ */

static const char *fake_getenv(const char *name)
{
	if (strncmp(name, "SANDBOXD_", 9))
		asked_other = 1;
	for (int i = 0; i < MAX_VARS; i++)
		if (env[i].name && strcmp(env[i].name, name) == 0)
			return env[i].value;
	return NULL;
}

static void env_set(const char *name, const char *value)
{
	for (int i = 0; i < MAX_VARS; i++)
		if (!env[i].name || strcmp(env[i].name, name) == 0) {
			env[i].name = name;
			env[i].value = value;
			return;
		}
	fail_msg("fake environment full");
}

/* Every test starts from an environment that holds only the database URL. */
static int setup(void **state)
{
	memset(env, 0, sizeof(env));
	asked_other = 0;
	env_set("SANDBOXD_DATABASE_URL", "postgresql:///sandboxd");
	return 0;
}

static int load(struct config *c, struct err *e)
{
	memset(e, 0, sizeof(*e));
	return config_load(c, fake_getenv, e);
}

/* name=value must be refused with exactly msg. */
static void refused(const char *name, const char *value, const char *msg)
{
	struct config c;
	struct err e;

	env_set(name, value);
	assert_int_equal(load(&c, &e), ERR_INVALID);
	assert_string_equal(e.msg, msg);
	/* every message names its variable */
	assert_non_null(strstr(e.msg, name));
}

static void accepted(const char *name, const char *value, struct config *c)
{
	struct err e;

	env_set(name, value);
	if (load(c, &e))
		fail_msg("%s=%s refused: %s", name, value, e.msg);
}

/* prefix padded with 'a' to n characters, in one of four static buffers. */
static const char *long_value(const char *prefix, size_t n)
{
	static char buf[4][2048];
	static int which;
	char *b = buf[which++ % 4];
	size_t p = strlen(prefix);

	assert_true(p + n < sizeof(buf[0]));
	memcpy(b, prefix, p);
	memset(b + p, 'a', n - p);
	b[n] = 0;
	return b;
}

static void test_defaults(void **state)
{
	struct config c;
	struct err e;

	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(load(&c, &e), 0);
	assert_string_equal(c.database_url, "postgresql:///sandboxd");
	assert_string_equal(c.socket_path, "/run/sandboxd/fcgi.sock");
	assert_string_equal(c.socket_group, "");
	assert_string_equal(c.repos_dir, "/var/lib/sandboxd/repos");
	assert_string_equal(c.public_url, "http://127.0.0.1");
	assert_string_equal(c.docker_host, "unix:///var/run/docker.sock");
	assert_string_equal(c.pid_file, "");
	assert_int_equal(c.workers, 16);
	assert_int_equal(c.git_workers, 4);
	assert_string_equal(c.git_socket_path, "/run/sandboxd/fcgi-git.sock");
	assert_int_equal(c.body_limit, 1048576);
	assert_int_equal(c.log_level, LOG_INFO);
	assert_string_equal(c.git_bin, "/usr/bin/git");
	assert_string_equal(c.hooks_dir, "/usr/lib/sandboxd/hooks");
	assert_int_equal(c.git_timeout, 3600);
	assert_int_equal(c.git_body_stall, 10);
	assert_int_equal(c.git_body_grace, 10);
	assert_int_equal(c.git_body_min_rate, 32768);
	assert_int_equal(c.git_pushes_per_account, 2);
	assert_int_equal(c.ephemeral_ttl, 2592000);   /* 30 days (SPEC §5) */
	assert_int_equal(asked_other, 0);
}

static void test_empty_values_are_defaults(void **state)
{
	struct config c;
	struct err e;

	env_set("SANDBOXD_SOCKET", "");
	env_set("SANDBOXD_WORKERS", "");
	env_set("SANDBOXD_BODY_LIMIT", "");
	env_set("SANDBOXD_LOG_LEVEL", "");
	env_set("SANDBOXD_PUBLIC_URL", "");
	assert_int_equal(load(&c, &e), 0);
	assert_string_equal(c.socket_path, "/run/sandboxd/fcgi.sock");
	assert_string_equal(c.public_url, "http://127.0.0.1");
	assert_int_equal(c.workers, 16);
	assert_int_equal(c.body_limit, 1048576);
	assert_int_equal(c.log_level, LOG_INFO);
}

static void test_all_set(void **state)
{
	struct config c;
	struct err e;

	env_set("SANDBOXD_DATABASE_URL", "host=/tmp dbname=x");
	env_set("SANDBOXD_SOCKET", "/tmp/s.sock");
	env_set("SANDBOXD_SOCKET_GROUP", "www-data");
	env_set("SANDBOXD_REPOS_DIR", "/srv/repos");
	env_set("SANDBOXD_PUBLIC_URL", "https://git.example.com");
	env_set("SANDBOXD_DOCKER_HOST", "tcp://127.0.0.1:2375");
	env_set("SANDBOXD_DOCKER_INSECURE", "1");
	env_set("SANDBOXD_PID_FILE", "/run/sandboxd.pid");
	env_set("SANDBOXD_WORKERS", "4");
	env_set("SANDBOXD_BODY_LIMIT", "65536");
	env_set("SANDBOXD_LOG_LEVEL", "debug");
	assert_int_equal(load(&c, &e), 0);
	assert_string_equal(c.database_url, "host=/tmp dbname=x");
	assert_string_equal(c.socket_path, "/tmp/s.sock");
	assert_string_equal(c.git_socket_path, "/tmp/s-git.sock");
	assert_string_equal(c.socket_group, "www-data");
	assert_string_equal(c.repos_dir, "/srv/repos");
	assert_string_equal(c.public_url, "https://git.example.com");
	assert_string_equal(c.docker_host, "tcp://127.0.0.1:2375");
	assert_int_equal(c.docker_insecure, 1);
	assert_string_equal(c.pid_file, "/run/sandboxd.pid");
	assert_int_equal(c.workers, 4);
	assert_int_equal(c.body_limit, 65536);
	assert_int_equal(c.log_level, LOG_DEBUG);
}

static void test_database_url_required(void **state)
{
	struct config c;
	struct err e;

	memset(env, 0, sizeof(env));
	assert_int_equal(load(&c, &e), ERR_INVALID);
	assert_string_equal(e.msg, "SANDBOXD_DATABASE_URL is required");
	refused("SANDBOXD_DATABASE_URL", "", "SANDBOXD_DATABASE_URL is required");
}

static void test_public_url(void **state)
{
	struct config c;

	accepted("SANDBOXD_PUBLIC_URL", "https://git.example.com/", &c);
	assert_string_equal(c.public_url, "https://git.example.com");
	accepted("SANDBOXD_PUBLIC_URL", "http://h:8080///", &c);
	assert_string_equal(c.public_url, "http://h:8080");
	accepted("SANDBOXD_PUBLIC_URL", "http://h/base/", &c);
	assert_string_equal(c.public_url, "http://h/base");
	accepted("SANDBOXD_PUBLIC_URL", "http://h", &c);
	assert_string_equal(c.public_url, "http://h");
	const char *msg = "SANDBOXD_PUBLIC_URL must start with http:// or https://";
	refused("SANDBOXD_PUBLIC_URL", "ftp://h", msg);
	refused("SANDBOXD_PUBLIC_URL", "git.example.com", msg);
	refused("SANDBOXD_PUBLIC_URL", "http:/h", msg);
	refused("SANDBOXD_PUBLIC_URL", "/", msg);
}

static void test_public_url_needs_a_host(void **state)
{
	/* with the trailing slashes dropped, these leave "http:" or "https:" */
	static const char *values[] = { "http://", "https://", "http:///", "https:////" };

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		struct config c;
		struct err e;

		env_set("SANDBOXD_PUBLIC_URL", values[i]);
		if (load(&c, &e) != ERR_INVALID)
			fail_msg("SANDBOXD_PUBLIC_URL=%s accepted as '%s'", values[i], c.public_url);
		assert_non_null(strstr(e.msg, "SANDBOXD_PUBLIC_URL"));
	}
}

static void test_socket(void **state)
{
	struct config c;

	refused("SANDBOXD_SOCKET", "run/s.sock", "SANDBOXD_SOCKET must be an absolute path");
	refused("SANDBOXD_SOCKET", "s", "SANDBOXD_SOCKET must be an absolute path");
	/* sun_path holds 107 characters and the NUL (the git socket's default would not) */
	refused("SANDBOXD_SOCKET", long_value("/", 107),
		"SANDBOXD_GIT_SOCKET is longer than 107 characters (by default it is "
		"SANDBOXD_SOCKET with -git)");
	env_set("SANDBOXD_GIT_SOCKET", "/run/git.sock");
	refused("SANDBOXD_SOCKET", long_value("/", 107),
		"SANDBOXD_HOLDER_SOCKET must be an absolute path of at most 107 characters (by "
		"default SANDBOXD_SOCKET with -holder)");
	env_set("SANDBOXD_HOLDER_SOCKET", "/run/holder.sock");
	accepted("SANDBOXD_SOCKET", long_value("/", 107), &c);
	assert_int_equal(strlen(c.socket_path), 107);
	env_set("SANDBOXD_GIT_SOCKET", NULL);
	env_set("SANDBOXD_HOLDER_SOCKET", NULL);
	refused("SANDBOXD_SOCKET", long_value("/", 108),
		"SANDBOXD_SOCKET is longer than 107 characters");
	refused("SANDBOXD_SOCKET", long_value("/", 256),
		"SANDBOXD_SOCKET is longer than 255 characters");
}

/* The holder's socket: beside the main one by default; an absolute path of its own. */
static void test_holder(void **state)
{
	struct config c;

	accepted("SANDBOXD_SOCKET", "/run/x/fcgi.sock", &c);
	assert_string_equal(c.holder_socket, "/run/x/fcgi-holder.sock");
	assert_int_equal(c.holder, 1);
	assert_string_equal(c.fault_handover, "");
	refused("SANDBOXD_HOLDER_SOCKET", "holder.sock",
		"SANDBOXD_HOLDER_SOCKET must be an absolute path of at most 107 characters (by "
		"default SANDBOXD_SOCKET with -holder)");
	refused("SANDBOXD_HOLDER_SOCKET", "/run/x/fcgi.sock",
		"SANDBOXD_HOLDER_SOCKET must differ from the FastCGI sockets");
	env_set("SANDBOXD_HOLDER_SOCKET", NULL);
	refused("SANDBOXD_FAULT_HANDOVER", "middle",
		"SANDBOXD_FAULT_HANDOVER must be before, after or empty");
	accepted("SANDBOXD_FAULT_HANDOVER", "after", &c);
	assert_string_equal(c.fault_handover, "after");
	env_set("SANDBOXD_FAULT_HANDOVER", NULL);
	assert_string_equal(c.spool_dir, "/var/tmp");
	assert_int_equal(c.hold_after_ms, 50);
	refused("SANDBOXD_HOLD_AFTER_MS", "1001",
		"SANDBOXD_HOLD_AFTER_MS must be an integer between 0 and 1000");
	accepted("SANDBOXD_HOLD_AFTER_MS", "0", &c);
	assert_int_equal(c.hold_after_ms, 0);
	env_set("SANDBOXD_HOLD_AFTER_MS", NULL);
	refused("SANDBOXD_SPOOL_DIR", "spool", "SANDBOXD_SPOOL_DIR must be an absolute path");
	accepted("SANDBOXD_SPOOL_DIR", "/srv/spool", &c);
	assert_string_equal(c.spool_dir, "/srv/spool");
	env_set("SANDBOXD_SPOOL_DIR", NULL);
	refused("SANDBOXD_HOLDER", "2", "SANDBOXD_HOLDER must be an integer between 0 and 1");
	accepted("SANDBOXD_HOLDER", "0", &c);
	assert_int_equal(c.holder, 0);
}

static void test_repos_dir(void **state)
{
	struct config c;

	refused("SANDBOXD_REPOS_DIR", "repos", "SANDBOXD_REPOS_DIR must be an absolute path");
	refused("SANDBOXD_REPOS_DIR", "./repos", "SANDBOXD_REPOS_DIR must be an absolute path");
	accepted("SANDBOXD_REPOS_DIR", long_value("/", 511), &c);
	assert_int_equal(strlen(c.repos_dir), 511);
	refused("SANDBOXD_REPOS_DIR", long_value("/", 512),
		"SANDBOXD_REPOS_DIR is longer than 511 characters");
}

static void test_docker_host(void **state)
{
	struct config c;
	const char *msg = "SANDBOXD_DOCKER_HOST must start with unix://, tcp:// or https://";

	accepted("SANDBOXD_DOCKER_HOST", "unix:///tmp/d.sock", &c);
	assert_string_equal(c.docker_host, "unix:///tmp/d.sock");
	accepted("SANDBOXD_DOCKER_HOST", "https://docker:2376", &c);
	assert_string_equal(c.docker_host, "https://docker:2376");
	refused("SANDBOXD_DOCKER_HOST", "/var/run/docker.sock", msg);
	refused("SANDBOXD_DOCKER_HOST", "http://docker:2375", msg);
	refused("SANDBOXD_DOCKER_HOST", "npipe:////./pipe/docker_engine", msg);
	/* Plain tcp:// only on the operator's explicit word; with TLS files it is TLS. */
	refused("SANDBOXD_DOCKER_HOST", "tcp://docker:2375", "SANDBOXD_DOCKER_HOST is plain "
		"tcp:// (whoever reaches it is root on its machine): set SANDBOXD_DOCKER_CA, "
		"SANDBOXD_DOCKER_CERT and SANDBOXD_DOCKER_KEY, or SANDBOXD_DOCKER_INSECURE=1");
	env_set("SANDBOXD_DOCKER_CA", "/etc/sandboxd/ca.pem");
	accepted("SANDBOXD_DOCKER_HOST", "tcp://docker:2376", &c);
	env_set("SANDBOXD_DOCKER_CA", "");
	env_set("SANDBOXD_DOCKER_INSECURE", "1");
	accepted("SANDBOXD_DOCKER_HOST", "tcp://docker:2375", &c);
	assert_int_equal(c.docker_insecure, 1);
	refused("SANDBOXD_DOCKER_INSECURE", "yes",
		"SANDBOXD_DOCKER_INSECURE must be an integer between 0 and 1");
}

/* The engines (engine.h): the own one's name (SANDBOXD_INSTANCE by default) and
 * SANDBOXD_DOCKER_HOSTS, checked entry by entry. */
/* Several hosts: a relay URL of an address literal and the key's file, both or neither. */
static void test_relay(void **state)
{
	struct config c;

	accepted("SANDBOXD_WORKERS", "4", &c);
	assert_string_equal(c.relay_url, "");
	assert_string_equal(c.relay_key_file, "");
	refused("SANDBOXD_RELAY_URL", "http://10.0.0.2:8443",
		"SANDBOXD_RELAY_URL and SANDBOXD_RELAY_KEY_FILE go together: set both (several "
		"hosts) or neither");
	accepted("SANDBOXD_RELAY_KEY_FILE", "/etc/sandboxd/relay.key", &c);
	assert_string_equal(c.relay_url, "http://10.0.0.2:8443");
	accepted("SANDBOXD_RELAY_URL", "https://[2001:db8::2]:8443/", &c);
	assert_string_equal(c.relay_url, "https://[2001:db8::2]:8443");   /* the slash trimmed */
	refused("SANDBOXD_RELAY_URL", "http://host-b.example:8443", "SANDBOXD_RELAY_URL: a relay "
		"URL names an IP address (IPv6 in brackets) and optionally a port, and no path");
	refused("SANDBOXD_RELAY_URL", "tcp://10.0.0.2:8443",
		"SANDBOXD_RELAY_URL: a relay URL starts with http:// or https://");
	refused("SANDBOXD_RELAY_URL", "http://10.0.0.2:8443/relay", "SANDBOXD_RELAY_URL: a relay "
		"URL names an IP address (IPv6 in brackets) and optionally a port, and no path");
	refused("SANDBOXD_RELAY_URL", long_value("http://10.0.0.2:8443/", 81),
		"SANDBOXD_RELAY_URL is longer than 80 characters");
	env_set("SANDBOXD_RELAY_URL", "http://10.0.0.2:8443");
	refused("SANDBOXD_RELAY_KEY_FILE", "relay.key",
		"SANDBOXD_RELAY_KEY_FILE must be an absolute path");
	env_set("SANDBOXD_RELAY_URL", "");
	refused("SANDBOXD_RELAY_KEY_FILE", "/etc/sandboxd/relay.key",
		"SANDBOXD_RELAY_URL and SANDBOXD_RELAY_KEY_FILE go together: set both (several "
		"hosts) or neither");
}

static void test_engines(void **state)
{
	struct config c;

	accepted("SANDBOXD_INSTANCE", "prod-1", &c);
	assert_string_equal(c.engine_name, "prod-1");
	assert_int_equal(c.engine_max, 1000);
	assert_int_equal(c.engine_grace, 300);
	accepted("SANDBOXD_ENGINE_NAME", "host-a", &c);
	assert_string_equal(c.engine_name, "host-a");
	refused("SANDBOXD_ENGINE_NAME", "Host A", "SANDBOXD_ENGINE_NAME must be 1 to 63 of "
		"[a-z0-9._-], starting with a letter or digit (by default SANDBOXD_INSTANCE)");
	env_set("SANDBOXD_ENGINE_NAME", "");
	refused("SANDBOXD_DOCKER_HOSTS", "b=tcp://10.0.0.2:2376, c=unix:///run/c.sock",
		"SANDBOXD_DOCKER_HOSTS: engine b is plain tcp:// (whoever reaches it is root on its "
		"machine): set SANDBOXD_DOCKER_CA, SANDBOXD_DOCKER_CERT and SANDBOXD_DOCKER_KEY, or "
		"SANDBOXD_DOCKER_INSECURE=1");
	env_set("SANDBOXD_DOCKER_INSECURE", "1");
	accepted("SANDBOXD_DOCKER_HOSTS", "b=tcp://10.0.0.2:2376, c=unix:///run/c.sock", &c);
	refused("SANDBOXD_DOCKER_HOSTS", "b=tcp://10.0.0.2", "SANDBOXD_DOCKER_HOSTS: engine b: "
		"'tcp://10.0.0.2' must be unix:///path, tcp://host:port or https://host:port");
	refused("SANDBOXD_DOCKER_HOSTS", "tcp://10.0.0.2:2376",
		"SANDBOXD_DOCKER_HOSTS: 'tcp://10.0.0.2:2376' is not name=url");
	refused("SANDBOXD_DOCKER_HOSTS", "b=unix:///a.sock,b=unix:///b.sock",
		"SANDBOXD_DOCKER_HOSTS: the engine name b is used twice");
	refused("SANDBOXD_DOCKER_HOSTS", "prod-1=unix:///a.sock",
		"SANDBOXD_DOCKER_HOSTS: prod-1 is the host's own engine's name (SANDBOXD_ENGINE_NAME)");
	refused("SANDBOXD_DOCKER_HOSTS", "B=unix:///a.sock", "SANDBOXD_DOCKER_HOSTS: the engine "
		"name 'B' must be 1 to 63 of [a-z0-9._-], starting with a letter or digit");
	refused("SANDBOXD_DOCKER_HOSTS", "c=https://c.example:2376", "SANDBOXD_DOCKER_HOSTS: engine c "
		"is https:// and needs SANDBOXD_DOCKER_CA, SANDBOXD_DOCKER_CERT and SANDBOXD_DOCKER_KEY");
	env_set("SANDBOXD_DOCKER_HOSTS", "");
	/* An instance that is no engine name gives one (it never had a rule of its own). */
	accepted("SANDBOXD_INSTANCE", "_Prod Stack", &c);
	assert_string_equal(c.engine_name, "e_prod-stack");
	refused("SANDBOXD_ENGINE_GRACE", "1", "SANDBOXD_ENGINE_GRACE must be an integer between 5 and 86400");
}

static void test_log_level(void **state)
{
	struct config c;
	const char *msg = "SANDBOXD_LOG_LEVEL must be debug, info, warn or error";

	accepted("SANDBOXD_LOG_LEVEL", "debug", &c);
	assert_int_equal(c.log_level, LOG_DEBUG);
	accepted("SANDBOXD_LOG_LEVEL", "info", &c);
	assert_int_equal(c.log_level, LOG_INFO);
	accepted("SANDBOXD_LOG_LEVEL", "warn", &c);
	assert_int_equal(c.log_level, LOG_WARN);
	accepted("SANDBOXD_LOG_LEVEL", "error", &c);
	assert_int_equal(c.log_level, LOG_ERROR);
	refused("SANDBOXD_LOG_LEVEL", "verbose", msg);
	refused("SANDBOXD_LOG_LEVEL", "INFO", msg);
	refused("SANDBOXD_LOG_LEVEL", "warning", msg);
	refused("SANDBOXD_LOG_LEVEL", "1", msg);
	refused("SANDBOXD_LOG_LEVEL", long_value("x", 16),
		"SANDBOXD_LOG_LEVEL is longer than 15 characters");
}

/* Every numeric setting: its bounds accepted (and stored, times its unit), one past each
 * bound and anything but plain decimal digits refused with the same message naming both. */
#define FIELD(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)
static const struct {
	const char *name;
	long long min, max, unit;
	size_t off, size;
} numeric[] = {
	{ "SANDBOXD_WORKERS", 1, 1024, 1, FIELD(workers) },
	{ "SANDBOXD_GIT_WORKERS", 1, 1024, 1, FIELD(git_workers) },
	{ "SANDBOXD_IMAGE_PULL", 0, 1, 1, FIELD(image_pull) },
	{ "SANDBOXD_IDLE_TIMEOUT", 5, 86400, 1, FIELD(idle_timeout) },
	{ "SANDBOXD_REAPER_INTERVAL", 1, 3600, 1, FIELD(reaper_interval) },
	{ "SANDBOXD_EPHEMERAL_TTL", 1, 315360000, 1, FIELD(ephemeral_ttl) },
	{ "SANDBOXD_START_TIMEOUT", 5, 3600, 1, FIELD(start_timeout) },
	{ "SANDBOXD_MAX_SANDBOXES", 1, 10000, 1, FIELD(max_sandboxes) },
	{ "SANDBOXD_SANDBOX_MEMORY_MB", 64, 1 << 20, 1 << 20, FIELD(sandbox_memory) },
	{ "SANDBOXD_SANDBOX_CPUS", 1, 256, 1, FIELD(sandbox_cpus) },
	{ "SANDBOXD_SANDBOX_PIDS", 16, 1 << 20, 1, FIELD(sandbox_pids) },
	{ "SANDBOXD_SANDBOX_UID", 1, 2147483646, 1, FIELD(sandbox_uid) },
	{ "SANDBOXD_FILE_LIMIT", 1, 1 << 30, 1, FIELD(file_limit) },
	{ "SANDBOXD_GIT_TIMEOUT", 10, 86400, 1, FIELD(git_timeout) },
	{ "SANDBOXD_GIT_BODY_STALL", 1, 3600, 1, FIELD(git_body_stall) },
	{ "SANDBOXD_GIT_BODY_GRACE", 1, 3600, 1, FIELD(git_body_grace) },
	{ "SANDBOXD_GIT_BODY_MIN_RATE", 0, 1 << 30, 1, FIELD(git_body_min_rate) },
	{ "SANDBOXD_BODY_LIMIT", 1024, 64 << 20, 1, FIELD(body_limit) },
	{ "SANDBOXD_EXECS_PER_SANDBOX", 1, 1024, 1, FIELD(execs_per_sandbox) },
	{ "SANDBOXD_EXECS_PER_ACCOUNT", 1, 65536, 1, FIELD(execs_per_account) },
	{ "SANDBOXD_PARKED_PER_SANDBOX", 1, 1024, 1, FIELD(parked_per_sandbox) },
	{ "SANDBOXD_PARKED_PER_ACCOUNT", 1, 65536, 1, FIELD(parked_per_account) },
	{ "SANDBOXD_HOLDER_PARKED", 1, 65536, 1, FIELD(holder_parked) },
	{ "SANDBOXD_PARK_MEMORY", 0, 64 << 20, 1, FIELD(park_memory) },
	{ "SANDBOXD_CLONE_TIMEOUT", 10, 86400, 1, FIELD(clone_timeout) },
	{ "SANDBOXD_CLONE_LFS_TIMEOUT", 10, 86400, 1, FIELD(clone_lfs_timeout) },
};

/* The stored value: an int, or a 64-bit size_t or int64_t (both below 2^63 here). */
static long long field(const struct config *c, size_t off, size_t size)
{
	int i;
	int64_t l;

	if (size == sizeof(i)) {
		memcpy(&i, (const char *)c + off, sizeof(i));
		return i;
	}
	assert_int_equal(size, sizeof(l));
	memcpy(&l, (const char *)c + off, sizeof(l));
	return l;
}

static void test_numeric(void **state)
{
	static const char *bad[] = {
		"x16", "16x", "+16", " 16", "16 ", "-0", "0x10", "1e2", "1.5", "",
		"99999999999999999999", "18446744073709551617", "9223372036854775808",
	};
	char v[32], msg[160];
	struct config c;

	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++) {
		const char *name = numeric[i].name;
		long long ends[2] = { numeric[i].min, numeric[i].max };

		setup(state);
		for (int k = 0; k < 2; k++) {
			snprintf(v, sizeof(v), "%lld", ends[k]);
			accepted(name, v, &c);
			if (field(&c, numeric[i].off, numeric[i].size) != ends[k] * numeric[i].unit)
				fail_msg("%s=%s stored as %lld", name, v,
					 field(&c, numeric[i].off, numeric[i].size));
		}
		/* leading zeros are still decimal */
		snprintf(v, sizeof(v), "00%lld", numeric[i].max);
		accepted(name, v, &c);
		snprintf(msg, sizeof(msg), "%s must be an integer between %lld and %lld", name,
			 numeric[i].min, numeric[i].max);
		snprintf(v, sizeof(v), "%lld", numeric[i].min - 1);
		refused(name, v, msg);
		snprintf(v, sizeof(v), "%lld", numeric[i].max + 1);
		refused(name, v, msg);
		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			if (!bad[b][0])
				continue; /* empty is the default (test_empty_values_are_defaults) */
			refused(name, bad[b], msg);
		}
	}
}

/* git's own pool's socket, by default beside the main one (its count: test_numeric). */
static void test_git_workers(void **state)
{
	struct config c;

	accepted("SANDBOXD_SOCKET", "/run/x/socket", &c);
	assert_string_equal(c.git_socket_path, "/run/x/socket-git");
	accepted("SANDBOXD_GIT_SOCKET", "/run/y/git.sock", &c);
	assert_string_equal(c.git_socket_path, "/run/y/git.sock");
	refused("SANDBOXD_GIT_SOCKET", "git.sock", "SANDBOXD_GIT_SOCKET must be an absolute path");
	refused("SANDBOXD_GIT_SOCKET", "/run/x/socket",
		"SANDBOXD_GIT_SOCKET must differ from SANDBOXD_SOCKET");
}

/* One account's pushes in progress leave a git worker to everybody else: fewer than the
 * git workers, 2 by default, less when the git workers are few (test_numeric can't: its
 * upper bound depends on another setting). */
static void test_git_pushes_per_account(void **state)
{
	struct config c;

	accepted("SANDBOXD_GIT_WORKERS", "2", &c);
	assert_int_equal(c.git_pushes_per_account, 1);
	accepted("SANDBOXD_GIT_WORKERS", "1", &c);
	assert_int_equal(c.git_pushes_per_account, 1);
	accepted("SANDBOXD_GIT_WORKERS", "16", &c);
	assert_int_equal(c.git_pushes_per_account, 2);
	accepted("SANDBOXD_GIT_PUSHES_PER_ACCOUNT", "15", &c);
	assert_int_equal(c.git_pushes_per_account, 15);
	refused("SANDBOXD_GIT_PUSHES_PER_ACCOUNT", "16",
		"SANDBOXD_GIT_PUSHES_PER_ACCOUNT (16) must be less than SANDBOXD_GIT_WORKERS (16), "
		"so that one account's pushes never hold every git worker");
	refused("SANDBOXD_GIT_PUSHES_PER_ACCOUNT", "0",
		"SANDBOXD_GIT_PUSHES_PER_ACCOUNT must be an integer between 1 and 1024");
	refused("SANDBOXD_GIT_PUSHES_PER_ACCOUNT", "1025",
		"SANDBOXD_GIT_PUSHES_PER_ACCOUNT must be an integer between 1 and 1024");
	env_set("SANDBOXD_GIT_WORKERS", "4");
	refused("SANDBOXD_GIT_PUSHES_PER_ACCOUNT", "4",
		"SANDBOXD_GIT_PUSHES_PER_ACCOUNT (4) must be less than SANDBOXD_GIT_WORKERS (4), "
		"so that one account's pushes never hold every git worker");
	accepted("SANDBOXD_GIT_PUSHES_PER_ACCOUNT", "3", &c);
	assert_int_equal(c.git_pushes_per_account, 3);
}

static void test_git(void **state)
{
	struct config c;
	const char *msg = "SANDBOXD_GIT and SANDBOXD_HOOKS_DIR must be absolute paths";

	accepted("SANDBOXD_GIT", "/opt/git/bin/git", &c);
	assert_string_equal(c.git_bin, "/opt/git/bin/git");
	accepted("SANDBOXD_HOOKS_DIR", "/srv/hooks", &c);
	assert_string_equal(c.hooks_dir, "/srv/hooks");
	refused("SANDBOXD_GIT", "git", msg);
	setup(NULL);
	refused("SANDBOXD_HOOKS_DIR", "hooks", msg);
}

/* The sandboxes' Docker network and the signing key file (hardening, issue 7). */
static void test_network_and_key_file(void **state)
{
	struct config c;
	struct err e;

	assert_int_equal(load(&c, &e), 0);
	assert_string_equal(c.sandbox_network, "bridge");
	assert_string_equal(c.signing_key_file, "");
	accepted("SANDBOXD_SANDBOX_NETWORK", "sandboxd-local_1.a", &c);
	assert_string_equal(c.sandbox_network, "sandboxd-local_1.a");
	accepted("SANDBOXD_SIGNING_KEY_FILE", "/etc/sandboxd/signing.pem", &c);
	assert_string_equal(c.signing_key_file, "/etc/sandboxd/signing.pem");
	refused("SANDBOXD_SIGNING_KEY_FILE", "signing.pem",
		"SANDBOXD_SIGNING_KEY_FILE must be an absolute path");
	env_set("SANDBOXD_SIGNING_KEY_FILE", NULL);
	static const char *const bad[] = { "host", "none", "a b", "-x", "a/b", "x;y" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused("SANDBOXD_SANDBOX_NETWORK", bad[i],
			"SANDBOXD_SANDBOX_NETWORK must name a Docker network (letters, digits, "
			"'_', '.', '-'; not host or none)");
}

/* SANDBOXD_EGRESS and the network of each egress a create may ask for: the deployment's
 * own for its mode, <network>-<mode> for a narrower one, nothing wider. */
/* The caps of issue 32 A.2 (decision 0085): their defaults, and their names in a refusal. */
static void test_exec_caps(void **state)
{
	struct config c;
	struct err e;

	assert_int_equal(load(&c, &e), 0);
	assert_int_equal(c.execs_per_sandbox, 16);
	assert_int_equal(c.execs_per_account, 64);
	assert_int_equal(c.parked_per_sandbox, 12);
	assert_int_equal(c.parked_per_account, 32);
	assert_int_equal(c.holder_parked, 1024);
	assert_int_equal(c.park_memory, 65536);
	assert_int_equal(c.clone_timeout, 1800);
	assert_int_equal(c.clone_lfs_timeout, 600);
	refused("SANDBOXD_EXECS_PER_SANDBOX", "0",
		"SANDBOXD_EXECS_PER_SANDBOX must be an integer between 1 and 1024");
	env_set("SANDBOXD_EXECS_PER_SANDBOX", NULL);
	refused("SANDBOXD_EXECS_PER_ACCOUNT", "many",
		"SANDBOXD_EXECS_PER_ACCOUNT must be an integer between 1 and 65536");
	env_set("SANDBOXD_EXECS_PER_ACCOUNT", NULL);
	refused("SANDBOXD_CLONE_LFS_TIMEOUT", "5",
		"SANDBOXD_CLONE_LFS_TIMEOUT must be an integer between 10 and 86400");
	env_set("SANDBOXD_CLONE_LFS_TIMEOUT", NULL);
	accepted("SANDBOXD_EXECS_PER_SANDBOX", "3", &c);
	assert_int_equal(c.execs_per_sandbox, 3);
	env_set("SANDBOXD_EXECS_PER_SANDBOX", NULL);
	accepted("SANDBOXD_PARK_MEMORY", "0", &c);
	assert_int_equal(c.park_memory, 0);
	env_set("SANDBOXD_PARK_MEMORY", NULL);
}

static void test_egress(void **state)
{
	struct config c;
	struct err e;
	char net[CONFIG_NETWORK_MAX];

	assert_int_equal(load(&c, &e), 0);
	assert_string_equal(c.egress, "open");
	accepted("SANDBOXD_SANDBOX_NETWORK", "sbx", &c);
	assert_int_equal(config_egress_network(&c, "open", net, &e), 0);
	assert_string_equal(net, "sbx");
	assert_int_equal(config_egress_network(&c, "web", net, &e), 0);
	assert_string_equal(net, "sbx-web");
	assert_int_equal(config_egress_network(&c, "none", net, &e), 0);
	assert_string_equal(net, "sbx-none");
	accepted("SANDBOXD_EGRESS", "web", &c);
	assert_int_equal(config_egress_network(&c, "web", net, &e), 0);
	assert_string_equal(net, "sbx");
	assert_int_equal(config_egress_network(&c, "open", net, &e), ERR_INVALID);
	assert_int_equal(config_egress_network(&c, "all", net, &e), ERR_INVALID);
	assert_int_equal(config_egress_rank("none"), 0);
	assert_int_equal(config_egress_rank("Open"), -1);
	refused("SANDBOXD_EGRESS", "none", "SANDBOXD_EGRESS must be open or web");
	refused("SANDBOXD_EGRESS", "all", "SANDBOXD_EGRESS must be open or web");
	/* Room for "-none" after the longest network name. */
	char longname[CONFIG_NETWORK_MAX];
	memset(longname, 'n', CONFIG_NETWORK_MAX - 6);
	longname[CONFIG_NETWORK_MAX - 6] = 0;
	env_set("SANDBOXD_EGRESS", NULL);
	accepted("SANDBOXD_SANDBOX_NETWORK", longname, &c);
	assert_int_equal(config_egress_network(&c, "none", net, &e), 0);
	assert_int_equal(strlen(net), CONFIG_NETWORK_MAX - 1);
}

/* SANDBOXD_IMAGES: name=image entries, the first the default; SANDBOXD_RUNNER_IMAGE is
 * refused rather than ignored (it would run another image than the operator named). */
static void test_images(void **state)
{
	struct config c;
	static const char shape[] = "' is not name=image (a name of lower-case letters, digits, "
				    "'.', '_', '-', at most 32; an image reference)";
	char msg[256];

	assert_int_equal(load(&c, &(struct err){ 0 }), 0);
	assert_int_equal(c.nimages, 2);
	assert_string_equal(c.images[0].name, "standard");
	assert_string_equal(config_default_image(&c), "sandboxd-runner:standard");
	assert_string_equal(config_image_find(&c, "minimal")->ref, "sandboxd-runner:minimal");
	assert_null(config_image_find(&c, "bookworm"));
	accepted("SANDBOXD_IMAGES", "py=registry.local:5000/team/py:3.12,min=sandboxd-runner:minimal", &c);
	assert_int_equal(c.nimages, 2);
	assert_string_equal(config_default_image(&c), "registry.local:5000/team/py:3.12");
	assert_string_equal(c.images[1].name, "min");
	accepted("SANDBOXD_IMAGES", "only=x,", &c);   /* a trailing comma ends the list */
	assert_int_equal(c.nimages, 1);
	static const char *const bad[] = { "standard", "=x", "a=", "A=x", "-a=x", "a b=x",
					   "a=x y", "a=b=c", "a=../x", "a=/x", "a=x//y", "a=x?y",
					   ",a=x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = strcspn(bad[i], ",");
		snprintf(msg, sizeof(msg), "SANDBOXD_IMAGES: '%.*s%s", (int)n, bad[i], shape);
		if (bad[i][0] == ',')
			snprintf(msg, sizeof(msg), "SANDBOXD_IMAGES: '%s", shape);
		refused("SANDBOXD_IMAGES", bad[i], msg);
	}
	refused("SANDBOXD_IMAGES", "a=x,b=y,a=z", "SANDBOXD_IMAGES names 'a' twice");
	refused("SANDBOXD_IMAGES", "a=x,b=y,c=z,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=1,o=1,"
		"p=1,q=1", "SANDBOXD_IMAGES names more than 16 images");
	accepted("SANDBOXD_IMAGES", "abcdefghijklmnopqrstuvwxyz012345=x", &c);
	env_set("SANDBOXD_IMAGES", NULL);
	refused("SANDBOXD_RUNNER_IMAGE", "sandboxd-runner:bookworm",
		"SANDBOXD_RUNNER_IMAGE is retired: name the images in SANDBOXD_IMAGES "
		"(name=image,…; the first is the default)");
}

static void test_preview_domain(void **state)
{
	struct config c;
	struct err e;
	static const char msg[] = "SANDBOXD_PREVIEW_DOMAIN must be a DNS name (letters, digits "
				  "and '-' in labels of at most 63, joined by dots)";

	assert_int_equal(load(&c, &e), 0);
	assert_string_equal(c.preview_domain, "preview.localhost");
	accepted("SANDBOXD_PREVIEW_DOMAIN", "Preview.Example-1.com", &c);
	assert_string_equal(c.preview_domain, "preview.example-1.com");
	accepted("SANDBOXD_PREVIEW_DOMAIN", "localhost", &c);
	assert_string_equal(c.preview_domain, "localhost");
	static const char *const bad[] = { ".example.com", "example.com.", "a..b", "a b.c",
					   "a_b.c", "*.example.com", "a:80" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused("SANDBOXD_PREVIEW_DOMAIN", bad[i], msg);
	refused("SANDBOXD_PREVIEW_DOMAIN", long_value("x.", 66), msg);
	accepted("SANDBOXD_PREVIEW_DOMAIN", long_value("x.", 65), &c);
}

static void test_string_bounds(void **state)
{
	static const struct {
		const char *name;
		const char *prefix;
		size_t max;
	} v[] = {
		{ "SANDBOXD_DATABASE_URL", "postgresql://", 1023 },
		{ "SANDBOXD_SOCKET_GROUP", "g", 63 },
		{ "SANDBOXD_PUBLIC_URL", "https://", 255 },
		{ "SANDBOXD_DOCKER_HOST", "unix:///", 255 },
		{ "SANDBOXD_PID_FILE", "/", 255 },
		{ "SANDBOXD_GIT", "/", 255 },
		{ "SANDBOXD_HOOKS_DIR", "/", 255 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct config c;
		char msg[128];

		setup(NULL);
		accepted(v[i].name, long_value(v[i].prefix, v[i].max), &c);
		snprintf(msg, sizeof(msg), "%s is longer than %zu characters", v[i].name,
			 v[i].max);
		refused(v[i].name, long_value(v[i].prefix, v[i].max + 1), msg);
	}
}

/* Settings are read and checked in one order: of two bad values, the same one is reported
 * first (a too-long value is refused as it is read, a bad shape once its group is read). */
static void test_first_error_wins(void **state)
{
	struct config c;
	struct err e;

	env_set("SANDBOXD_SOCKET", "relative.sock");
	env_set("SANDBOXD_LOG_LEVEL", "loud");
	assert_int_equal(load(&c, &e), ERR_INVALID);
	assert_string_equal(e.msg, "SANDBOXD_SOCKET must be an absolute path");
	env_set("SANDBOXD_LOG_LEVEL", "much-too-long-a-level");
	assert_int_equal(load(&c, &e), ERR_INVALID);
	assert_string_equal(e.msg, "SANDBOXD_LOG_LEVEL is longer than 15 characters");
	env_set("SANDBOXD_LOG_LEVEL", NULL);
	env_set("SANDBOXD_SOCKET", NULL);
	env_set("SANDBOXD_GIT", "git");
	env_set("SANDBOXD_FILE_LIMIT", "0");
	assert_int_equal(load(&c, &e), ERR_INVALID);
	assert_non_null(strstr(e.msg, "SANDBOXD_FILE_LIMIT"));
	env_set("SANDBOXD_FILE_LIMIT", NULL);
	env_set("SANDBOXD_GIT_TIMEOUT", "1");
	assert_int_equal(load(&c, &e), ERR_INVALID);
	assert_string_equal(e.msg, "SANDBOXD_GIT and SANDBOXD_HOOKS_DIR must be absolute paths");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, setup),
		cmocka_unit_test_setup(test_empty_values_are_defaults, setup),
		cmocka_unit_test_setup(test_all_set, setup),
		cmocka_unit_test_setup(test_database_url_required, setup),
		cmocka_unit_test_setup(test_public_url, setup),
		cmocka_unit_test_setup(test_socket, setup),
		cmocka_unit_test_setup(test_holder, setup),
		cmocka_unit_test_setup(test_repos_dir, setup),
		cmocka_unit_test_setup(test_docker_host, setup),
		cmocka_unit_test_setup(test_engines, setup),
		cmocka_unit_test_setup(test_log_level, setup),
		cmocka_unit_test_setup(test_numeric, setup),
		cmocka_unit_test_setup(test_git, setup),
		cmocka_unit_test_setup(test_git_workers, setup),
		cmocka_unit_test_setup(test_git_pushes_per_account, setup),
		cmocka_unit_test_setup(test_string_bounds, setup),
		cmocka_unit_test_setup(test_network_and_key_file, setup),
		cmocka_unit_test_setup(test_public_url_needs_a_host, setup),
		cmocka_unit_test_setup(test_first_error_wins, setup),
		cmocka_unit_test_setup(test_preview_domain, setup),
		cmocka_unit_test_setup(test_images, setup),
		cmocka_unit_test_setup(test_exec_caps, setup),
		cmocka_unit_test_setup(test_egress, setup),
		cmocka_unit_test_setup(test_relay, setup),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
