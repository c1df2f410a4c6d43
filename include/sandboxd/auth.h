/* auth.h: credentials and roles. The caller is resolved from the request's credential on
 * every request (roles and account state are never cached), and repository access is
 * decided here, in one place, for every route. */
#ifndef SANDBOXD_AUTH_H
#define SANDBOXD_AUTH_H
#include "sandboxd/http.h"

enum role { ROLE_NONE = 0, ROLE_READ, ROLE_WRITE, ROLE_ADMIN };

struct repo {
	char id[HTTP_ID_MAX];
	char owner_id[HTTP_ID_MAX];
	char owner[48];
	char name[104];
	char visibility[8];
	char default_branch[256];
	char created_at[32];
	int archived;
	char sandbox_image[33];      /* the SANDBOXD_IMAGES name its sandboxes run; "": default */
	enum role role;              /* the caller's effective role: role capped by the token */
};

/* Resolves r->caller from the Authorization header. Returns 0 (possibly anonymous), ERR_DENIED
 * when a credential was given but refused (r->auth_failure says why), or ERR_DB. */
int auth_resolve(struct req *r, struct err *e) __attribute__((warn_unused_result));

const char *role_name(enum role role);
/* "read", "write", "admin" to a role; ROLE_NONE for anything else. */
enum role role_parse(const char *s);

/* Loads owner/name and the caller's role on it. Returns 0 when the caller may go on;
 * ERR_NOTFOUND "repository not found" when the caller may not see it (ERR_AUTH for a git
 * client without credentials); ERR_DENIED when the role is below need, or when writes is
 * set and the repository is archived; or ERR_DB. */
int auth_repo(struct req *r, const char *owner, const char *name, enum role need, int writes,
	      struct repo *out, struct err *e) __attribute__((warn_unused_result));

/* The caller of a git request (auth_resolve; a git URL token only on its own repository,
 * else ERR_AUTH "bad credentials") and its role on owner/name: read, or with push write
 * and not archived (auth_repo). Smart HTTP and Git LFS share it. */
int auth_git(struct req *r, const char *owner, const char *name, int push, struct repo *out,
	     struct err *e) __attribute__((warn_unused_result));

/* 0 when the caller holds a write-scoped personal token (job tokens may not act on their
 * account), else ERR_DENIED. */
int auth_need_user_write(const struct req *r, struct err *e) __attribute__((warn_unused_result));

/* The end_reason of a sandbox whose creator lost access. */
#define AUTH_LOST_ACCESS "the creator lost access"

/* After a change of roles or of an account: ends every live sandbox of account_id (on
 * repo_id, or on every repository when repo_id is NULL) whose creator no longer holds the
 * write role there (removed, demoted to read, disabled, site admin dropped), and revokes
 * its sandbox token for good (SPEC §2): giving the access back revives neither. The rows
 * change in the caller's transaction; the containers go at the reaper's next pass (it
 * removes every container that no live sandbox owns). The ended ids are added to details
 * (when not NULL) as "sandboxes_ended". Returns 0 or ERR_DB/ERR_FAIL/ERR_NOMEM. */
int auth_sandboxes_lost(struct db *db, const char *account_id, const char *repo_id,
			json_object *details, struct err *e) __attribute__((warn_unused_result));

/* Inserts a token for account (kind personal or job; repo_id for job tokens, else NULL) and
 * writes the token into out. expires_in seconds, 0 for none. The id and expiry (RFC 3339 or
 * "" for none) are returned through id/expires_at. */
int auth_token_create(struct db *db, enum token_kind kind, const char *account_id,
		      const char *repo_id, int write, long expires_in, const char *note,
		      char out[TOKEN_LEN + 1], char id[HTTP_ID_MAX], char expires_at[32],
		      struct err *e) __attribute__((warn_unused_result));

/* A read about the whole service (/metrics, /admin): a site admin's token of either scope;
 * 401 without credentials, 403 for job tokens and for others, with SPEC's texts. */
int auth_site_admin_read(const struct caller *c, struct err *e) __attribute__((warn_unused_result));

#endif
