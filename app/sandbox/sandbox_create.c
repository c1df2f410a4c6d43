/* sandbox_create.c: a new sandbox (sandbox.h, SPEC.md §4 "Create"), without HTTP. In the
 * order that makes crashes safe: the row (state starting) and its token are committed
 * before anything runs, under the creator's advisory lock (SANDBOX_LOCK_KEY); then the
 * container, labelled with the sandbox, its id recorded; then the clone's parameters put in
 * place and the container started; ready last. The reaper repairs whatever a crash leaves
 * between two steps. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <git2.h>
#include <openssl/crypto.h>
#include "sandboxd/sandbox/agent_client.h"
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/lib/clock.h"
#include "sandboxd/sandbox/container.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/engine.h"
#include "sandboxd/engine/hostaddr.h"
#include "sandboxd/engine/isolation.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/core/metrics.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/lib/randid.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/sandbox/sandbox.h"
#include "sandboxd/sandbox/scripts.h"
#include "sandboxd/sandbox/secrets.h"
#include "sandboxd/proto/tar.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/sandbox/warm.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

/* What one create carries from step to step. */
struct make {
	const struct sandbox_new *n;
	struct sandbox *s;
	char token[TOKEN_LEN + 1];
	char agent_key[SANDBOX_AGENT_KEY_HEX + 1]; /* its agent's key; cleansed with the token */
	int is_branch;
	unsigned uid;              /* the container's user (boxuser.h), for files put in it */
	int warm;                  /* the container came from the warm pool */
	int try_warm;              /* a warm container may serve it */
	int warm_only;             /* its engine has room for it only in a warm container */
	long started;              /* time(NULL) at the start: the start limit counts from it */
	struct timespec t0;        /* CLOCK_MONOTONIC at the start */
	int64_t at[5];             /* µs from t0 to the end of each step (lap), for the log */
	const char *why;           /* what the client reads when the container did not start */
};

/* Steps done up to i: the time they took, for the create's log line (make). */
static void lap(struct make *m, int i)
{
	int64_t now = clock_us_since(&m->t0);

	for (int k = 0; k <= i; k++)
		if (!m->at[k])
			m->at[k] = now;
}

/* The image it runs: the create's or the repository's choice, else the default. */
static const struct config_image *image_of(const struct sandbox_new *n)
{
	return n->image ? n->image : &n->cfg->images[0];
}

/* Commits what is done so far and opens a new transaction: sandbox steps must survive a
 * later failure of the same request (the row before the container, the failed state).
 * Seen by every other session at once, but without a WAL flush of their own: the request's
 * last commit (the ready state and the audit row, in full) flushes them with it, before the
 * client hears of the sandbox. A database crash before that loses at most rows whose
 * container, labelled with their id, the reconciler then removes as no live sandbox's. */
static int commit_now(struct db *db, struct err *e)
{
	int rc = db_commit_lazy(db, e);

	return rc ? rc : db_begin(db, e);
}

/* Resolves ref (NULL or "": the default branch) in the bare repository to a commit. *branch
 * is set when ref named a branch. ERR_NOTFOUND when it does not resolve. */
static int resolve(const struct config *cfg, const struct repo *repo, const char *ref,
		   char commit[41], int *branch, struct err *e)
{
	git_repository *g = NULL;
	git_object *obj = NULL, *peeled = NULL;
	char path[1024], spec[320];
	int rc = ERR_NOTFOUND;

	*branch = 0;
	snprintf(path, sizeof(path), "%s/%s/%s.git", cfg->repos_dir, repo->owner, repo->name);
	if (git_repository_open_bare(&g, path) < 0)
		return err_set(e, ERR_FAIL, "cannot open %s", path);
	/* Branch, then tag, then a full refname, then a commit id: nothing else of revparse's
	 * language (no ~, ^, @{…}, :path). */
	const char *forms[] = { "refs/heads/%s", "refs/tags/%s", "%s" };
	for (int i = 0; i < 3 && rc; i++) {
		int valid = 0;
		snprintf(spec, sizeof(spec), forms[i], ref);
		if (i == 2) {
			git_oid oid;
			size_t n = strlen(ref);
			int hex = n >= 4 && n <= 40 && hex_is(ref, n);
			if (strncmp(ref, "refs/", 5) == 0 &&
			    git_reference_name_is_valid(&valid, ref) == 0 && valid) {
				if (git_revparse_single(&obj, g, ref) < 0)
					continue;
			} else if (hex && git_oid_fromstrn(&oid, ref, n) == 0) {
				if (git_object_lookup_prefix(&obj, g, &oid, n, GIT_OBJECT_ANY) < 0)
					continue;
			} else {
				continue;
			}
		} else if (git_reference_name_is_valid(&valid, spec) < 0 || !valid ||
			   git_revparse_single(&obj, g, spec) < 0) {
			continue;
		}
		if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) == 0) {
			git_oid_tostr(commit, 41, git_object_id(peeled));
			*branch = i == 0;
			rc = 0;
		}
		git_object_free(peeled);
		git_object_free(obj);
		peeled = obj = NULL;
	}
	git_repository_free(g);
	if (rc)
		err_set(e, ERR_NOTFOUND, "unknown ref");
	return rc;
}

/* The limit holds under concurrent creates: the account's row is locked until the new
 * sandbox's row commits (step 1), so a second create counts it. */
static int reserve(const struct sandbox_new *n, struct err *e)
{
	int64_t running = 0;
	int rc, code = 0;
	PGresult *res;

	if ((rc = db_run(n->db, e, "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", 1,
			 n->caller->account_id)))
		return rc;
	res = db_exec(n->db, e, &code,
		      "SELECT count(*) FROM sandboxes WHERE account_id = $1"
		      "   AND state IN ('starting', 'ready')", 1, n->caller->account_id);
	if (!res)
		return code;
	rc = num_parse(db_val(res, 0, 0), 0, INT64_MAX, &running);
	PQclear(res);
	if (rc)
		return err_set(e, ERR_FAIL, "cannot count the account's sandboxes");
	if (running >= n->cfg->max_sandboxes)
		return err_set(e, ERR_LIMIT, "sandbox limit reached");
	return 0;
}

/* 1. The row and its token, committed before anything runs. */
static int insert_rows(struct make *m, struct err *e)
{
	const struct sandbox_new *n = m->n;
	char hash[TOKEN_HASH_LEN + 1], secs[24];
	int rc;

	token_hash(m->token, TOKEN_LEN, hash);
	snprintf(secs, sizeof(secs), "%d", n->cfg->idle_timeout);
	/* What the engine is told (container.c, and claim_warm's update): its own or the
	 * defaults. */
	char cpus[24], mem[24], disk[24];
	snprintf(cpus, sizeof(cpus), "%lld", (long long)(n->limits.nano_cpus ? n->limits.nano_cpus
			 : (int64_t)n->cfg->sandbox_cpus * 1000000000));
	snprintf(mem, sizeof(mem), "%lld", (long long)(n->limits.memory ? n->limits.memory
									  : n->cfg->sandbox_memory));
	snprintf(disk, sizeof(disk), "%lld", (long long)(n->limits.disk ? n->limits.disk
									 : n->cfg->sandbox_disk));
	/* Its engine, under the placement lock that this commit ends (engine.h). One of another
	 * host's is that host's to make the row and container on: no row here (the caller
	 * relays the create, and the rollback ends the locks). */
	rc = engine_place(n->db, image_of(n)->ref, m->try_warm, n->here_only, n->gvisor,
			  m->s->engine, m->s->host, e);
	if (rc < 0)
		return rc;
	if (m->s->host[0])
		return err_set(e, ERR_RELAY, "the sandbox's engine %s is the host at %s's",
			       m->s->engine, m->s->host);
	m->warm_only = rc == 1;
	/* A gVisor sandbox's runtime, which the engine must have, before any row: refused by
	 * name, never made under another runtime (isolation.h). */
	if (n->gvisor && ((rc = engine_use(n->db, m->s->engine, e)) ||
			  (rc = isolation_runtime(n->db, m->s->engine, 1, m->s->runtime, e))))
		return rc;
	/* Sealed for the workers that will mask it (exec.h: exec_token), when there is a key. */
	char *sealed = NULL;
	if (secrets_configured() &&
	    (rc = secrets_seal(n->pool, m->s->id, SANDBOX_TOKEN_SEALED_AS, m->token, TOKEN_LEN,
			       &sealed, e)))
		return rc;
	rc = db_run(n->db, e,
		    "INSERT INTO sandboxes (id, repository_id, account_id, ref, commit_sha, idle_stop_at,"
		    "                       agent_key, secrets, image, egress, network, nano_cpus,"
		    "                       memory_bytes, disk_bytes, engine, token_sealed, isolation)"
		    " VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::int), $7,"
		    "         coalesce($8::text[], '{}'), $9, $10, $11, $12, $13, $14, $15, $16, $17)",
		    17, m->s->id, n->repo->id, n->caller->account_id, m->s->ref, m->s->commit, secs,
		    m->agent_key, n->secrets, image_of(n)->name, m->s->egress, m->s->network, cpus,
		    mem, disk, m->s->engine, sealed, m->s->isolation);
	if (!rc)
		rc = db_run(n->db, e,
			    "INSERT INTO tokens (account_id, kind, scope, repository_id, sandbox_id, hash,"
			    "                    note, expires_at)"
			    " VALUES ($1, 'sandbox', 'write', $2, $3, $4, 'sandbox git credential',"
			    "         now() + interval '24 hours')",
			    4, n->caller->account_id, n->repo->id, m->s->id, hash);
	return rc ? rc : commit_now(n->db, e);
}

/* Creates the container, pulling the image once when it is missing and pulling is on
 * (there may be no registry): the first sandbox on a host waits for the pull, within the
 * start limit; workers that pull at once are one pull for Docker. */
static int create_container(struct make *m, const struct boxuser *bu, const char **env,
			    char *cid, int *enforced, struct err *e)
{
	const struct config *cfg = m->n->cfg;
	struct sandbox_limits lim = m->n->limits;
	const char *image = lim.image = image_of(m->n)->ref;
	lim.network = m->s->network;
	lim.runtime = m->n->gvisor ? m->s->runtime : NULL;
	long left = (long)cfg->start_timeout * 1000;
	int rc = sandbox_container_new(cfg, bu, m->s->id, env, &lim,
				       left < BOX_CALL_MS ? left : BOX_CALL_MS, cid, enforced, e);

	/* The engine refuses what it cannot give (more CPUs than it has): the client reads
	 * its words. */
	if (rc == ERR_INVALID && (m->n->limits.memory || m->n->limits.nano_cpus))
		m->why = pool_printf(m->n->pool, "the engine refused the sandbox's limits: %s",
				     e->msg);
	if (rc != ERR_NOIMAGE)
		return rc;
	if (!cfg->image_pull) {
		m->why = pool_printf(m->n->pool, "the sandbox image %s is missing and pulling is off",
				     image);
		return err_set(e, ERR_NOTFOUND, "%s", m->why ? m->why : "no image");
	}
	left -= ((long)time(NULL) - m->started) * 1000;
	log_info("sandbox %s: pulling the image %s", m->s->id, image);
	if ((rc = box_image_pull(image, left > 1000 ? left : 1000, e))) {
		m->why = pool_printf(m->n->pool, "the sandbox image %s is missing and could not be "
				     "pulled: %s", image, e->msg);
		return err_set(e, ERR_NOTFOUND, "%s", m->why ? m->why : "no image");
	}
	return sandbox_container_new(cfg, bu, m->s->id, env, &lim, BOX_CALL_MS, cid, enforced, e);
}

/* 2. The container, labelled with the sandbox, hardened; its id recorded, and its user's
 * home: which user the engine allows decides the container's, asked once here, so the
 * row says what the container runs as. */
static int make_container(struct make *m, struct err *e)
{
	const struct sandbox_new *n = m->n;
	char cid[BOX_ID_MAX] = "";
	struct boxuser bu;
	const char **env;
	size_t nenv;
	int rc, enforced = 0;

	/* Under gVisor root inside is the sentry's, whatever the engine maps (boxuser.h). */
	if (n->gvisor)
		boxuser_for(n->cfg, "runsc", &bu);
	if ((!n->gvisor && (rc = boxuser_get(n->cfg, &bu, e))) ||
	    (rc = sandbox_env(n->pool, m->s, pool_printf(n->pool, "%s/%s", n->repo->owner,
							 n->repo->name), 0, &env, &nenv, e)) ||
	    (rc = create_container(m, &bu, env, cid, &enforced, e)))
		return rc;
	m->uid = bu.uid;
	if (str_copy(m->s->container_id, sizeof(m->s->container_id), cid))
		return err_set(e, ERR_FAIL, "container id %.12s… is too long", cid);
	rc = db_run(n->db, e, "UPDATE sandboxes SET container_id = $2, disk_enforced = $3,"
			      " home = $4 WHERE id = $1", 4, m->s->id, cid, enforced ? "true" : "false",
		    bu.home);
	return rc ? rc : commit_now(n->db, e);
}

/* The clone's parameters into f, one per line; a value with a newline could forge the
 * next. The last is the agent's key, which clone.sh writes to a file of its own for the
 * agent. */
static int clone_params(struct make *m, struct buf *f, struct err *e)
{
	const struct sandbox_new *n = m->n;
	const struct account *a = &n->caller->account;
	char *name = pool_strdup(n->pool, a->has_name && a->name[0] ? a->name : a->login);
	char *email = a->has_email && a->email[0]
			      ? pool_strdup(n->pool, a->email)
			      : pool_printf(n->pool, "%s@users.noreply.sandboxd", a->login);

	if (!name || !email)
		return err_set(e, ERR_NOMEM, "out of memory");
	for (char *p = name; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	for (char *p = email; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	char depth[24] = "";

	if (n->depth > 0)
		snprintf(depth, sizeof(depth), "%lld", (long long)n->depth);
	if (buf_printf(f, "%s/%s/%s.git\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n",
		       n->cfg->sandbox_git_url, n->repo->owner, n->repo->name, m->token,
		       m->s->commit, m->is_branch ? m->s->ref : "", name, email, depth,
		       n->blobless ? "blob:none" : "", m->agent_key))
		return err_set(e, ERR_TOOBIG, "the clone's parameters are too long");
	return 0;
}

/* The parameters made and put into the container (the token leaves memory when the
 * create ends: a warm container that fails here leaves it for the cold start): on a cold
 * container's input, else as files by the archive API (sandbox_put_clone). */
static int hand_over(struct make *m, int cold, struct err *e)
{
	const char *how = "";
	struct buf f;
	int rc;

	buf_init(&f, 8192);
	rc = clone_params(m, &f, e);
	if (!rc && !(rc = sandbox_put_clone(m->s->container_id, m->uid, f.data, f.len, !cold, &how,
					    e)))
		snprintf(m->s->handed, sizeof(m->s->handed), "%s", how);
	/* gVisor keeps /tmp in its own memory and caches the rest: files the archive API puts
	 * there never reach clone.sh (decision 0084). Its input is the only way in. */
	if (!rc && m->n->gvisor && strcmp(how, "stdin")) {
		m->why = "the clone's parameters could not be handed to the gVisor sandbox (its "
			 "input refused them)";
		rc = err_set(e, ERR_FAIL, "%s", m->why);
	}
	if (f.data)
		OPENSSL_cleanse(f.data, f.len);
	buf_release(&f);
	return rc;
}

/* Waits until cid runs, within the start limit. */
static int wait_running(struct make *m, const char *cid, struct err *e)
{
	int rc = 0;

	while (!rc) {
		struct box_state st;
		if ((rc = box_state(cid, &st, BOX_CALL_MS, e)))
			break;
		if (st.running) {
			memcpy(m->s->agent_ip, st.ip, sizeof(st.ip));
			break;
		}
		if (strcmp(st.status, "created") ||
		    (long)time(NULL) - m->started > m->n->cfg->start_timeout)
			rc = err_set(e, ERR_FAIL, "container is %s", st.status);
		else
			usleep(50000);
	}
	return rc;
}

/* 3. The clone's parameters in place, the container started and running within the start
 * limit. */
static int start(struct make *m, struct err *e)
{
	const char *cid = m->s->container_id;
	long left;
	int rc = hand_over(m, 1, e);

	lap(m, 2);
	left = (long)m->n->cfg->start_timeout * 1000 - ((long)time(NULL) - m->started) * 1000;
	if (!rc)
		rc = box_start(cid, left > 1000 ? left : 1000, e);
	lap(m, 3);
	return rc ? rc : wait_running(m, cid, e);
}

/* The parameters into a claimed warm container, which must still run: one killed behind
 * our back is never handed out. */
static int hand_over_warm(struct make *m, struct err *e)
{
	struct box_state st;
	int rc = hand_over(m, 0, e);

	if (!rc && !(rc = box_state(m->s->container_id, &st, BOX_CALL_MS, e)) &&
	    !st.running)
		rc = err_set(e, ERR_FAIL, "the warm container is %s", st.status);
	if (!rc)
		memcpy(m->s->agent_ip, st.ip, sizeof(st.ip));
	return rc;
}

/* One file written whole through the sandbox's agent (a connection serves one request). */
static int agent_put(struct make *m, const char *path, const char *data, size_t len,
		     struct err *e)
{
	struct agent_conn c = { .fd = -1 };
	struct files_source src = { .data = (const unsigned char *)data, .size = len };
	int rc = sbagent_connect(m->s, m->s->network, &c, e);

	if (!rc)
		rc = agent_file_write(&c, path, 0600, &src, e);
	agent_close(&c);
	return rc;
}

/* The parameters through a warm container's agent (025), at the sandbox's agent_ip with its
 * key: the file, then the marker clone.sh waits for, each written whole or not at all; the
 * agent's answer is its word that the container runs, so no inspect follows. */
static int hand_over_agent(struct make *m, struct err *e)
{
	struct buf f;
	int rc;

	buf_init(&f, 8192);
	rc = clone_params(m, &f, e);
	if (!rc && !(rc = agent_put(m, CLONE_PARAMS_PATH, f.data, f.len, e)))
		rc = agent_put(m, CLONE_GO_PATH, "", 0, e);
	if (f.data)
		OPENSSL_cleanse(f.data, f.len);
	buf_release(&f);
	return rc;
}

/* 2 and 3 from the warm pool (only ever of the default image: another image's create finds
 * none and starts cold): a container of the image, started ahead, claimed for this
 * sandbox in one statement (no other create can take it) and recorded as its container in
 * the same commit; then the parameters, which its waiting clone.sh reads at once: through
 * its agent, running since its start with the key the claim moves to the sandbox, else by
 * the archive API. 1 when the pool had none (the cold path follows), 0 when the sandbox
 * has its container. A claimed container that fails here is removed (it never goes back):
 * the cold path then. */
static int claim_warm(struct make *m, struct err *e)
{
	const struct sandbox_new *n = m->n;
	char cid[BOX_ID_MAX];
	struct warm_claimed a;
	int rc = warm_claim(n->db, image_of(n)->ref, m->s->id, m->s->engine, cid, &a, e);

	if (rc == ERR_NOTFOUND)
		return 1;
	/* Its agent's key is the sandbox's from now: one agent per container, whatever path
	 * the parameters take (clone.sh starts no second one). */
	if (!rc && a.key[0]) {
		memcpy(m->agent_key, a.key, sizeof(m->agent_key));
		memcpy(m->s->agent_key, a.key, sizeof(m->s->agent_key));
		OPENSSL_cleanse(a.key, sizeof(a.key));
	}
	/* The claim may have found one on another engine than the placement (a race): the
	 * sandbox is where its container is, and its calls go there before any is made. */
	if (rc || (rc = engine_use(n->db, m->s->engine, e)) ||
	    (rc = str_copy(m->s->container_id, sizeof(m->s->container_id), cid)) ||
	    (rc = db_run(n->db, e, "UPDATE sandboxes SET container_id = $2, engine = $3,"
				   " agent_key = $4, disk_enforced = $5, home = nullif($6, '')"
				   " WHERE id = $1", 6, m->s->id, cid, m->s->engine, m->agent_key,
			 a.disk_enforced ? "true" : "false", a.home)) ||
	    (rc = commit_now(n->db, e)))
		return rc == ERR_TOOBIG ? err_set(e, ERR_FAIL, "container id too long") : rc;
	m->warm = 1;
	/* The user it was made with (a row from before 026 has no home: asked now, as then). */
	if (a.home[0]) {
		m->uid = strcmp(a.home, "/root") ? (unsigned)n->cfg->sandbox_uid : 0;
	} else {
		struct boxuser bu;
		if ((rc = boxuser_get(n->cfg, &bu, e)))
			goto failed;
		m->uid = bu.uid;
	}
	lap(m, 1);
	/* Limits of its own: the warm container, made with the defaults, is changed live
	 * before its clone starts (Docker's update, one call; a cold start costs far more). */
	if ((n->limits.memory || n->limits.nano_cpus) &&
	    (rc = box_resize(cid, n->limits.memory ? n->limits.memory
							 : n->cfg->sandbox_memory,
				   n->limits.nano_cpus ? n->limits.nano_cpus
						       : (int64_t)n->cfg->sandbox_cpus * 1000000000,
				   BOX_CALL_MS, e)))
		goto failed;
	if (n->cfg->agent && a.ip[0]) {
		struct err ea;
		memcpy(m->s->agent_ip, a.ip, sizeof(a.ip));
		if (!hand_over_agent(m, &ea)) {
			snprintf(m->s->handed, sizeof(m->s->handed), "agent");
			return 0;
		}
		/* Not done: nothing was, or the file without the marker (clone.sh waits on). */
		log_warn("sandbox %s: the warm container's agent did not take the parameters (%s):"
			 " by the archive API instead", m->s->id, ea.msg);
	}
	if (!(rc = hand_over_warm(m, e)))
		return 0;
failed:
	log_warn("sandbox %s: the warm container %.12s failed (%s): a cold start instead",
		 m->s->id, cid, e->msg);
	warm_discard(n->db, cid, e->msg);
	memset(m->at + 1, 0, sizeof(m->at) - sizeof(m->at[0])); /* the cold start's steps */
	m->warm = 0;
	m->s->container_id[0] = 0;
	m->s->agent_ip[0] = 0;
	return 1;
}

/* A cold start's engine: the placement's, unless that one had room only for the warm
 * container that was not there after all; then placed again (the row follows). Its
 * Docker calls go there from now. */
static int cold_engine(struct make *m, struct err *e)
{
	const struct sandbox_new *n = m->n;
	int rc;

	if (m->warm_only) {
		/* Its own row leaves the count: the room it needs is the one it takes. */
		rc = db_run(n->db, e, "UPDATE sandboxes SET engine = NULL WHERE id = $1", 1, m->s->id);
		if (!rc)
			rc = engine_place(n->db, image_of(n)->ref, 0, 1, n->gvisor, m->s->engine,
					  m->s->host, e);
		if (rc == 1 || rc == ERR_NOSTART) {
			m->why = "no Docker engine has room for another sandbox";
			rc = err_set(e, ERR_NOSTART, "%s", m->why);
		}
		if (rc || (rc = db_run(n->db, e, "UPDATE sandboxes SET engine = $2 WHERE id = $1", 2,
				       m->s->id, m->s->engine)) || (rc = commit_now(n->db, e)))
			return rc;
	}
	return engine_use(n->db, m->s->engine, e);
}

/* A sandbox that did not start: failed (its token revoked, its container removed), and the
 * error the client reads. */
static int failed(struct make *m, int rc, char detail[SANDBOX_DETAIL_MAX], struct err *e)
{
	struct err e2;

	log_warn("sandbox %s did not start: %s", m->s->id, e->msg);
	if (str_copy(detail, SANDBOX_DETAIL_MAX, e->msg))
		log_info("sandbox %s: the reason is cut for the audit row", m->s->id);
	if (sandbox_end(m->n->db, m->s, "failed", m->why ? m->why : "the container did not start",
			&e2) || commit_now(m->n->db, &e2)) {
		log_error("marking %s failed: %s", m->s->id, e2.msg);
		sandbox_remove_container(m->s->container_id);
	}
	if (rc == ERR_DB)
		return rc;
	return err_set(e, ERR_NOSTART, "%s",
		       m->why ? m->why : "the sandbox container did not start; try again");
}

/* Steps 1 to 3 and ready, with the creator's lock held (*locked once taken). */
static int make(struct make *m, int *locked, char detail[SANDBOX_DETAIL_MAX], struct err *e)
{
	const struct sandbox_new *n = m->n;
	int code = 0, rc;

	/* Taken before the row is visible to anyone, so that the reaper never sees this row
	 * starting without its creator's lock while the creator lives. */
	if ((rc = db_run(n->db, e, "SELECT pg_advisory_lock(" SANDBOX_LOCK_KEY ")", 1, m->s->id)))
		return rc;
	*locked = 1;
	/* Warm containers are on the deployment's network: a narrower egress starts cold; so
	 * does a disk limit of its own (the engine cannot change one after the create). */
	m->try_warm = n->cfg->pool_size > 0 && !strcmp(m->s->egress, n->cfg->egress) &&
		      (!n->limits.disk || n->limits.disk == n->cfg->sandbox_disk) && !n->gvisor;
	if ((rc = insert_rows(m, e)))
		return rc;
	lap(m, 0);
	rc = m->try_warm ? claim_warm(m, e) : 1;
	if (rc == 1 && !(rc = cold_engine(m, e)) && !(rc = make_container(m, e))) {
		lap(m, 1);
		rc = start(m, e);
	}
	if (rc)
		return failed(m, rc, detail, e);
	lap(m, 4);
	log_info("sandbox %s: %s in %.1f ms: rows %.1f, %s %.1f, parameters %.1f, start %.1f,"
		 " running %.1f", m->s->id, m->warm ? "claimed" : "started", m->at[4] / 1e3,
		 m->at[0] / 1e3, m->warm ? "claim" : "create", (m->at[1] - m->at[0]) / 1e3,
		 (m->at[2] - m->at[1]) / 1e3, (m->at[3] - m->at[2]) / 1e3,
		 (m->at[4] - m->at[3]) / 1e3);
	m->s->pooled = m->warm;
	/* What runs it: the engine's default runtime unless gVisor's was asked (the row, the
	 * audit; a silent engine leaves it unsaid). */
	if (!n->gvisor && isolation_runtime(n->db, m->s->engine, 0, m->s->runtime, e))
		m->s->runtime[0] = 0;
	PGresult *res = db_exec(n->db, e, &code,
				"UPDATE sandboxes SET state = 'ready', agent_ip = nullif($2, '')::inet,"
				"       runtime = nullif($3, '')"
				" WHERE id = $1 AND state = 'starting' RETURNING rfc3339(created_at)",
				3, m->s->id, m->s->agent_ip, m->s->runtime);
	if (!res) {
		/* The database went away: a container nobody can reach must not stay. */
		sandbox_remove_container(m->s->container_id);
		return code;
	}
	memcpy(m->s->state, PQntuples(res) ? "ready" : "failed", PQntuples(res) ? 6 : 7);
	rc = str_copy(m->s->created_at, sizeof(m->s->created_at),
		      PQntuples(res) ? db_val(res, 0, 0) : "");
	PQclear(res);
	return rc ? err_set(e, ERR_FAIL, "created_at is too long") : 0;
}

int sandbox_create(const struct sandbox_new *n, struct sandbox *out,
		   char detail[SANDBOX_DETAIL_MAX], struct err *e)
{
	const char *ref = n->ref;
	struct make m = { .n = n, .s = out, .started = (long)time(NULL) };
	int rc, locked = 0;

	clock_gettime(CLOCK_MONOTONIC, &m.t0);
	memset(out, 0, sizeof(*out));
	detail[0] = 0;
	snprintf(out->image, sizeof(out->image), "%s", image_of(n)->name);
	snprintf(out->egress, sizeof(out->egress), "%s", n->egress ? n->egress : n->cfg->egress);
	if (config_egress_network(n->cfg, out->egress, out->network, e))
		return ERR_INVALID;
	snprintf(out->isolation, sizeof(out->isolation), "%s",
		 n->gvisor ? ISOLATION_GVISOR : ISOLATION_CONTAINER);
	if (n->gvisor) {
		int offered;
		if ((rc = isolation_gvisor_offered(n->db, &offered, e)))
			return rc;
		if (!offered)
			return err_http(e, 422, "isolation 'gvisor' is not offered here: no engine has "
					"a gVisor runtime");
	}
	/* HEAD is the repository's HEAD: its default branch, not a branch named HEAD. A full
	 * branch name is that branch (checked out as one, not detached). */
	if (!ref || !*ref || strcmp(ref, "HEAD") == 0)
		ref = n->repo->default_branch;
	else if (strncmp(ref, "refs/heads/", 11) == 0 && ref[11])
		ref += 11;
	if (str_copy(out->ref, sizeof(out->ref), ref))
		return err_set(e, ERR_NOTFOUND, "unknown ref");
	/* The clone and every push carry the sandbox's token: none while its git endpoint
	 * would be routed off this host (hostaddr.h); the 503 names the problem. */
	if (hostaddr_check(n->cfg, e))
		return ERR_NOSTART;
	if ((rc = reserve(n, e)) ||
	    (rc = resolve(n->cfg, n->repo, ref, out->commit, &m.is_branch, e)))
		return rc;
	if (randid(out->id, sizeof(out->id), "sb_", 12) || token_mint(TOKEN_SANDBOX, m.token) ||
	    sandbox_agent_key_new(m.agent_key))
		return err_set(e, ERR_FAIL, "RNG failed");
	memcpy(out->agent_key, m.agent_key, sizeof(out->agent_key));
	rc = make(&m, &locked, detail, e);
	if (rc == 0)
		metrics_observe_create(clock_us_since(&m.t0));
	OPENSSL_cleanse(m.token, sizeof(m.token));
	OPENSSL_cleanse(m.agent_key, sizeof(m.agent_key));
	if (locked) {
		struct err e2;
		/* A failed call keeps nothing of its transaction (the worker would roll it
		 * back), and an aborted one could not run the unlock. A call that succeeded
		 * holds its row's lock (the update to ready) until its commit. */
		if (rc)
			db_rollback(n->db);
		if (db_run(n->db, &e2, "SELECT pg_advisory_unlock(" SANDBOX_LOCK_KEY ")", 1, out->id))
			log_warn("unlocking %s: %s", out->id, e2.msg);
	}
	return rc;
}
