/* lfs_store.h: the LFS objects a repository stores, as the database knows them
 * (sql/033_lfs_objects.sql, decision 0089): their sizes summed for the quotas, a row per
 * upload that lands, and the reaper's collection of the ones no ref points at. */
#ifndef SANDBOXD_LFS_STORE_H
#define SANDBOXD_LFS_STORE_H
#include <stdint.h>
#include "sandboxd/core/db.h"
#include "sandboxd/core/config.h"
#include "sandboxd/common/err.h"

/* What the quotas see of one repository: bytes stored in it and in every repository of
 * its owner, and the limits (SANDBOXD_LFS_REPO_QUOTA_MB, SANDBOXD_LFS_ACCOUNT_QUOTA_MB). */
struct lfs_usage {
	int64_t repo, account;
	int64_t repo_max, account_max;
};

/* The usage of repository repo_id (owned by owner_id). 0, or the db_exec code. */
int lfs_usage_get(struct db *db, const struct config *cfg, const char *repo_id,
		  const char *owner_id, struct lfs_usage *u, struct err *e)
	__attribute__((warn_unused_result));

/* Whether size more bytes fit u: 0 (and u counts them, for the next object of a batch),
 * or 1 with the refusal in why (whysz bytes): "LFS quota exceeded for this repository:
 * <N> MiB" or "… for this account: <N> MiB". */
int lfs_usage_take(struct lfs_usage *u, int64_t size, char *why, size_t whysz)
	__attribute__((warn_unused_result));

/* 1 when repo_id has a row for oid (it is stored: another upload of it adds nothing),
 * 0 when not, or the db_exec code (negative: ERR_*). */
int lfs_object_known(struct db *db, const char *repo_id, const char *oid, struct err *e)
	__attribute__((warn_unused_result));

/* Records oid (size bytes) as stored in repo_id, uploaded now. 0 or the db_exec code. */
int lfs_object_record(struct db *db, const char *repo_id, const char *oid, int64_t size,
		      struct err *e) __attribute__((warn_unused_result));

/* The audit action of a collected object (via "reaper", status 200, details oid, size). */
#define LFS_COLLECT_ACTION "lfs.collect"

/* The reaper's collection (decision 0089): every stored object whose upload and last
 * reference are both older than SANDBOXD_LFS_GRACE is looked for in the pointer files
 * (lfs_pointer_oid) of every blob that any ref of its repository reaches, both namespaces,
 * tags and notes included. One found gets referenced_at = now (kept another grace);
 * one not found loses its row, then its file, with an audit row. A repository whose refs
 * or objects cannot all be read collects nothing (fail closed). Returns the number
 * collected, or a negative ERR_* when the database cannot be read. */
int lfs_collect(const struct config *cfg, struct db *db, struct err *e)
	__attribute__((warn_unused_result));

#endif
