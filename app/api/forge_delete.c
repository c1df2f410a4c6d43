/* api_forge_delete.c: deleting a repository (rows, refs and objects; its sandboxes
 * closed) and a registered key (what it signed stops working at once). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/common/banned.h"

/* A directory moved for a request (a deleted or renamed repository's), moved back when
 * the request fails or its transaction does not commit. */
struct moved_dir {
	const char *from, *to;
};

static void move_back(void *arg)
{
	const struct moved_dir *m = arg;

	log_warn("moving %s back to %s: its request did not commit", m->to, m->from);
	if (rename(m->to, m->from))
		log_error("could not move %s back to %s", m->to, m->from);
}

int api_forge_undo_move(struct req *r, char *from, char *to, struct err *e)
{
	struct moved_dir *m;

	if (!from)
		return 0;
	m = pool_alloc(r->pool, sizeof(*m));
	if (m) {
		m->from = pool_strdup(r->pool, from);
		m->to = pool_strdup(r->pool, to);
	}
	if (!m || !m->from || !m->to || http_on_abort(r, move_back, m)) {
		/* Without an undo the move must not stand: back now, and fail. */
		if (rename(to, from))
			log_error("could not move %s back to %s", to, from);
		free(from);
		free(to);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	free(from);
	free(to);
	return 0;
}

int api_repo_delete(struct req *r, struct err *e)
{
	struct repo repo;
	char *from = NULL, *to = NULL;
	int rc;

	/* Archived or not (GitHub deletes archived ones too); an admin's call. */
	if ((rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1), ROLE_ADMIN, 0, &repo,
			    e)))
		return rc;
	/* Deleting and making again would go around branch protection (SPEC §5 item 3). */
	if (r->caller.agent)
		return err_set(e, ERR_DENIED, "agents may not delete repositories");
	if ((rc = repo_delete(r->db, r->cfg->repos_dir, &repo, r->audit_details, &from, &to, e)) ||
	    (rc = api_forge_undo_move(r, from, to, e)))
		return rc;
	http_empty(r, 204);
	return 0;
}

int api_user_keys_delete(struct req *r, struct err *e)
{
	const char *kid = http_path_param(r, 0);
	PGresult *res;
	int rc, code = 0;

	if ((rc = auth_user_write(&r->caller, e)))
		return rc;
	json_add_str(r->audit_details, "kid", kid);
	/* Revoked, not removed: a kid names one key of one holder for ever (giturl_kid_in_use),
	 * and every git URL it signed fails from this commit on (keys are read per request).
	 * Twice is 204 again; someone else's key or an unknown kid is not found. */
	res = db_exec(r->db, e, &code,
		      "UPDATE account_keys SET revoked_at = coalesce(revoked_at, now())"
		      " WHERE kid = $1 AND account_id = $2 RETURNING kid",
		      2, kid, r->caller.account_id);
	if (!res)
		return code;
	if (PQntuples(res) == 0)
		rc = err_set(e, ERR_NOTFOUND, "key not found");
	else
		http_empty(r, 204);
	PQclear(res);
	return rc;
}
