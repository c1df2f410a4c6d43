/* account.c: accounts in the database. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"


int account_valid_login(const char *login, const char *field, struct err *e)
{
	size_t n = strlen(login);
	int ok = n >= 1 && n <= 39 && login[0] != '-' && login[n - 1] != '-';

	for (size_t i = 0; ok && i < n; i++) {
		char c = login[i];
		if (c == '-')
			ok = login[i + 1] != '-';
		else
			ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
	}
	if (!ok)
		return err_set(e, ERR_INVALID,
			       "field '%s' must be 1 to 39 letters, digits or single hyphens, "
			       "not starting or ending with a hyphen", field);
	return 0;
}

void account_from_row(const PGresult *res, int row, int col, struct account *a)
{
	const char *v;

	memset(a, 0, sizeof(*a));
	snprintf(a->id, sizeof(a->id), "%s", db_val(res, row, col));
	snprintf(a->login, sizeof(a->login), "%s", db_val(res, row, col + 1));
	snprintf(a->kind, sizeof(a->kind), "%s", db_val(res, row, col + 2));
	a->site_admin = db_bool(res, row, col + 3);
	a->disabled = db_bool(res, row, col + 4);
	if ((v = db_val(res, row, col + 5))) {
		a->has_name = 1;
		snprintf(a->name, sizeof(a->name), "%s", v);
	}
	if ((v = db_val(res, row, col + 6))) {
		a->has_email = 1;
		snprintf(a->email, sizeof(a->email), "%s", v);
	}
	snprintf(a->created_at, sizeof(a->created_at), "%s", db_val(res, row, col + 7));
}

/* Fills out from a one-row result; ERR_NOTFOUND naming what when there is no row. */
static int take(PGresult *res, int code, struct account *out, const char *what, struct err *e)
{
	if (!res)
		return code;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOTFOUND, "account '%s' not found", what);
	}
	account_from_row(res, 0, 0, out);
	PQclear(res);
	return 0;
}

int account_create(struct db *db, const char *login, const char *kind, int site_admin,
		   const char *name, const char *email, struct account *out, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"INSERT INTO accounts (login, kind, site_admin, name, email)"
				" VALUES ($1, $2, $3, $4, $5) RETURNING " ACCOUNT_COLUMNS,
				5, login, kind, site_admin ? "true" : "false", name, email);

	if (!res && code == ERR_EXISTS)
		return err_set(e, ERR_EXISTS, "account '%s' already exists", login);
	return take(res, code, out, login, e);
}

int account_load(struct db *db, const char *login, struct account *out, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT " ACCOUNT_COLUMNS " FROM accounts WHERE lower(login) = lower($1)",
				1, login);

	return take(res, code, out, login, e);
}

int account_load_id(struct db *db, const char *id, struct account *out, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT " ACCOUNT_COLUMNS " FROM accounts WHERE id = $1", 1, id);

	return take(res, code, out, id, e);
}

int account_update(struct db *db, const char *login, const int *disabled, const int *site_admin,
		   struct account *out, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"UPDATE accounts SET disabled = coalesce($2::boolean, disabled),"
				"       site_admin = coalesce($3::boolean, site_admin)"
				" WHERE lower(login) = lower($1) RETURNING " ACCOUNT_COLUMNS,
				3, login, disabled ? (*disabled ? "true" : "false") : NULL,
				site_admin ? (*site_admin ? "true" : "false") : NULL);

	return take(res, code, out, login, e);
}

json_object *account_json(const struct account *a)
{
	json_object *o = json_object_new_object();

	json_add_str(o, "login", a->login);
	json_add_str(o, "kind", a->kind);
	json_add_bool(o, "site_admin", a->site_admin);
	json_add_bool(o, "disabled", a->disabled);
	json_add_str(o, "name", a->has_name ? a->name : NULL);
	json_add_str(o, "email", a->has_email ? a->email : NULL);
	json_add_str(o, "created_at", a->created_at);
	return o;
}
