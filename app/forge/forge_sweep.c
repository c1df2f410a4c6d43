/* forge_sweep.c: ephemeral refs past their TTL, and deleted repositories' directories. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <git2.h>
#include "sandboxd/forge/forge_sweep.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/common/banned.h"

#define EPHEMERAL_GLOB "refs/namespaces/ephemeral/*"

int forge_expire_interval(int ttl)
{
	int s = ttl / 10;

	return s < 1 ? 1 : s > 3600 ? 3600 : s;
}

/* The repository being swept. */
struct sweep {
	struct db *db;
	const char *repo_id, *full;   /* full: owner/name */
	const char *gitdir;
	int64_t now, ttl;
};

/* The time of the last accepted push of ref, under the repository's current name or an
 * old one; -1 when the audit log has none. */
static int64_t pushed_at(const struct sweep *s, const char *ref)
{
	struct err e;
	int code = 0;
	int64_t t = -1;
	PGresult *res = db_exec(
		s->db, &e, &code,
		"SELECT extract(epoch FROM max(at))::bigint FROM audit_log"
		" WHERE action = 'git.push.ref' AND status = 200 AND details->>'ref' = $3"
		"   AND repository IN (SELECT $2::text UNION ALL"
		"        SELECT o.login || '/' || d.name FROM repo_redirects d"
		"          JOIN accounts o ON o.id = d.owner_id WHERE d.repository_id = $1::bigint)",
		3, s->repo_id, s->full, ref);

	if (!res) {
		log_warn("reaper: the pushes of %s in %s: %s", ref, s->full, e.msg);
		return -1;
	}
	if (db_val(res, 0, 0) && num_parse(db_val(res, 0, 0), 0, INT64_MAX, &t))
		t = -1;
	PQclear(res);
	return t;
}

/* When ref (pointing at id) was last updated, as forge_expire_refs says. */
static int64_t last_update(const struct sweep *s, git_repository *g, const char *ref,
			   const git_oid *id)
{
	char *path = NULL;
	struct stat st;
	int64_t t = -1, p;
	git_commit *c = NULL;

	if (asprintf(&path, "%s/%s", s->gitdir, ref) >= 0 && stat(path, &st) == 0)
		t = (int64_t)st.st_mtime;
	free(path);
	if (t >= 0 && s->now - t < s->ttl)
		return t;   /* fresh on disk: no need to ask the database */
	if ((p = pushed_at(s, ref)) > t)
		t = p;
	if (t < 0 && git_commit_lookup(&c, g, id) == 0)
		t = (int64_t)git_commit_time(c);
	git_commit_free(c);
	return t < 0 ? 0 : t;
}

static void expire_audit(const struct sweep *s, const char *ref, const char *old, int64_t last)
{
	struct err e;
	json_object *d = json_object_new_object();
	char when[32];
	time_t t = (time_t)last;
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	json_add_str(d, "ref", ref);
	json_add_str(d, "old", old);
	json_add_str(d, "last_update", when);
	json_add_int(d, "ttl", s->ttl);
	if (db_run(s->db, &e,
		   "INSERT INTO audit_log (action, status, repository, via, details)"
		   " VALUES ('" FORGE_EXPIRE_ACTION "', 200, $1, 'reaper', $2)",
		   2, s->full, json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN)))
		log_warn("reaper: audit of the expired %s in %s: %s", ref, s->full, e.msg);
	json_object_put(d);
}

/* Deletes ref if it is past the TTL; 1 when it was deleted. */
static int expire_one(const struct sweep *s, git_repository *g, git_reference *ref)
{
	char old[GIT_OID_HEXSZ + 1];
	const git_oid *id = git_reference_target(ref);
	int64_t last;

	if (!id)
		return 0;   /* symbolic: it follows another */
	last = last_update(s, g, git_reference_name(ref), id);
	if (s->now - last < s->ttl)
		return 0;
	git_oid_tostr(old, sizeof(old), id);
	/* Compare-and-swap on the value read: a push in between keeps its ref. */
	if (git_reference_delete(ref) < 0) {
		log_warn("reaper: could not delete %s in %s: %s", git_reference_name(ref), s->full,
			 git_error_last() ? git_error_last()->message : "unknown");
		return 0;
	}
	log_info("reaper: %s in %s expired (last update %lld s ago)", git_reference_name(ref),
		 s->full, (long long)(s->now - last));
	expire_audit(s, git_reference_name(ref), old, last);
	return 1;
}

/* The expired ephemeral refs of one repository deleted; how many. */
static int expire_repo(struct sweep *s, const char *repos_dir, const char *owner,
		       const char *name)
{
	git_repository *g = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	char *dir = repo_path(repos_dir, owner, name);
	int n = 0;

	s->gitdir = dir;
	if (!dir || git_repository_open_bare(&g, dir) < 0 ||
	    git_reference_iterator_glob_new(&it, g, EPHEMERAL_GLOB) < 0) {
		log_warn("reaper: cannot read the refs of %s: %s", s->full,
			 git_error_last() ? git_error_last()->message : "out of memory");
		goto out;
	}
	while (git_reference_next(&ref, it) == 0) {
		n += expire_one(s, g, ref);
		git_reference_free(ref);
	}
out:
	git_reference_iterator_free(it);
	git_repository_free(g);
	free(dir);
	return n;
}

int forge_expire_refs(const struct config *cfg, struct db *db, int64_t now, struct err *e)
{
	int code = 0, n = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT rp.id, o.login, rp.name FROM repositories rp"
				"  JOIN accounts o ON o.id = rp.owner_id ORDER BY rp.id", 0);

	if (!res)
		return code;
	for (int i = 0; i < PQntuples(res); i++) {
		char full[160];
		struct sweep s = { .db = db, .repo_id = db_val(res, i, 0), .full = full,
				   .now = now, .ttl = cfg->ephemeral_ttl };

		snprintf(full, sizeof(full), "%s/%s", db_val(res, i, 1), db_val(res, i, 2));
		n += expire_repo(&s, cfg->repos_dir, db_val(res, i, 1), db_val(res, i, 2));
	}
	PQclear(res);
	return n;
}

/* 1 when a repository row has id, 0 when none, negative when the database cannot say. */
static int row_exists(struct db *db, const char *id, struct err *e)
{
	int code = 0, has;
	PGresult *res = db_exec(db, e, &code, "SELECT 1 FROM repositories WHERE id = $1", 1, id);

	if (!res)
		return code;
	has = PQntuples(res) > 0;
	PQclear(res);
	return has;
}

int forge_sweep_trash(const struct config *cfg, struct db *db, struct err *e)
{
	char *dir = NULL, *path = NULL;
	struct dirent *de;
	DIR *d;
	int n = 0, has;

	if (asprintf(&dir, "%s/%s", cfg->repos_dir, REPO_TRASH) < 0)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (!(d = opendir(dir))) {
		free(dir);
		return 0;   /* nothing was ever deleted here */
	}
	while ((de = readdir(d))) {
		char id[24];
		size_t len = strlen(de->d_name);
		int64_t v;

		if (len < 5 || len - 4 >= sizeof(id) || strcmp(de->d_name + len - 4, ".git"))
			continue;
		memcpy(id, de->d_name, len - 4);
		id[len - 4] = 0;
		if (num_parse(id, 1, INT64_MAX, &v))
			continue;
		if ((has = row_exists(db, id, e)) < 0) {
			n = has;
			break;
		}
		/* A row still there: its delete has not committed (or was undone). */
		if (has || asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			continue;
		log_info("reaper: removing %s (repository %s was deleted)", path, id);
		repo_remove_dir(path);
		free(path);
		path = NULL;
		n++;
	}
	closedir(d);
	free(dir);
	return n;
}
