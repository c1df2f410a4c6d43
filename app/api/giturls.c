/* api_giturls.c: minting git URLs, and owners registering the keys that sign their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>
#include "sandboxd/http/auth_req.h"
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/policy.h"
#include "sandboxd/common/banned.h"

static const char *const kinds[] = { "normal", "ephemeral", NULL };

/* Reads {scopes, ttl?, kind?, ref_policies?} into c. */
static int parse_request(struct req *r, struct jwt_claims *c, struct err *e)
{
	json_object *scopes, *pol = NULL;
	const char *kind = "normal";
	int64_t ttl = JWT_DEFAULT_TTL;
	struct policy_list list;
	int rc;

	if (!json_object_object_get_ex(r->json, "scopes", &scopes))
		return err_set(e, ERR_INVALID, "field 'scopes' is required");
	if (!json_object_is_type(scopes, json_type_array) || json_object_array_length(scopes) == 0)
		return err_set(e, ERR_INVALID,
			       "field 'scopes' must be a non-empty array of 'git:read' and 'git:write'");
	for (size_t i = 0; i < json_object_array_length(scopes); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(scopes, i));
		if (!json_object_is_type(json_object_array_get_idx(scopes, i), json_type_string) ||
		    (strcmp(s, "git:read") && strcmp(s, "git:write")))
			return err_set(e, ERR_INVALID,
				       "field 'scopes[%zu]' must be 'git:read' or 'git:write'", i);
		c->scopes |= strcmp(s, "git:read") ? JWT_SCOPE_WRITE : JWT_SCOPE_READ;
	}
	if ((rc = json_field_int(r->json, "ttl", 0, 1, JWT_MAX_TTL, &ttl, e)) < 0 ||
	    (rc = json_field_enum(r->json, "kind", 0, kinds, &kind, e)) < 0)
		return rc;
	json_object_object_get_ex(r->json, "ref_policies", &pol);
	if ((rc = policy_parse(pol, "ref_policies", &list, e)))
		return rc;
	c->n_ref_policies = list.n;
	for (size_t i = 0; i < list.n; i++) {
		snprintf(c->ref_policies[i].pattern, sizeof(c->ref_policies[i].pattern), "%s",
			 list.v[i].pattern);
		c->ref_policies[i].ops = (list.v[i].ops & POLICY_NO_PUSH ? JWT_OP_NO_PUSH : 0) |
					 (list.v[i].ops & POLICY_NO_FORCE_PUSH ? JWT_OP_NO_FORCE_PUSH : 0);
	}
	c->ephemeral = strcmp(kind, "ephemeral") == 0;
	c->iat = (int64_t)time(NULL);
	c->exp = c->iat + ttl;
	return 0;
}

/* The 201: the URL with the token as its Basic password, which git sends on every request. */
static void url_answer(struct req *r, const struct jwt_claims *c, const struct repo *repo,
		       char *tok)
{
	const char *proto = strncmp(r->cfg->public_url, "https://", 8) == 0 ? "https://"
									     : "http://";
	const char *rest = r->cfg->public_url + strlen(proto);
	time_t t = (time_t)c->exp;
	char exp[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(exp, sizeof(exp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object *o = json_object_new_object();
	json_add_str(o, "url", pool_printf(r->pool, "%sx-token:%s@%s/%s/%s.git", proto, tok, rest,
					   repo->owner, repo->name));
	json_add_str(o, "expires_at", exp);
	json_add_str(r->audit_details, "jti", c->jti);
	json_add_str(r->audit_details, "kind", c->ephemeral ? "ephemeral" : "normal");
	json_add_int(r->audit_details, "ttl", c->exp - c->iat);
	json_add_str(r->audit_details, "scopes", c->scopes == (JWT_SCOPE_READ | JWT_SCOPE_WRITE)
			? "git:read git:write" : c->scopes & JWT_SCOPE_WRITE ? "git:write" : "git:read");
	http_json(r, 201, o);
}

int api_git_urls_create(struct req *r, struct err *e)
{
	struct jwt_claims *c = pool_alloc(r->pool, sizeof(*c));
	char *tok = NULL;
	struct repo repo;
	int rc;

	if (!c)
		return err_set(e, ERR_NOMEM, "out of memory");
	/* A URL acts as the account behind the token (for a job token, the admin who made it)
	 * for up to an hour: made from a job token it would outlive it and survive its
	 * revocation. A job token is a git credential itself; it needs no URL. */
	if (r->caller.kind == TOKEN_JOB)
		return err_set(e, ERR_DENIED, "job tokens can't mint git URLs");
	/* The caller must hold every scope asked for, now. */
	if ((rc = parse_request(r, c, e)) ||
	    (rc = auth_repo(r, http_path_param(r, 0), http_path_param(r, 1),
			    c->scopes & JWT_SCOPE_WRITE ? ROLE_WRITE : ROLE_READ,
			    (c->scopes & JWT_SCOPE_WRITE) != 0, &repo, e)))
		return rc;
	snprintf(c->iss, sizeof(c->iss), "%s", repo.owner);
	snprintf(c->sub, sizeof(c->sub), "%s", r->caller.login);
	snprintf(c->owner, sizeof(c->owner), "%.39s", repo.owner);
	snprintf(c->name, sizeof(c->name), "%.100s", repo.name);
	if ((rc = giturl_mint(r->db, c, "", &tok, e)))
		return rc;
	url_answer(r, c, &repo, tok);
	OPENSSL_cleanse(tok, strlen(tok));
	free(tok);
	return 0;
}

int api_user_keys_create(struct req *r, struct err *e)
{
	const char *pem, *proof;
	char kid[JWT_KID_MAX + 1];
	EVP_PKEY *key = NULL;
	struct err why;
	int rc, used = 0;

	if ((rc = auth_user_write(&r->caller, e)) ||
	    (rc = json_field_string(r->json, "public_key", 1, JWT_PEM_MAX, &pem, e)) < 0 ||
	    (rc = json_field_string(r->json, "proof", 1, JWT_MAX_LEN, &proof, e)) < 0)
		return rc;
	if (jwt_key_load_pem(pem, strlen(pem), JWT_KEY_PUBLIC, &key, &why))
		return err_set(e, ERR_INVALID,
			       "field 'public_key' must be a P-256 public key in PEM: %s", why.msg);
	/* A public key is public (any URL's signature gives the service's away): only its
	 * private half, shown by a proof made for this account, may register it. */
	rc = giturl_key_proof_check(key, proof, strlen(proof), r->caller.login,
				    (int64_t)time(NULL), &why);
	if (rc == ERR_INVALID) {
		EVP_PKEY_free(key);
		return err_set(e, ERR_INVALID, "field 'proof' does not prove the key: %s", why.msg);
	}
	if (rc)
		*e = why;
	else
		rc = jwt_kid(key, kid, e);
	EVP_PKEY_free(key);
	if (rc)
		return rc;
	json_add_str(r->audit_details, "kid", kid);
	/* One kid names one key of one holder: the service's or one account's. A second row
	 * would make the kid ambiguous, and every token it signed would fail. */
	if ((rc = giturl_kid_in_use(r->db, kid, &used, e)))
		return rc;
	if (!used)
		rc = db_run(r->db, e,
			    "INSERT INTO account_keys (kid, account_id, public_pem) VALUES ($1, $2, $3)",
			    3, kid, r->caller.account_id, pem);
	if (used || rc == ERR_EXISTS)
		return err_set(e, ERR_EXISTS, "key %s is already registered", kid);
	if (rc)
		return rc;
	json_object *o = json_object_new_object();
	json_add_str(o, "kid", kid);
	http_json(r, 201, o);
	return 0;
}
