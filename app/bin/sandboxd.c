/* sandboxd: the FastCGI server. Configuration comes from SANDBOXD_* variables only, so that
 * nothing secret is ever on a command line. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curl/curl.h>
#include "sandboxd/core/config.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/engine/hostaddr.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/daemon/master.h"
#include "sandboxd/http/relay_http.h"
#include "sandboxd/sandbox/secrets.h"
#include "sandboxd/common/banned.h"

static const char *env(const char *name)
{
	return getenv(name);
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct err e;

	if (argc > 1) {
		fprintf(stderr, strcmp(argv[1], "--help") == 0 ? "%s" : "sandboxd: unknown argument\n%s",
			"usage: sandboxd\n"
			"  Runs the FastCGI server in the foreground; settings come from SANDBOXD_*\n"
			"  environment variables (see deploy/sandboxd.env.example).\n"
			"  SIGTERM drains and exits 0; SIGHUP replaces the workers.\n");
		return strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	if (config_load(&cfg, env, &e)) {
		fprintf(stderr, "sandboxd: %s\n", e.msg);
		return 2;
	}
	log_set_level(cfg.log_level);
	/* Read once, before the fork and before anything serves: a key that others may read
	 * stops the start, as ssh does. */
	if (cfg.signing_key_file[0] && giturl_key_file_load(cfg.signing_key_file, &e)) {
		fprintf(stderr, "sandboxd: SANDBOXD_SIGNING_KEY_FILE: %s\n", e.msg);
		return 2;
	}
	if (cfg.secrets_key_file[0] && secrets_key_file_load(cfg.secrets_key_file, &e)) {
		fprintf(stderr, "sandboxd: SANDBOXD_SECRETS_KEY_FILE: %s\n", e.msg);
		return 2;
	}
	if (cfg.relay_key_file[0] && relay_http_key_load(cfg.relay_key_file, &e)) {
		fprintf(stderr, "sandboxd: SANDBOXD_RELAY_KEY_FILE: %s\n", e.msg);
		return 2;
	}
	/* Without its hooks git would take pushes unchecked and unaudited, and without
	 * post-receive every accepted ref would be audited as failed: refuse to start. */
	static const char *const hooks[] = { "pre-receive", "post-receive" };
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		char path[sizeof(cfg.hooks_dir) + 16];
		snprintf(path, sizeof(path), "%s/%s", cfg.hooks_dir, hooks[i]);
		if (access(path, X_OK)) {
			fprintf(stderr, "sandboxd: SANDBOXD_HOOKS_DIR: %s is not an executable file "
				"(%s); install sandboxd-hook under that name\n", path, strerror(errno));
			return 2;
		}
	}
	/* The sandboxes' git endpoint must be this host's (hostaddr.h): otherwise their clones
	 * and pushes, credentials in them, would leave by the default route. The service still
	 * serves REST and git; creates answer 503 until the address is back, and /healthz
	 * says why. */
	if (hostaddr_check(&cfg, &e))
		log_error("%s: sandbox creates answer 503 until it is", e.msg);
	/* Workers inherit this. Big blocks (a file, an exec's output) are mapped on their own
	 * and go back to the kernel when freed: a fixed threshold, because glibc's sliding one
	 * rises after the first big free and then keeps such blocks in the heap, where they
	 * stay resident. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 256 * 1024);
	/* Before forking: curl's global state is not safe to set up in several threads, and
	 * doing it once here means workers inherit it. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc = master_run(&cfg);
	curl_global_cleanup();
	return rc;
}
