/* giturl.c: keys for git URL tokens, and their verification on git requests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/keyfile.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/randid.h"
#include "sandboxd/common/banned.h"

/* The key of SANDBOXD_SIGNING_KEY_FILE, loaded before the fork; NULL: none. */
static EVP_PKEY *file_key;
static char file_kid[JWT_KID_MAX + 1];

int giturl_key_file_load(const char *path, struct err *e)
{
	char pem[JWT_PEM_MAX + 1];
	size_t n = 0;
	int rc = keyfile_read(path, pem, JWT_PEM_MAX, &n, e);

	if (!rc && jwt_key_load_pem(pem, (size_t)n, JWT_KEY_PRIVATE, &file_key, e)) {
		char why[sizeof(e->msg)];

		snprintf(why, sizeof(why), "%s", e->msg);
		rc = err_set(e, ERR_INVALID, "'%s': %s", path, why);
	}
	if (!rc && (rc = jwt_kid(file_key, file_kid, e))) {
		EVP_PKEY_free(file_key);
		file_key = NULL;
	}
	OPENSSL_cleanse(pem, sizeof(pem));
	return rc;
}

int giturl_signing_key(struct db *db, EVP_PKEY **key, char kid[JWT_KID_MAX + 1],
		       struct err *e)
{
	PGresult *res;
	char *pem = NULL;
	int rc, code = 0;

	*key = NULL;
	if (file_key) {
		if (!EVP_PKEY_up_ref(file_key))
			return err_set(e, ERR_FAIL, "EVP_PKEY_up_ref failed");
		*key = file_key;
		snprintf(kid, JWT_KID_MAX + 1, "%s", file_kid);
		return 0;
	}
	res = db_exec(db, e, &code,
		      "SELECT kid, private_pem FROM signing_keys WHERE retired_at IS NULL"
		      " ORDER BY created_at DESC LIMIT 1", 0);
	if (!res)
		return code;
	if (PQntuples(res) == 1) {
		snprintf(kid, JWT_KID_MAX + 1, "%s", db_val(res, 0, 0));
		rc = jwt_key_load_pem(db_val(res, 0, 1), strlen(db_val(res, 0, 1)),
				      JWT_KEY_PRIVATE, key, e);
		PQclear(res);
		return rc;
	}
	PQclear(res);
	/* First use: make one. Two workers racing both succeed; both keys verify. */
	if ((rc = jwt_key_generate(key, e)) || (rc = jwt_kid(*key, kid, e)) ||
	    (rc = jwt_key_pem(*key, JWT_KEY_PRIVATE, &pem, e)))
		goto out;
	rc = db_run(db, e, "INSERT INTO signing_keys (kid, private_pem) VALUES ($1, $2)", 2, kid,
		    pem);
	if (!rc)
		log_info("created signing key %s", kid);
out:
	if (pem) {
		OPENSSL_cleanse(pem, strlen(pem));
		free(pem);
	}
	if (rc) {
		EVP_PKEY_free(*key);
		*key = NULL;
	}
	return rc;
}

int giturl_sign(EVP_PKEY *key, struct jwt_claims *c, char **tok, struct err *e)
{
	char kid[JWT_KID_MAX + 1];
	int rc;

	snprintf(c->aud, sizeof(c->aud), "%s", GITURL_AUDIENCE);
	if ((rc = jwt_kid(key, kid, e)))
		return rc;
	return jwt_sign(key, kid, c, tok, e);
}

int giturl_mint(struct db *db, struct jwt_claims *c, const char *jti_prefix, char **tok,
		struct err *e)
{
	char kid[JWT_KID_MAX + 1];
	EVP_PKEY *key = NULL;
	int rc;

	if (randid(c->jti, sizeof(c->jti), jti_prefix, 16))
		return err_set(e, ERR_FAIL, "RNG failed");
	if (!(rc = giturl_signing_key(db, &key, kid, e)))
		rc = giturl_sign(key, c, tok, e);
	EVP_PKEY_free(key);
	return rc;
}

int giturl_kid_in_use(struct db *db, const char *kid, int *used, struct err *e)
{
	PGresult *res;
	int code = 0;

	*used = file_key && strcmp(kid, file_kid) == 0;
	if (*used)
		return 0;
	res = db_exec(db, e, &code,
		      "SELECT EXISTS (SELECT 1 FROM signing_keys WHERE kid = $1)"
		      "    OR EXISTS (SELECT 1 FROM account_keys WHERE kid = $1)",
		      1, kid);
	if (!res)
		return code;
	*used = db_bool(res, 0, 0);
	PQclear(res);
	return 0;
}

/* Parsed keys by kid. A kid is the thumbprint of its public key, so the same kid always
 * names the same key: the database is still asked every time (revocation, owner), only
 * the PEM parsing (~0.5 ms for a private key) is saved. */
#define KEY_CACHE 8
static struct {
	char kid[JWT_KID_MAX + 1];
	EVP_PKEY *key;
} cache[KEY_CACHE];
static unsigned cache_next;

static EVP_PKEY *cached(const char *kid)
{
	for (int i = 0; i < KEY_CACHE; i++)
		if (cache[i].key && strcmp(cache[i].kid, kid) == 0 && EVP_PKEY_up_ref(cache[i].key))
			return cache[i].key;
	return NULL;
}

static void remember(const char *kid, EVP_PKEY *key)
{
	unsigned i = cache_next++ % KEY_CACHE;

	if (!EVP_PKEY_up_ref(key))
		return;
	EVP_PKEY_free(cache[i].key);
	cache[i].key = key;
	snprintf(cache[i].kid, sizeof(cache[i].kid), "%s", kid);
}

/* The key named kid: the service's (owner_id empty) or an owner's registered one. */
static int key_for(struct db *db, const char *kid, EVP_PKEY **key, char owner_id[DB_ID_MAX],
		   struct err *e)
{
	PGresult *res;
	int rc, code = 0;

	if (file_key && strcmp(kid, file_kid) == 0 && EVP_PKEY_up_ref(file_key)) {
		*key = file_key;
		owner_id[0] = 0;
		return 0;
	}
	res = db_exec(db, e, &code,
		      "SELECT private_pem, NULL, 'private' FROM signing_keys WHERE kid = $1"
		      " UNION ALL"
		      " SELECT public_pem, account_id::text, 'public' FROM account_keys"
		      "  WHERE kid = $1 AND revoked_at IS NULL",
		      1, kid);
	if (!res)
		return code;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_DENIED, "unknown key id");
	}
	const char *pem = db_val(res, 0, 0);
	snprintf(owner_id, DB_ID_MAX, "%s", db_val(res, 0, 1) ? db_val(res, 0, 1) : "");
	if ((*key = cached(kid))) {
		PQclear(res);
		return 0;
	}
	rc = jwt_key_load_pem(pem, strlen(pem),
			      strcmp(db_val(res, 0, 2), "private") ? JWT_KEY_PUBLIC : JWT_KEY_PRIVATE,
			      key, e);
	PQclear(res);
	if (rc)
		return ERR_DENIED;
	remember(kid, *key);
	return 0;
}

int giturl_resolve(struct db *db, struct pool *pool, const char *tok, size_t n,
		   struct caller *out, const char **failure, struct err *e)
{
	struct jwt_unverified un;
	struct jwt_claims *c = NULL;
	struct account a;
	EVP_PKEY *key = NULL;
	char owner_id[DB_ID_MAX];
	int rc;

	if (jwt_peek(tok, n, &un, e)) {
		*failure = "malformed git URL token";
		return ERR_DENIED;
	}
	if ((rc = key_for(db, un.kid, &key, owner_id, e))) {
		*failure = rc == ERR_DENIED ? "git URL token: unknown key" : NULL;
		return rc == ERR_DB ? ERR_DB : ERR_DENIED;
	}
	if (!(c = pool_alloc(pool, sizeof(*c)))) {
		EVP_PKEY_free(key);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	rc = jwt_verify(tok, n, key, GITURL_AUDIENCE, (int64_t)time(NULL), c, e);
	EVP_PKEY_free(key);
	if (rc) {
		*failure = pool_printf(pool, "git URL token: %s", e->msg);
		return ERR_DENIED;
	}
	/* Who the token acts as: the minting account for ours, the key's owner for theirs. */
	if (owner_id[0]) {
		rc = account_load_id(db, owner_id, &a, e);
		if (!rc && (strcasecmp(a.login, c->owner) || strcasecmp(a.login, c->iss))) {
			*failure = "git URL token: an owner's key signs only for its own "
					  "repositories";
			return ERR_DENIED;
		}
	} else {
		rc = account_load(db, c->sub, &a, e);
	}
	if (rc == ERR_DB)
		return rc;
	if (rc) {
		*failure = "git URL token: unknown account";
		return ERR_DENIED;
	}
	if (a.disabled) {
		*failure = "account disabled";
		return ERR_DENIED;
	}
	out->authenticated = 1;
	out->kind = TOKEN_JWT;
	out->account = a;
	snprintf(out->account_id, sizeof(out->account_id), "%s", a.id);
	snprintf(out->login, sizeof(out->login), "%s", a.login);
	out->agent = strcmp(a.kind, "agent") == 0;
	out->site_admin = a.site_admin;
	out->scope_write = (c->scopes & JWT_SCOPE_WRITE) != 0;
	snprintf(out->jwt_repo, sizeof(out->jwt_repo), "%s/%s", c->owner, c->name);
	out->jwt_ephemeral = c->ephemeral;
	json_object *pol = jwt_ref_policies_json(c);
	if (!pol)
		return err_set(e, ERR_NOMEM, "out of memory");
	out->jwt_policies = pool_strdup(pool, json_object_to_json_string_ext(
							       pol, JSON_C_TO_STRING_PLAIN));
	json_object_put(pol);
	snprintf(out->jwt_jti, sizeof(out->jwt_jti), "%s", c->jti);
	snprintf(out->jwt_kid, sizeof(out->jwt_kid), "%s", c->kid);
	return 0;
}

/* --- proofs of possession for POST /user/keys ------------------------------------------ */

#define PROOF_HEADER_MAX 1024
#define PROOF_PAYLOAD_MAX 2048

int giturl_key_proof_make(EVP_PKEY *key, const char *login, int64_t now, char **out,
			  struct err *e)
{
	char kid[JWT_KID_MAX + 1], *tok = NULL;
	char sig64[128];
	unsigned char sig[64];
	json_object *h = NULL, *p = NULL;
	const char *hs, *ps;
	size_t hn, pn, n;
	int rc;

	*out = NULL;
	if ((rc = jwt_kid(key, kid, e)))
		return rc;
	h = json_object_new_object();
	p = json_object_new_object();
	if (!h || !p) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	json_add_str(h, "alg", "ES256");
	json_add_str(h, "typ", "JWT");
	json_add_str(h, "kid", kid);
	json_add_str(p, "aud", GITURL_PROOF_AUDIENCE);
	json_add_str(p, "sub", login);
	json_add_int(p, "iat", now);
	json_add_int(p, "exp", now + GITURL_PROOF_TTL);
	hs = json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN);
	ps = json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN);
	hn = base64url_encoded_size(strlen(hs));
	pn = base64url_encoded_size(strlen(ps));
	n = hn + pn + sizeof(sig64) + 2;
	if (!(tok = malloc(n))) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	base64url_encode((const unsigned char *)hs, strlen(hs), tok);
	tok[hn - 1] = '.';
	base64url_encode((const unsigned char *)ps, strlen(ps), tok + hn);
	if ((rc = jwt_es256_sign(key, tok, strlen(tok), sig, e)))
		goto out;
	base64url_encode(sig, sizeof(sig), sig64);
	snprintf(tok + strlen(tok), n - strlen(tok), ".%s", sig64);
	*out = tok;
	tok = NULL;
out:
	free(tok);
	json_object_put(h);
	json_object_put(p);
	return rc;
}

/* One base64url part of a compact JWS decoded and parsed as a JSON object. */
static int proof_part(const char *s, size_t n, size_t max, json_object **out, struct err *e)
{
	unsigned char buf[PROOF_PAYLOAD_MAX + 4];
	size_t len;

	*out = NULL;
	if (n == 0 || n / 4 * 3 > max ||
	    base64url_decode(s, n, buf, sizeof(buf), &len) || len > max)
		return err_set(e, ERR_INVALID, "it is not a compact JWS (header.payload.signature)");
	if (json_parse_object((const char *)buf, len, out, e))
		return err_set(e, ERR_INVALID, "its header and payload must be JSON objects");
	return 0;
}

/* The string member name of o, or NULL. */
static const char *str_member(json_object *o, const char *name)
{
	json_object *v;

	if (!json_object_object_get_ex(o, name, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The integer member name of o into *v; -1 when absent or not an integer. */
static int int_member(json_object *o, const char *name, int64_t *v)
{
	json_object *j;

	if (!json_object_object_get_ex(o, name, &j) || !json_object_is_type(j, json_type_int))
		return -1;
	*v = json_object_get_int64(j);
	return 0;
}

int giturl_key_proof_check(EVP_PKEY *key, const char *proof, size_t n, const char *login,
			   int64_t now, struct err *e)
{
	char kid[JWT_KID_MAX + 1];
	unsigned char sig[66];
	json_object *h = NULL, *p = NULL;
	const char *d1, *d2, *v;
	size_t siglen;
	int64_t iat, exp;
	int rc;

	if ((rc = jwt_kid(key, kid, e)))
		return rc;
	d1 = n <= JWT_MAX_LEN ? memchr(proof, '.', n) : NULL;
	d2 = d1 ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - proof)) : NULL;
	if (!d1 || !d2 || memchr(d2 + 1, '.', n - (size_t)(d2 + 1 - proof)))
		return err_set(e, ERR_INVALID, "it is not a compact JWS (header.payload.signature)");
	if ((rc = proof_part(proof, (size_t)(d1 - proof), PROOF_HEADER_MAX, &h, e)))
		goto out;
	if (!(v = str_member(h, "alg")) || strcmp(v, "ES256")) {
		rc = err_set(e, ERR_INVALID, "alg must be ES256");
		goto out;
	}
	/* The signature is checked before any claim is believed. */
	if (!(v = str_member(h, "kid")) || strcmp(v, kid) ||
	    base64url_decode(d2 + 1, n - (size_t)(d2 + 1 - proof), sig, sizeof(sig), &siglen) ||
	    jwt_es256_verify(key, proof, (size_t)(d2 - proof), sig, siglen, e)) {
		rc = err_set(e, ERR_INVALID, "signed by another key");
		goto out;
	}
	if ((rc = proof_part(d1 + 1, (size_t)(d2 - d1 - 1), PROOF_PAYLOAD_MAX, &p, e)))
		goto out;
	if (!(v = str_member(p, "aud")) || strcmp(v, GITURL_PROOF_AUDIENCE))
		rc = err_set(e, ERR_INVALID, "aud must be '%s'", GITURL_PROOF_AUDIENCE);
	else if (!(v = str_member(p, "sub")) || strcasecmp(v, login))
		rc = err_set(e, ERR_INVALID, "it was made for another account");
	else if (int_member(p, "iat", &iat) || int_member(p, "exp", &exp) || exp <= iat)
		rc = err_set(e, ERR_INVALID, "iat and exp are required, exp after iat");
	else if (exp - iat > GITURL_PROOF_TTL)
		rc = err_set(e, ERR_INVALID, "it may live at most %d s", GITURL_PROOF_TTL);
	else if (iat > now + JWT_SKEW)
		rc = err_set(e, ERR_INVALID, "it was issued in the future");
	else if (exp <= now - JWT_SKEW)
		rc = err_set(e, ERR_INVALID, "it expired");
out:
	json_object_put(h);
	json_object_put(p);
	return rc;
}
