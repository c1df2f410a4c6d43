/* sandbox.c: creating, using and ending sandboxes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <git2.h>
#include <openssl/crypto.h>
#include "sandboxd/docker.h"
#include "sandboxd/hostaddr.h"
#include "sandboxd/json.h"
#include "sandboxd/log.h"
#include "sandboxd/num.h"
#include "sandboxd/randid.h"
#include "sandboxd/sandbox.h"
#include "sandboxd/scripts.h"
#include "sandboxd/tar.h"
#include "sandboxd/token.h"
#include "sandboxd/banned.h"

#define STATE_DIR "/workspace/.sandboxd"

/* Copies src into dst[n], cut if it must be (values come from the database and are
 * bounded there). */
static void copy(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;

	if (l >= n)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = 0;
}

/* Removes a sandbox's container (none yet: nothing to do); one already gone is no error.
 * A failure is only logged: the reaper removes containers that no live sandbox owns. */
static void remove_container(const char *cid)
{
	struct err e;
	int rc = cid[0] ? docker_container_remove(cid, DOCKER_CALL_MS, &e) : 0;

	if (rc && rc != ERR_NOTFOUND)
		log_warn("removing container %.12s: %s", cid, e.msg);
}

/* Commits what is done so far and opens a new transaction: sandbox steps must survive a
 * later failure of the same request (the row before the container, the failed state). */
static int commit_now(struct req *r, struct err *e)
{
	int rc = db_commit(r->db, e);
	return rc ? rc : db_begin(r->db, e);
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
			int hex = n >= 4 && n <= 40 && strspn(ref, "0123456789abcdef") == n;
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

static int collect_sink(void *arg, int stream, const char *data, size_t len)
{
	struct sandbox_output *c = arg;

	if (stream == 1) {
		size_t take = len < sizeof(c->out) - 1 - c->len ? len : sizeof(c->out) - 1 - c->len;
		memcpy(c->out + c->len, data, take);
		c->len += take;
		c->out[c->len] = 0;
	}
	return 0;
}

int sandbox_run(const char *container, const char *const *argv, struct sandbox_output *c,
		int *exit_code, struct err *e)
{
	struct docker_exec_opts o = { .cmd = argv };
	struct docker_exec_io io = { .sink = collect_sink, .sink_arg = c };
	struct docker_exec_state st;
	char id[DOCKER_ID_MAX];
	int rc;

	c->len = 0;
	c->out[0] = 0;
	if ((rc = docker_exec_create(container, &o, id, DOCKER_CALL_MS, e)) ||
	    (rc = docker_exec_start(id, &io, DOCKER_CALL_MS, e)) ||
	    (rc = docker_exec_inspect(id, &st, DOCKER_CALL_MS, e)))
		return rc;
	if (exit_code)
		*exit_code = st.exit_code;
	return 0;
}

int sandbox_end(struct db *db, const struct sandbox *s, const char *state, const char *reason,
		struct err *e)
{
	int rc;

	/* The row first: once it says ended, nobody (the reaper included) reads the missing
	 * container as a failure, and a container that outlives a failed removal is an orphan
	 * that the reaper removes on its next pass. */
	rc = db_run(db, e,
		    "UPDATE tokens SET revoked_at = now()"
		    " WHERE sandbox_id = $1 AND revoked_at IS NULL", 1, s->id);
	if (!rc)
		rc = db_run(db, e,
			    "UPDATE sandboxes SET state = $2, end_reason = $3, ended_at = now()"
			    " WHERE id = $1 AND state IN ('starting', 'ready')",
			    3, s->id, state, reason);
	/* Visible to the other connections (the reaper's) before the container goes. */
	if (!rc && db->in_tx && !(rc = db_commit(db, e)))
		rc = db_begin(db, e);
	if (rc)
		return rc;
	remove_container(s->container_id);
	return 0;
}

/* The clone's parameters, one per line; a value with a newline could forge the next. */
static int clone_file(struct req *r, const struct repo *repo, const char *token,
		      const char *commit, const char *branch, struct buf *tar, struct err *e)
{
	const struct account *a = &r->caller.account;
	char *name = pool_strdup(r->pool, a->has_name && a->name[0] ? a->name : a->login);
	char *email = a->has_email && a->email[0]
			      ? pool_strdup(r->pool, a->email)
			      : pool_printf(r->pool, "%s@users.noreply.sandboxd", a->login);
	struct buf f;
	int rc;

	if (!name || !email)
		return ERR_NOMEM;
	for (char *p = name; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	for (char *p = email; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	buf_init(&f, 8192);
	rc = buf_printf(&f, "%s/%s/%s.git\n%s\n%s\n%s\n%s\n%s\n", r->cfg->sandbox_git_url,
			repo->owner, repo->name, token, commit, branch ? branch : "", name, email);
	if (!rc)
		rc = tar_write_file(tar, ".sandboxd/clone", 0600, (int64_t)time(NULL), f.data, f.len, e);
	OPENSSL_cleanse(f.data, f.len);
	buf_release(&f);
	return rc;
}

static int create(struct req *r, const struct repo *repo, const char *ref,
		  char id[SANDBOX_ID_LEN + 1], int *locked)
{
	char commit[41], token[TOKEN_LEN + 1],
	     hash[TOKEN_HASH_LEN + 1], cid[DOCKER_ID_MAX] = "", secs[24];
	int is_branch = 0, rc, code = 0;
	struct sandbox s;
	struct err e = { "" };
	struct buf tar;
	PGresult *res;
	long started = (long)time(NULL);

	memset(&s, 0, sizeof(s));
	buf_init(&tar, 65536);
	/* HEAD is the repository's HEAD: its default branch, not a branch named HEAD. A full
	 * branch name is that branch (checked out as one, not detached). */
	if (!ref || !*ref || strcmp(ref, "HEAD") == 0)
		ref = repo->default_branch;
	else if (strncmp(ref, "refs/heads/", 11) == 0 && ref[11])
		ref += 11;
	/* The clone and every push carry the sandbox's token: none while its git endpoint
	 * would be routed off this host (hostaddr.h). */
	if (hostaddr_check(r->cfg, &e)) {
		http_error(r, 503, "%s", e.msg);
		return 0;
	}
	/* The limit holds under concurrent creates: the account's row is locked until the new
	 * sandbox's row commits (step 1 below), so a second create counts it. */
	if ((rc = db_run(r->db, &e, "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", 1,
			 r->caller.account_id)))
		return http_fail(r, rc, &e);
	res = db_exec(r->db, &e, &code,
		      "SELECT count(*) FROM sandboxes WHERE account_id = $1"
		      "   AND state IN ('starting', 'ready')", 1, r->caller.account_id);
	if (!res)
		return http_fail(r, code, &e);
	int64_t running = 0;
	num_parse(db_val(res, 0, 0), 0, INT64_MAX, &running);
	PQclear(res);
	if (running >= r->cfg->max_sandboxes) {
		http_error(r, 429, "sandbox limit reached");
		return 0;
	}
	if ((rc = resolve(r->cfg, repo, ref, commit, &is_branch, &e))) {
		if (rc == ERR_NOTFOUND)
			http_error(r, 422, "unknown ref");
		else
			http_fail(r, rc, &e);
		return 0;
	}
	if (randid(id, SANDBOX_ID_LEN + 1, "sb_", 12) || token_mint(TOKEN_SANDBOX, token)) {
		err_set(&e, ERR_FAIL, "RNG failed");
		return http_fail(r, ERR_FAIL, &e);
	}
	token_hash(token, TOKEN_LEN, hash);
	snprintf(secs, sizeof(secs), "%d", r->cfg->idle_timeout);
	/* Taken before the row is visible to anyone, so that the reaper never sees this row
	 * starting without its creator's lock while the creator lives. */
	if ((rc = db_run(r->db, &e, "SELECT pg_advisory_lock(" SANDBOX_LOCK_KEY ")", 1, id)))
		return http_fail(r, rc, &e);
	*locked = 1;
	json_add_str(r->audit_details, "sandbox_id", id);
	r->audit_sandbox = pool_strdup(r->pool, id);
	json_add_str(r->audit_details, "ref", ref);
	json_add_str(r->audit_details, "commit", commit);

	/* 1. The row (and its token), committed before anything runs. */
	rc = db_run(r->db, &e,
		    "INSERT INTO sandboxes (id, repository_id, account_id, ref, commit_sha, idle_stop_at)"
		    " VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::int))",
		    6, id, repo->id, r->caller.account_id, ref, commit, secs);
	if (!rc)
		rc = db_run(r->db, &e,
			    "INSERT INTO tokens (account_id, kind, scope, repository_id, sandbox_id, hash,"
			    "                    note, expires_at)"
			    " VALUES ($1, 'sandbox', 'write', $2, $3, $4, 'sandbox git credential',"
			    "         now() + interval '24 hours')",
			    4, r->caller.account_id, repo->id, id, hash);
	if (rc || (rc = commit_now(r, &e))) {
		OPENSSL_cleanse(token, sizeof(token));
		return http_fail(r, rc, &e);
	}
	copy(s.id, sizeof(s.id), id);
	copy(s.ref, sizeof(s.ref), ref);
	copy(s.commit, sizeof(s.commit), commit);

	/* 2. The container, labelled with the sandbox, hardened. */
	char label[64], ilabel[96];
	const char **env;
	size_t nenv;
	snprintf(label, sizeof(label), SANDBOX_LABEL "=%s", id);
	snprintf(ilabel, sizeof(ilabel), "sandboxd.instance=%s", r->cfg->instance);
	const char *labels[] = { label, ilabel, NULL };
	if ((rc = sandbox_env(r->pool, &s, pool_printf(r->pool, "%s/%s", repo->owner, repo->name),
			      0, &env, &nenv, &e))) {
		OPENSSL_cleanse(token, sizeof(token));
		return http_fail(r, rc, &e);
	}
	/* The script holds no secret: it may stand in the container's configuration. */
	const char *cmd[] = { "bash", "-c", sh_clone, "sandboxd-clone", NULL };
	const char *hosts[] = { "sandboxd.internal:host-gateway", NULL };
	struct docker_create dc = {
		.image = r->cfg->runner_image, .labels = labels, .env = env, .cmd = cmd,
		.extra_hosts = hosts, .network = r->cfg->sandbox_network,
		.memory = r->cfg->sandbox_memory,
		.nano_cpus = (int64_t)r->cfg->sandbox_cpus * 1000000000,
		.pids_limit = r->cfg->sandbox_pids,
	};
	long left = (long)r->cfg->start_timeout * 1000;
	const char *why = NULL;  /* what the 503 says, when not the spec's text */
	rc = docker_container_create(&dc, cid, left < DOCKER_CALL_MS ? left : DOCKER_CALL_MS, &e);
	if (rc == ERR_NOTFOUND && strstr(e.msg, "No such image")) {
		/* The image is a setting; pulling it is one too (off: there may be no registry).
		 * The first sandbox on a host waits for the pull, within the start limit;
		 * workers that pull at once are one pull for Docker. */
		if (!r->cfg->image_pull) {
			why = pool_printf(r->pool, "the sandbox image %s is missing and pulling is off",
					  r->cfg->runner_image);
		} else {
			left = (long)r->cfg->start_timeout * 1000 - ((long)time(NULL) - started) * 1000;
			log_info("sandbox %s: pulling the image %s", id, r->cfg->runner_image);
			rc = docker_image_pull(r->cfg->runner_image, left > 1000 ? left : 1000, &e);
			if (rc)
				why = pool_printf(r->pool, "the sandbox image %s is missing and could not be "
						  "pulled: %s", r->cfg->runner_image, e.msg);
			else
				rc = docker_container_create(&dc, cid, DOCKER_CALL_MS, &e);
		}
		if (why)
			rc = err_set(&e, ERR_NOTFOUND, "%s", why);
	}
	if (!rc) {
		copy(s.container_id, sizeof(s.container_id), cid);
		rc = db_run(r->db, &e, "UPDATE sandboxes SET container_id = $2 WHERE id = $1", 2, id,
			    cid);
		if (!rc)
			rc = commit_now(r, &e);
	}
	if (!rc)
		rc = clone_file(r, repo, token, commit, is_branch ? ref : NULL, &tar, &e);
	OPENSSL_cleanse(token, sizeof(token));
	if (!rc)
		rc = docker_archive_put(cid, "/tmp", tar.data, tar.len, DOCKER_CALL_MS, &e);
	if (tar.data)
		OPENSSL_cleanse(tar.data, tar.len);
	buf_release(&tar);
	left = (long)r->cfg->start_timeout * 1000 - ((long)time(NULL) - started) * 1000;
	if (!rc)
		rc = docker_container_start(cid, left > 1000 ? left : 1000, &e);
	/* 3. Running within the start limit, or nothing is left. */
	while (!rc) {
		struct docker_container_state st;
		if ((rc = docker_container_inspect(cid, &st, DOCKER_CALL_MS, &e)))
			break;
		if (st.running)
			break;
		if (strcmp(st.status, "created") || (long)time(NULL) - started > r->cfg->start_timeout) {
			rc = err_set(&e, ERR_FAIL, "container is %s", st.status);
			break;
		}
		usleep(50000);
	}
	if (rc) {
		struct err e2;
		log_warn("sandbox %s did not start: %s", id, e.msg);
		json_add_str(r->audit_details, "error", e.msg);
		if (sandbox_end(r->db, &s, "failed", why ? why : "the container did not start", &e2) ||
		    commit_now(r, &e2)) {
			log_error("marking %s failed: %s", id, e2.msg);
			remove_container(cid);
		}
		if (rc == ERR_DB)
			return http_fail(r, rc, &e);
		http_error(r, 503, "%s", why ? why : "the sandbox container did not start; try again");
		return 0;
	}
	res = db_exec(r->db, &e, &code,
		      "UPDATE sandboxes SET state = 'ready' WHERE id = $1 AND state = 'starting'"
		      " RETURNING rfc3339(created_at)", 1, id);
	if (!res) {
		/* The database went away: a container nobody can reach must not stay. */
		remove_container(cid);
		return http_fail(r, code, &e);
	}
	json_object *o = json_object_new_object();
	json_add_str(o, "id", id);
	json_add_str(o, "ref", ref);
	json_add_str(o, "state", PQntuples(res) ? "ready" : "failed");
	json_add_str(o, "created_at", PQntuples(res) ? db_val(res, 0, 0) : NULL);
	PQclear(res);
	http_json(r, 201, o);
	return 0;
}

int sandbox_create(struct req *r, const struct repo *repo, const char *ref)
{
	char id[SANDBOX_ID_LEN + 1] = "sb_";
	int locked = 0, rc = create(r, repo, ref, id, &locked);
	struct err e;

	if (locked) {
		/* A failed call keeps nothing of its transaction (the worker would roll it back),
		 * and an aborted one could not run the unlock. A call that succeeded holds its
		 * row's lock (the update to ready) until its commit. */
		if (r->status >= 400)
			db_rollback(r->db);
		if (db_run(r->db, &e, "SELECT pg_advisory_unlock(" SANDBOX_LOCK_KEY ")", 1, id))
			log_warn("unlocking %s: %s", id, e.msg);
	}
	return rc;
}

int sandbox_env(struct pool *p, const struct sandbox *s, const char *repo, size_t extra,
		const char ***out, size_t *n, struct err *e)
{
	const char **v = extra < 1024 ? pool_alloc(p, (7 + extra) * sizeof(*v)) : NULL;
	size_t i = 0;

	if (!v)
		return err_set(e, ERR_NOMEM, "out of memory");
	v[i++] = pool_printf(p, "SANDBOX_ID=%s", s->id);
	v[i++] = pool_printf(p, "SANDBOX_REPOSITORY=%s", repo);
	v[i++] = pool_printf(p, "SANDBOX_REF=%s", s->ref);
	v[i++] = pool_printf(p, "SANDBOX_COMMIT=%s", s->commit);
	v[i++] = "HOME=/home/sandbox";
	v[i++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	v[i] = NULL;
	for (size_t k = 0; k < i; k++)
		if (!v[k])
			return err_set(e, ERR_NOMEM, "out of memory");
	*out = v;
	*n = i;
	return 0;
}

int sandbox_load(struct db *db, const char *repo_id, const char *id, struct sandbox *out,
		 struct err *e)
{
	PGresult *res;
	int code = 0;

	memset(out, 0, sizeof(*out));
	res = db_exec(db, e, &code,
		      "SELECT s.id, s.repository_id, s.account_id, a.login, s.ref, s.commit_sha,"
		      "       s.state, s.clone_state, coalesce(s.clone_error, ''),"
		      "       coalesce(s.container_id, ''), rfc3339(s.created_at),"
		      "       rfc3339(s.last_used_at), rfc3339(s.idle_stop_at)"
		      "  FROM sandboxes s JOIN accounts a ON a.id = s.account_id"
		      " WHERE s.id = $1 AND s.repository_id = $2",
		      2, id, repo_id);
	if (!res)
		return code;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOTFOUND, "sandbox not found");
	}
	copy(out->id, sizeof(out->id), db_val(res, 0, 0));
	copy(out->repository_id, sizeof(out->repository_id), db_val(res, 0, 1));
	copy(out->account_id, sizeof(out->account_id), db_val(res, 0, 2));
	copy(out->creator, sizeof(out->creator), db_val(res, 0, 3));
	copy(out->ref, sizeof(out->ref), db_val(res, 0, 4));
	copy(out->commit, sizeof(out->commit), db_val(res, 0, 5));
	copy(out->state, sizeof(out->state), db_val(res, 0, 6));
	copy(out->clone_state, sizeof(out->clone_state), db_val(res, 0, 7));
	copy(out->clone_error, sizeof(out->clone_error), db_val(res, 0, 8));
	copy(out->container_id, sizeof(out->container_id), db_val(res, 0, 9));
	copy(out->created_at, sizeof(out->created_at), db_val(res, 0, 10));
	copy(out->last_used_at, sizeof(out->last_used_at), db_val(res, 0, 11));
	copy(out->idle_stop_at, sizeof(out->idle_stop_at), db_val(res, 0, 12));
	PQclear(res);
	return 0;
}

int sandbox_touch(struct req *r, const struct sandbox *s, struct err *e)
{
	char secs[24];

	snprintf(secs, sizeof(secs), "%d", r->cfg->idle_timeout);
	return db_run(r->db, e,
		      "UPDATE sandboxes SET last_used_at = now(),"
		      "       idle_stop_at = now() + make_interval(secs => $2::int)"
		      " WHERE id = $1 AND state = 'ready'", 2, s->id, secs);
}

int sandbox_clone_wait(struct req *r, struct sandbox *s, long wait_ms, struct err *e)
{
	/* One exec waits inside the container (up to 5 s, polling every 50 ms), so that the
	 * call goes on as soon as the clone ends rather than on the next poll of ours. */
	static const char script[] =
		"for i in $(seq 100); do [ -s " STATE_DIR "/clone.state ] && break; sleep 0.05; done; "
		"cat " STATE_DIR "/clone.state";
	const char *argv[] = { "bash", "-c", script, NULL };
	struct sandbox_output c;
	struct timespec t0, t1;
	int exit_code, rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (strcmp(s->clone_state, "pending") == 0) {
		/* A client that left is noticed between waits (5 s at most), not at the end of
		 * the clone: the caller sees the clone still pending and answers 499. */
		if (wait_ms > 0 && http_client_gone(r))
			return 0;
		if ((rc = sandbox_run(s->container_id, argv, &c, &exit_code, e)))
			return rc;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long waited = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (exit_code == 0 && strncmp(c.out, "done", 4) == 0) {
			copy(s->clone_state, sizeof(s->clone_state), "done");
		} else if (exit_code == 0 && strncmp(c.out, "failed", 6) == 0) {
			const char *log_argv[] = { "tail", "-n", "1", STATE_DIR "/clone.log", NULL };
			copy(s->clone_state, sizeof(s->clone_state), "failed");
			if (sandbox_run(s->container_id, log_argv, &c, &exit_code, e) == 0) {
				c.out[strcspn(c.out, "\n")] = 0;
				copy(s->clone_error, sizeof(s->clone_error), c.out);
			}
		} else if (waited >= wait_ms) {
			return 0;
		} else {
			usleep(50000);  /* never a busy loop, whatever the exec did */
			continue;
		}
		return db_run(r->db, e,
			      "UPDATE sandboxes SET clone_state = $2, clone_error = nullif($3, '')"
			      " WHERE id = $1", 3, s->id, s->clone_state, s->clone_error);
	}
	return 0;
}

json_object *sandbox_json(const struct sandbox *s)
{
	json_object *o = json_object_new_object(), *clone = json_object_new_object();

	json_add_str(o, "id", s->id);
	json_add_str(o, "ref", s->ref);
	json_add_str(o, "commit", s->commit);
	json_add_str(o, "state", s->state);
	json_add_str(clone, "state", s->clone_state);
	if (s->clone_error[0])
		json_add_str(clone, "error", s->clone_error);
	json_object_object_add(o, "clone", clone);
	json_add_str(o, "created_at", s->created_at);
	json_add_str(o, "last_used_at", s->last_used_at);
	json_add_str(o, "idle_stop_at", s->idle_stop_at);
	return o;
}
