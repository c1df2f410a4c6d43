/* repo.h: hosted repositories, in the database and on disk (libgit2). A repository is created
 * row first, then on disk; the caller's transaction makes the pair atomic (see repo_create). */
#ifndef SANDBOXD_REPO_H
#define SANDBOXD_REPO_H
#include <json-c/json.h>
#include "sandboxd/auth.h"
#include "sandboxd/db.h"
#include "sandboxd/err.h"

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
/* Removes a directory tree; used only to undo repo_create. */
void repo_remove_dir(const char *path);
/* {owner, name, full_name, visibility, default_branch, archived, clone_url, created_at}. */
json_object *repo_json(const struct repo *repo, const char *public_url);

#endif
