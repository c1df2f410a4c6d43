/* repo.c: repositories in the database and on disk. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <git2.h>
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/common/banned.h"

int repo_valid_name(const char *name, const char *field, struct err *e)
{
	size_t n = strlen(name);
	int ok = n >= 1 && n <= 100 && name[0] != '.' && name[0] != '-' && !strstr(name, "..") &&
		 !(n >= 4 && strcasecmp(name + n - 4, ".git") == 0);

	for (size_t i = 0; ok && i < n; i++) {
		char c = name[i];
		ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		     c == '.' || c == '-' || c == '_';
	}
	if (!ok)
		return err_set(e, ERR_INVALID,
			       "field '%s' must be 1 to 100 letters, digits, '.', '-' or '_', not "
			       "starting with '.' or '-', without '..' and not ending in '.git'", field);
	return 0;
}

int repo_valid_branch(const char *branch, const char *field, struct err *e)
{
	char ref[300];
	int valid = 0;

	for (const char *p = branch; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return err_set(e, ERR_INVALID, "field '%s' must be a valid branch name", field);
	if (strlen(branch) > 255 || branch[0] == '-' ||
	    snprintf(ref, sizeof(ref), "refs/heads/%s", branch) >= (int)sizeof(ref) ||
	    git_reference_name_is_valid(&valid, ref) < 0 || !valid || strcmp(branch, "HEAD") == 0)
		return err_set(e, ERR_INVALID, "field '%s' must be a valid branch name", field);
	return 0;
}

char *repo_path(const char *repos_dir, const char *owner, const char *name)
{
	size_t n = strlen(repos_dir) + strlen(owner) + strlen(name) + 8;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s/%s.git", repos_dir, owner, name);
	return p;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path))
		log_warn("could not remove %s", path);
	return 0;
}

void repo_remove_dir(const char *path)
{
	if (path)
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void fill(const PGresult *res, const char *owner, struct repo *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->id, sizeof(out->id), "%s", db_val(res, 0, 0));
	snprintf(out->owner_id, sizeof(out->owner_id), "%s", db_val(res, 0, 1));
	snprintf(out->owner, sizeof(out->owner), "%s", owner);
	snprintf(out->name, sizeof(out->name), "%s", db_val(res, 0, 2));
	snprintf(out->visibility, sizeof(out->visibility), "%s", db_val(res, 0, 3));
	snprintf(out->default_branch, sizeof(out->default_branch), "%s", db_val(res, 0, 4));
	out->archived = db_bool(res, 0, 5);
	snprintf(out->created_at, sizeof(out->created_at), "%s", db_val(res, 0, 6));
	out->role = ROLE_ADMIN;
}

int repo_create(struct db *db, const char *repos_dir, const char *owner_id, const char *owner,
		const char *name, const char *visibility, const char *branch, struct repo *out,
		char **path, struct err *e)
{
	git_repository_init_options opts;
	git_repository *g = NULL;
	PGresult *res;
	int code = 0;

	*path = NULL;
	git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	/* The row first: its unique index serialises concurrent creates of one name. */
	res = db_exec(db, e, &code,
		      "INSERT INTO repositories (owner_id, name, visibility, default_branch)"
		      " VALUES ($1, $2, $3, $4)"
		      " RETURNING id, owner_id, name, visibility, default_branch, archived,"
		      "           rfc3339(created_at)",
		      4, owner_id, name, visibility, branch);
	if (!res)
		return code == ERR_EXISTS
			? err_set(e, ERR_EXISTS, "repository %s/%s already exists", owner, name)
			: code;
	fill(res, owner, out);
	PQclear(res);
	/* A new repository takes its name back from a renamed one's old names. */
	if ((code = db_run(db, e,
			   "DELETE FROM repo_redirects WHERE owner_id = $1 AND lower(name) = lower($2)",
			   2, owner_id, name)))
		return code;
	if (!(*path = repo_path(repos_dir, owner, out->name)))
		return err_set(e, ERR_NOMEM, "out of memory");
	/* Something already at the path was not made by us: never adopt or remove it. */
	struct stat st;
	if (lstat(*path, &st) == 0) {
		log_error("%s exists on disk but has no row; refusing to create %s/%s", *path, owner,
			  name);
		err_set(e, ERR_EXISTS, "repository %s/%s already exists on disk", owner, name);
		free(*path);
		*path = NULL;
		return ERR_EXISTS;
	}
	opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_NO_REINIT |
		     GIT_REPOSITORY_INIT_MKPATH;
	opts.initial_head = branch;
	if (git_repository_init_ext(&g, *path, &opts) < 0) {
		const git_error *ge = git_error_last();
		err_set(e, ERR_FAIL, "cannot create %s: %s", *path, ge ? ge->message : "unknown");
		/* Nothing was at the path above and the row serialises creators of this name, so
		 * what a failed init left there (a full or broken disk) is ours: a half-made
		 * repository would refuse the name for ever ("already exists on disk"). */
		if (lstat(*path, &st) == 0)
			repo_remove_dir(*path);
		free(*path);
		*path = NULL;
		return ERR_FAIL;
	}
	git_repository_free(g);
	return 0;
}

int repo_set_head(const char *repos_dir, const struct repo *repo, const char *branch,
		  struct err *e)
{
	git_repository *g = NULL;
	char ref[300];
	char *path = repo_path(repos_dir, repo->owner, repo->name);
	int rc = 0;

	if (!path)
		return err_set(e, ERR_NOMEM, "out of memory");
	snprintf(ref, sizeof(ref), "refs/heads/%s", branch);
	if (git_repository_open_bare(&g, path) < 0 || git_repository_set_head(g, ref) < 0) {
		const git_error *ge = git_error_last();
		rc = err_set(e, ERR_FAIL, "cannot set HEAD of %s: %s", path,
			     ge ? ge->message : "unknown");
	}
	git_repository_free(g);
	free(path);
	return rc;
}

int repo_ref_is(const char *repos_dir, const struct repo *repo, const char *ref,
		const char *oid)
{
	git_repository *g = NULL;
	git_oid id;
	char hex[GIT_OID_HEXSZ + 1];
	char *path = repo_path(repos_dir, repo->owner, repo->name);
	int is = 0, rc;

	if (path && git_repository_open_bare(&g, path) == 0) {
		rc = git_reference_name_to_id(&id, g, ref);
		if (rc == 0)
			is = strcmp(git_oid_tostr(hex, sizeof(hex), &id), oid) == 0;
		else if (rc == GIT_ENOTFOUND)
			is = strspn(oid, "0") == GIT_OID_HEXSZ;
	}
	git_repository_free(g);
	free(path);
	return is;
}

/* rename(2) of a repository's directory, refused when something is at to already. */
static int move_dir(const char *from, const char *to, const char *what, struct err *e)
{
	struct stat st;

	if (lstat(to, &st) == 0) {
		log_error("%s exists on disk but has no row; refusing to move %s there", to, from);
		return err_set(e, ERR_EXISTS, "repository %s already exists on disk", what);
	}
	if (rename(from, to))
		return err_set(e, ERR_FAIL, "cannot move %s to %s: %s", from, to, strerror(errno));
	return 0;
}

/* The row renamed, the old name kept (unless only its case changed), the new one taken
 * back from any redirect. */
static int rename_row(struct db *db, const struct repo *repo, const char *name, struct err *e)
{
	int rc = db_run(db, e, "UPDATE repositories SET name = $2 WHERE id = $1", 2, repo->id, name);

	if (rc == ERR_EXISTS)
		return err_set(e, ERR_EXISTS, "repository %s/%s already exists", repo->owner, name);
	if (!rc)
		rc = db_run(db, e,
			    "DELETE FROM repo_redirects WHERE owner_id = $1 AND lower(name) = lower($2)",
			    2, repo->owner_id, name);
	if (!rc && strcasecmp(repo->name, name))
		rc = db_run(db, e,
			    "INSERT INTO repo_redirects (owner_id, name, repository_id)"
			    " VALUES ($1, $2, $3) ON CONFLICT (owner_id, lower(name))"
			    " DO UPDATE SET repository_id = excluded.repository_id, created_at = now()",
			    3, repo->owner_id, repo->name, repo->id);
	return rc;
}

int repo_rename(struct db *db, const char *repos_dir, struct repo *repo, const char *name,
		char **from, char **to, struct err *e)
{
	char what[160];
	int rc;

	*from = repo_path(repos_dir, repo->owner, repo->name);
	*to = repo_path(repos_dir, repo->owner, name);
	snprintf(what, sizeof(what), "%s/%s", repo->owner, name);
	if (!*from || !*to)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	else if (!(rc = rename_row(db, repo, name, e)))
		rc = strcmp(*from, *to) ? move_dir(*from, *to, what, e) : 0;
	if (rc) {
		free(*from);
		free(*to);
		*from = *to = NULL;
		return rc;
	}
	snprintf(repo->name, sizeof(repo->name), "%s", name);
	return 0;
}

/* Closes the repository's live sandboxes and revokes their tokens, in one statement (no
 * request sees one ended with its token alive); their ids go into details. */
static int close_sandboxes(struct db *db, const char *repo_id, json_object *details,
			   struct err *e)
{
	json_object *ids;
	PGresult *res;
	int code = 0;

	res = db_exec(db, e, &code,
		      "WITH ended AS ("
		      "  UPDATE sandboxes SET state = 'closed', end_reason = $2, ended_at = now()"
		      "   WHERE repository_id = $1 AND state IN ('starting', 'ready') RETURNING id),"
		      " revoked AS ("
		      "  UPDATE tokens t SET revoked_at = coalesce(t.revoked_at, now())"
		      "    FROM ended WHERE t.sandbox_id = ended.id RETURNING t.id)"
		      " SELECT id FROM ended ORDER BY id",
		      2, repo_id, REPO_DELETED);
	if (!res)
		return code;
	if (!(ids = json_object_new_array())) {
		PQclear(res);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < PQntuples(res); i++)
		json_object_array_add(ids, json_object_new_string(db_val(res, i, 0)));
	json_object_object_add(details, "sandboxes_closed", ids);
	PQclear(res);
	return 0;
}

int repo_delete(struct db *db, const char *repos_dir, const struct repo *repo,
		json_object *details, char **from, char **to, struct err *e)
{
	struct stat st;
	size_t n = strlen(repos_dir) + strlen(REPO_TRASH) + strlen(repo->id) + 8;
	char what[180];
	int rc;

	*from = *to = NULL;
	if ((rc = close_sandboxes(db, repo->id, details, e)) ||
	    (rc = db_run(db, e, "DELETE FROM repositories WHERE id = $1", 1, repo->id)))
		return rc;
	if (!(*from = repo_path(repos_dir, repo->owner, repo->name)) || !(*to = malloc(n))) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (lstat(*from, &st)) {
		/* Nothing on disk (lost, or never made): the row goes all the same. */
		log_warn("deleting %s/%s: no directory at %s", repo->owner, repo->name, *from);
		free(*from);
		free(*to);
		*from = *to = NULL;
		return 0;
	}
	snprintf(*to, n, "%s/%s", repos_dir, REPO_TRASH);
	if (mkdir(*to, 0750) && errno != EEXIST) {
		rc = err_set(e, ERR_FAIL, "cannot make %s: %s", *to, strerror(errno));
		goto out;
	}
	snprintf(*to, n, "%s/%s/%s.git", repos_dir, REPO_TRASH, repo->id);
	snprintf(what, sizeof(what), "%s/%s (deleted)", repo->owner, repo->name);
	rc = move_dir(*from, *to, what, e);
out:
	if (rc) {
		free(*from);
		free(*to);
		*from = *to = NULL;
	}
	return rc;
}

json_object *repo_json(const struct repo *repo, const char *public_url)
{
	json_object *o = json_object_new_object();
	char full[160], url[512];

	snprintf(full, sizeof(full), "%s/%s", repo->owner, repo->name);
	snprintf(url, sizeof(url), "%s/%s.git", public_url, full);
	json_add_str(o, "owner", repo->owner);
	json_add_str(o, "name", repo->name);
	json_add_str(o, "full_name", full);
	json_add_str(o, "visibility", repo->visibility);
	json_add_str(o, "default_branch", repo->default_branch);
	json_add_bool(o, "archived", repo->archived);
	json_add_str(o, "clone_url", url);
	json_add_str(o, "created_at", repo->created_at);
	/* The SANDBOXD_IMAGES name its sandboxes run; null: the default (SPEC §4). */
	if (repo->sandbox_image[0])
		json_add_str(o, "sandbox_image", repo->sandbox_image);
	else
		json_object_object_add(o, "sandbox_image", NULL);
	return o;
}
