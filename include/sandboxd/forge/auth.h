/* auth.h: credentials and roles. The caller is resolved from the request's credential on
 * every request (roles and account state are never cached), and repository access is
 * decided here, in one place, for every route. */
#ifndef SANDBOXD_AUTH_H
#define SANDBOXD_AUTH_H
#include <json-c/json.h>
#include "sandboxd/common/err.h"
#include "sandboxd/core/db.h"
#include "sandboxd/forge/account.h"
#include "sandboxd/lib/pool.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/proto/token.h"

/* Who is calling, resolved from the credential on every request. */
struct caller {
	int authenticated;
	int basic;                   /* the credential came as HTTP Basic (a browser replays it) */
	enum token_kind kind;
	char token_id[DB_ID_MAX];
	char account_id[DB_ID_MAX];
	char login[48];
	int agent;                   /* the account is an agent */
	int site_admin;
	struct account account;      /* the whole row, read with the token */
	int scope_write;             /* the token has write scope (write includes read) */
	char job_repo_id[DB_ID_MAX]; /* job tokens: the one repository they serve */
	/* git URL tokens (kind TOKEN_JWT): their repository, kind and ref policies. */
	char jwt_repo[160];
	int jwt_ephemeral;
	const char *jwt_policies;    /* JSON array in the request's pool, or NULL */
	char jwt_jti[JWT_JTI_MAX + 1]; /* for the audit row */
	char jwt_kid[JWT_KID_MAX + 1];
};

enum role { ROLE_NONE = 0, ROLE_READ, ROLE_WRITE, ROLE_ADMIN };

struct repo {
	char id[DB_ID_MAX];
	char owner_id[DB_ID_MAX];
	char owner[48];
	char name[104];
	char visibility[8];
	char default_branch[256];
	char created_at[32];
	int archived;
	char sandbox_image[33];      /* the SANDBOXD_IMAGES name its sandboxes run; "": default */
	enum role role;              /* the caller's effective role: role capped by the token */
};

/* Resolves *c from an Authorization header's value (NULL: none); git URL tokens (JWTs) only
 * when git is set. Returns 0 (possibly anonymous), ERR_DENIED when a credential was given but
 * refused (*failure says why, for the audit row), or ERR_DB. */
int auth_credential(struct db *db, struct pool *pool, const char *authorization, int git,
		    struct caller *c, const char **failure, struct err *e)
	__attribute__((warn_unused_result));

const char *role_name(enum role role);
/* "read", "write", "admin" to a role; ROLE_NONE for anything else. */
enum role role_parse(const char *s);

/* auth_access's flags. */
#define AUTH_WRITES   1u  /* the caller means to write: an archived repository refuses */
#define AUTH_GIT      2u  /* a git client: no credential and no access is ERR_AUTH (the
			     challenge), so that it asks for one */
#define AUTH_NO_MOVES 4u  /* a renamed repository's old name is no redirect (MCP's tools
			     name repositories in arguments, not in a URL) */

/* Loads owner/name and c's role on it into out. Returns 0 when the caller may go on;
 * ERR_NOTFOUND "repository not found" when the caller may not see it (ERR_AUTH with
 * AUTH_GIT and no credential); ERR_DENIED when the role is below need, or with AUTH_WRITES
 * when the repository is archived; an ERR_ANSWER of status 301 when owner/name is a name
 * the repository left and the caller may see it (out holds it under its new name); or
 * ERR_DB. out->role is set whenever the repository was found and the caller may see it. */
int auth_access(struct db *db, const struct caller *c, const char *owner, const char *name,
		enum role need, unsigned flags, struct repo *out, struct err *e)
	__attribute__((warn_unused_result));

/* 0 when the caller holds a write-scoped personal token (job tokens may not act on their
 * account), else ERR_DENIED. */
int auth_user_write(const struct caller *c, struct err *e) __attribute__((warn_unused_result));

/* The end_reason of a sandbox whose creator lost access. */
#define AUTH_LOST_ACCESS "the creator lost access"

/* After a change of roles or of an account: ends every live sandbox of account_id (on
 * repo_id, or on every repository when repo_id is NULL) whose creator no longer holds the
 * write role there (removed, demoted to read, disabled, site admin dropped), and revokes
 * its sandbox token for good (SPEC §2); deletes every preview account_id made there that
 * it may no longer make (the write role, and the sandbox its own or the admin role:
 * decision 0079): giving the access back revives none of them. The rows change in the
 * caller's transaction; the containers go at the reaper's next pass (it removes every
 * container that no live sandbox owns). The ended ids are added to details (when not
 * NULL) as "sandboxes_ended", the number of previews deleted as "previews_deleted".
 * Returns 0 or ERR_DB/ERR_FAIL/ERR_NOMEM. */
int auth_sandboxes_lost(struct db *db, const char *account_id, const char *repo_id,
			json_object *details, struct err *e) __attribute__((warn_unused_result));

/* Inserts a token for account (kind personal or job; repo_id for job tokens, else NULL) and
 * writes the token into out. expires_in seconds, 0 for none. The id and expiry (RFC 3339 or
 * "" for none) are returned through id/expires_at. */
int auth_token_create(struct db *db, enum token_kind kind, const char *account_id,
		      const char *repo_id, int write, long expires_in, const char *note,
		      char out[TOKEN_LEN + 1], char id[DB_ID_MAX], char expires_at[32],
		      struct err *e) __attribute__((warn_unused_result));

/* A read about the whole service (/metrics, /admin): a site admin's token of either scope;
 * 401 without credentials, 403 for job tokens and for others, with SPEC's texts. */
int auth_site_admin_read(const struct caller *c, struct err *e) __attribute__((warn_unused_result));

#endif
