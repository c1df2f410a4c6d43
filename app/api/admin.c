/* api_admin.c: site administration of accounts. The site-admin check is in the dispatcher's
 * route flags; these handlers only validate and act. */
#include <string.h>
#include <strings.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"

static const char *const kinds[] = { "user", "agent", NULL };

int api_admin_accounts_create(struct req *r, struct err *e)
{
	const char *login, *kind = "user", *name = NULL, *email = NULL;
	int site_admin = 0, rc;
	struct account a;

	if ((rc = json_field_string(r->json, "login", 1, 39, &login, e)) < 0 ||
	    (rc = account_valid_login(login, "login", e)) < 0 ||
	    (rc = json_field_enum(r->json, "kind", 0, kinds, &kind, e)) < 0 ||
	    (rc = json_field_bool(r->json, "site_admin", 0, &site_admin, e)) < 0 ||
	    (rc = json_field_string(r->json, "name", 0, 255, &name, e)) < 0 ||
	    (rc = json_field_string(r->json, "email", 0, 255, &email, e)) < 0)
		return rc;
	json_add_str(r->audit_details, "account", login);
	if ((rc = account_create(r->db, login, kind, site_admin, name, email, &a, e)))
		return rc;
	http_json(r, 201, account_json(&a));
	return 0;
}

int api_admin_accounts_update(struct req *r, struct err *e)
{
	int disabled = 0, site_admin = 0, has_disabled, has_admin;
	struct account a;
	int rc;

	if ((has_disabled = json_field_bool(r->json, "disabled", 0, &disabled, e)) < 0)
		return has_disabled;
	if ((has_admin = json_field_bool(r->json, "site_admin", 0, &site_admin, e)) < 0)
		return has_admin;
	json_add_str(r->audit_details, "account", http_path_param(r, 0));
	/* Locking oneself out needs another admin to undo: refuse it. */
	if (strcasecmp(http_path_param(r, 0), r->caller.login) == 0 &&
	    ((has_disabled == 0 && disabled) || (has_admin == 0 && !site_admin)))
		return err_http(e, 422, "you can't disable yourself or drop your own site admin");
	rc = account_update(r->db, http_path_param(r, 0), has_disabled == 0 ? &disabled : NULL,
			    has_admin == 0 ? &site_admin : NULL, &a, e);
	/* Disabled, or no longer site admin: the sandboxes that stopped being allowed end, their
	 * tokens revoked for good (SPEC §2). */
	if (!rc)
		rc = auth_sandboxes_lost(r->db, a.id, NULL, r->audit_details, e);
	if (rc)
		return rc;
	/* What was applied, not the body: the body may hold anything, of any size. */
	json_object *changes = json_object_new_object();
	if (!changes)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (has_disabled == 0)
		json_add_bool(changes, "disabled", disabled);
	if (has_admin == 0)
		json_add_bool(changes, "site_admin", site_admin);
	json_object_object_add(r->audit_details, "changes", changes);
	http_json(r, 200, account_json(&a));
	return 0;
}
