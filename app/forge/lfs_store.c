/* lfs_store.c: the LFS objects' rows, summed for the quotas (lfs_store.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/forge/lfs_store.h"
#include "sandboxd/common/banned.h"

int lfs_usage_get(struct db *db, const struct config *cfg, const char *repo_id,
		  const char *owner_id, struct lfs_usage *u, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT coalesce(sum(o.size) FILTER (WHERE o.repository_id = $1), 0),"
				"       coalesce(sum(o.size), 0)"
				"  FROM lfs_objects o JOIN repositories r ON r.id = o.repository_id"
				" WHERE r.owner_id = $2",
				2, repo_id, owner_id);

	if (!res)
		return code;
	u->repo = strtoll(db_val(res, 0, 0), NULL, 10);
	u->account = strtoll(db_val(res, 0, 1), NULL, 10);
	u->repo_max = cfg->lfs_repo_quota;
	u->account_max = cfg->lfs_account_quota;
	PQclear(res);
	return 0;
}

int lfs_usage_take(struct lfs_usage *u, int64_t size, char *why, size_t whysz)
{
	if (size > u->repo_max - u->repo) {
		snprintf(why, whysz, "LFS quota exceeded for this repository: %" PRId64 " MiB",
			 u->repo_max >> 20);
		return 1;
	}
	if (size > u->account_max - u->account) {
		snprintf(why, whysz, "LFS quota exceeded for this account: %" PRId64 " MiB",
			 u->account_max >> 20);
		return 1;
	}
	u->repo += size;
	u->account += size;
	return 0;
}

int lfs_object_known(struct db *db, const char *repo_id, const char *oid, struct err *e)
{
	int code = 0, n;
	PGresult *res = db_exec(db, e, &code,
				"SELECT 1 FROM lfs_objects WHERE repository_id = $1 AND oid = $2",
				2, repo_id, oid);

	if (!res)
		return code < 0 ? code : ERR_FAIL;
	n = PQntuples(res);
	PQclear(res);
	return n > 0;
}

int lfs_object_record(struct db *db, const char *repo_id, const char *oid, int64_t size,
		      struct err *e)
{
	char sz[24];

	snprintf(sz, sizeof(sz), "%" PRId64, size);
	return db_run(db, e,
		      "INSERT INTO lfs_objects (repository_id, oid, size) VALUES ($1, $2, $3)"
		      " ON CONFLICT (repository_id, oid) DO UPDATE"
		      "   SET size = excluded.size, uploaded_at = now()",
		      3, repo_id, oid, sz);
}
