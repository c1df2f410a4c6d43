/* account.h: accounts in the database, shared by the REST routes and sandboxctl. */
#ifndef SANDBOXD_ACCOUNT_H
#define SANDBOXD_ACCOUNT_H
#include <json-c/json.h>
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"

struct account {
	char id[24];
	char login[48];
	char kind[8];
	int site_admin;
	int disabled;
	char name[256];
	char email[256];
	int has_name, has_email;
	char created_at[32];
};

/* The columns account_from_row reads, in order; prefix them with a table alias as needed. */
#define ACCOUNT_COLUMNS \
	"id, login, kind, site_admin, disabled, name, email, rfc3339(created_at)"
#define ACCOUNT_COLUMNS_A \
	"a.id, a.login, a.kind, a.site_admin, a.disabled, a.name, a.email, rfc3339(a.created_at)"

/* Fills a from the ACCOUNT_COLUMNS that start at column col of row. */
void account_from_row(const PGresult *res, int row, int col, struct account *a);

/* GitHub's rule: 1 to 39 letters, digits and single hyphens, not at either end. The message
 * names field. */
int account_valid_login(const char *login, const char *field, struct err *e)
	__attribute__((warn_unused_result));
/* ERR_EXISTS when the login is taken (case-insensitively). */
int account_create(struct db *db, const char *login, const char *kind, int site_admin,
		   const char *name, const char *email, struct account *out, struct err *e)
	__attribute__((warn_unused_result));
/* By login (case-insensitive). ERR_NOTFOUND "account 'x' not found". */
int account_load(struct db *db, const char *login, struct account *out, struct err *e)
	__attribute__((warn_unused_result));
int account_load_id(struct db *db, const char *id, struct account *out, struct err *e)
	__attribute__((warn_unused_result));
/* Sets disabled and/or site_admin (a NULL pointer leaves the value). */
int account_update(struct db *db, const char *login, const int *disabled, const int *site_admin,
		   struct account *out, struct err *e) __attribute__((warn_unused_result));
/* {login, kind, site_admin, disabled, name, email, created_at}; the caller owns it. */
json_object *account_json(const struct account *a);

#endif
