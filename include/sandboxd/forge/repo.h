/* repo.h: hosted repositories, in the database and on disk (libgit2). A repository is created
 * row first, then on disk; the caller's transaction makes the pair atomic (see repo_create). */
#ifndef SANDBOXD_REPO_H
#define SANDBOXD_REPO_H
#include <json-c/json.h>
#include "sandboxd/forge/auth.h"
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"

/* 1 to 100 of letters, digits, '.', '-', '_'; not starting with '.', not ending in ".git"
 * (so "." and ".." are refused too). The message names field. */
int repo_valid_name(const char *name, const char *field, struct err *e)
	__attribute__((warn_unused_result));
/* A branch name git accepts as refs/heads/<name>. */
int repo_valid_branch(const char *branch, const char *field, struct err *e)
	__attribute__((warn_unused_result));

/* "<repos_dir>/<owner>/<name>.git", malloc'd (the caller frees), or NULL out of memory. */
char *repo_path(const char *repos_dir, const char *owner, const char *name)
	__attribute__((warn_unused_result));

/* Inserts the row and creates the bare repository with HEAD at branch. Must run inside a
 * transaction: on success *path (malloc'd, the caller frees) names the new directory, which
 * the caller removes with repo_remove_dir if the transaction does not commit. */
int repo_create(struct db *db, const char *repos_dir, const char *owner_id, const char *owner,
		const char *name, const char *visibility, const char *branch, struct repo *out,
		char **path, struct err *e) __attribute__((warn_unused_result));
/* Points HEAD of the bare repository at refs/heads/<branch>. */
int repo_set_head(const char *repos_dir, const struct repo *repo, const char *branch,
		  struct err *e) __attribute__((warn_unused_result));
/* 1 when ref (a full stored name) points at oid (40 hex digits), or is absent and oid is
 * all zeros; 0 when not, or when the repository cannot be read. */
int repo_ref_is(const char *repos_dir, const struct repo *repo, const char *ref,
		const char *oid) __attribute__((warn_unused_result));
/* Renames the repository to name (already valid): the row, the directory on disk, and the
 * old name kept in repo_redirects so that it answers 301 (unless only its case changed:
 * names are unique case-insensitively, the old one still finds the repository). The new
 * name takes itself back from any redirect of the owner's. Must run inside a transaction:
 * on success the directory has moved from *from to *to (both malloc'd, the caller frees),
 * and the caller moves it back if the transaction does not commit. repo then holds the new
 * name. ERR_EXISTS "repository o/n already exists" (a row has the name) or "… already
 * exists on disk" (a directory no row owns), ERR_FAIL when the disk refuses. */
int repo_rename(struct db *db, const char *repos_dir, struct repo *repo, const char *name,
		char **from, char **to, struct err *e) __attribute__((warn_unused_result));

/* Where deleted repositories wait for the reaper: <repos_dir>/.trash/<id>.git (no login
 * starts with '.', so no owner's folder is ever named so). */
#define REPO_TRASH ".trash"
/* Deletes the repository: its live sandboxes closed (end_reason REPO_DELETED, their tokens
 * revoked; the reaper removes their containers), its row with its collaborators, job
 * tokens and old names, and its directory moved under REPO_TRASH, which the reaper removes
 * once no row has the id (forge_sweep). Must run inside a transaction: *from and *to
 * (malloc'd, the caller frees; both NULL when there was no directory) say where the
 * directory went, for the caller to move it back if the transaction does not commit. The
 * closed sandboxes' ids are added to details as "sandboxes_closed". */
#define REPO_DELETED "repository deleted"
int repo_delete(struct db *db, const char *repos_dir, const struct repo *repo,
		json_object *details, char **from, char **to, struct err *e)
	__attribute__((warn_unused_result));

/* Removes a directory tree; used only to undo repo_create. */
void repo_remove_dir(const char *path);
/* {owner, name, full_name, visibility, default_branch, archived, clone_url, created_at}. */
json_object *repo_json(const struct repo *repo, const char *public_url);

#endif
