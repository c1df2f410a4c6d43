/* secrets.c: sandbox secrets' sealing and loading (secrets.h). OpenSSL's EVP AEAD: AES-256-GCM,
 * 12-byte random nonces (at most a few thousand values per key: far from GCM's limits), a
 * 16-byte tag. A sealed value is version 1 | nonce | tag | ciphertext, in hex. */
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "sandboxd/lib/keyfile.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/sandbox/sandbox_save.h"
#include "sandboxd/sandbox/secrets.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

#define VERSION 1
#define NONCE 12
#define TAG 16
#define HEAD (1 + NONCE + TAG)

static unsigned char key[32];
static int have_key;

int secrets_key_file_load(const char *path, struct err *e)
{
	char text[SECRETS_KEY_HEX + 2];
	size_t n;
	int rc = keyfile_read(path, text, sizeof(text) - 1, &n, e);

	if (!rc && n == SECRETS_KEY_HEX + 1 && text[SECRETS_KEY_HEX] == '\n')
		n--;
	if (!rc && (n != SECRETS_KEY_HEX || hex_decode(key, text, sizeof(key))))
		rc = err_set(e, ERR_INVALID, "'%s' must hold %d hex digits (openssl rand -hex 32)",
			     path, SECRETS_KEY_HEX);
	have_key = rc == 0;
	OPENSSL_cleanse(text, sizeof(text));
	return rc;
}

int secrets_configured(void)
{
	return have_key;
}

int secrets_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > SECRETS_NAME_MAX || (name[0] >= '0' && name[0] <= '9'))
		return 0;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* What binds a value to its row: the repository and the name. */
static char *aad(struct pool *p, const char *repo_id, const char *name, int *len)
{
	char *s = pool_printf(p, "sandboxd secret v1\n%s\n%s", repo_id, name);

	*len = s ? (int)strlen(s) : 0;
	return s;
}

int secrets_seal(struct pool *p, const char *repo_id, const char *name, const char *value,
		 size_t len, char **out, struct err *e)
{
	unsigned char *b = pool_alloc(p, HEAD + len + 16);
	int alen, n = 0, m = 0, ok;
	char *a = aad(p, repo_id, name, &alen);
	EVP_CIPHER_CTX *c;

	if (!have_key)
		return err_set(e, ERR_FAIL, "no secrets key");
	if (!b || !a)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (len > SECRETS_VALUE_MAX || RAND_bytes(b + 1, NONCE) != 1 || !(c = EVP_CIPHER_CTX_new()))
		return err_set(e, ERR_FAIL, "cannot seal the value");
	b[0] = VERSION;
	ok = EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, b + 1) == 1 &&
	     EVP_EncryptUpdate(c, NULL, &n, (const unsigned char *)a, alen) == 1 &&
	     EVP_EncryptUpdate(c, b + HEAD, &n, (const unsigned char *)value, (int)len) == 1 &&
	     EVP_EncryptFinal_ex(c, b + HEAD + n, &m) == 1 &&
	     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, TAG, b + 1 + NONCE) == 1;
	EVP_CIPHER_CTX_free(c);
	if (!ok)
		return err_set(e, ERR_FAIL, "cannot seal the value");
	*out = pool_alloc(p, 2 * (HEAD + (size_t)(n + m)) + 1);
	if (*out)
		hex_encode(*out, b, HEAD + (size_t)(n + m));
	OPENSSL_cleanse(b, HEAD + len + 16);
	return *out ? 0 : err_set(e, ERR_NOMEM, "out of memory");
}

int secrets_open(struct pool *p, const char *repo_id, const char *name, const char *hex,
		 char **out, struct err *e)
{
	size_t hl = strlen(hex), bl = hl / 2;
	unsigned char *b;
	int alen, n = 0, m = 0, ok;
	char *a, *v;
	EVP_CIPHER_CTX *c;

	if (!have_key)
		return err_set(e, ERR_FAIL, "no secrets key");
	if (hl % 2 || bl < HEAD || bl > HEAD + SECRETS_VALUE_MAX)
		return err_set(e, ERR_FAIL, "secret '%s' is not a sealed value", name);
	b = pool_alloc(p, bl);
	v = pool_alloc(p, bl - HEAD + 1);
	a = aad(p, repo_id, name, &alen);
	if (!b || !v || !a)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (hex_decode(b, hex, bl) || b[0] != VERSION || !(c = EVP_CIPHER_CTX_new()))
		return err_set(e, ERR_FAIL, "secret '%s' is not a sealed value", name);
	ok = EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, b + 1) == 1 &&
	     EVP_DecryptUpdate(c, NULL, &n, (const unsigned char *)a, alen) == 1 &&
	     EVP_DecryptUpdate(c, (unsigned char *)v, &n, b + HEAD, (int)(bl - HEAD)) == 1 &&
	     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG, b + 1 + NONCE) == 1 &&
	     EVP_DecryptFinal_ex(c, (unsigned char *)v + n, &m) == 1;
	EVP_CIPHER_CTX_free(c);
	if (!ok)
		return err_set(e, ERR_FAIL, "secret '%s' does not open with this key", name);
	v[n + m] = 0;
	*out = v;
	return 0;
}

int secrets_for_sandbox(struct db *db, struct pool *p, const char *sandbox_id,
			struct secrets_set *out, struct err *e)
{
	PGresult *res;
	int code = 0, rc = 0;

	out->n = 0;
	res = db_exec(db, e, &code,
		      "SELECT ss.repository_id, ss.name, encode(ss.value_enc, 'hex')"
		      "  FROM sandboxes s JOIN sandbox_secrets ss"
		      "    ON ss.repository_id = s.repository_id AND ss.name = ANY (s.secrets)"
		      " WHERE s.id = $1 ORDER BY ss.name LIMIT 16", 1, sandbox_id);
	if (!res)
		return code;
	for (int i = 0; i < PQntuples(res) && !rc && out->n < SECRETS_PER_SANDBOX; i++) {
		char *v;

		if (!(rc = secrets_open(p, db_val(res, i, 0), db_val(res, i, 1), db_val(res, i, 2),
					&v, e))) {
			if (!(out->names[out->n] = pool_strdup(p, db_val(res, i, 1))))
				rc = err_set(e, ERR_NOMEM, "out of memory");
			out->values[out->n++] = v;
		}
	}
	PQclear(res);
	/* A value that does not open must not let its exec run without its mask. */
	if (rc)
		log_warn("sandbox %s: %s", sandbox_id, e->msg);
	return rc;
}

/* Which sandbox the credential of a push into repo_id speaks for, into id ("" for none). */
static int pusher_sandbox(struct db *db, const struct caller *c, const char *repo_id,
			  char id[SANDBOX_ID_LEN + 1], struct err *e)
{
	static const size_t plen = sizeof(SANDBOX_SAVE_JTI_PREFIX) - 1;
	char sid[SANDBOX_ID_LEN + 1];
	const char *dot;
	PGresult *res = NULL;
	int code = 0;

	id[0] = 0;
	if (!c->authenticated)
		return 0;
	if (c->kind == TOKEN_SANDBOX) {
		res = db_exec(db, e, &code,
			      "SELECT s.id FROM tokens t JOIN sandboxes s ON s.id = t.sandbox_id"
			      " WHERE t.id = $1 AND s.repository_id = $2", 2, c->token_id, repo_id);
	} else if (c->kind == TOKEN_JWT && c->jwt_ephemeral &&
		   !strncmp(c->jwt_jti, SANDBOX_SAVE_JTI_PREFIX, plen) &&
		   (dot = strchr(c->jwt_jti + plen, '.')) &&
		   (size_t)(dot - c->jwt_jti - plen) <= SANDBOX_ID_LEN) {
		snprintf(sid, sizeof(sid), "%.*s", (int)(dot - c->jwt_jti - plen), c->jwt_jti + plen);
		/* Only the service signs such a jti: an owner's key (which may sign anything for
		 * its repositories) does not speak for a sandbox. */
		res = db_exec(db, e, &code,
			      "SELECT s.id FROM sandboxes s WHERE s.id = $1 AND s.repository_id = $2"
			      "   AND NOT EXISTS (SELECT 1 FROM account_keys WHERE kid = $3)",
			      3, sid, repo_id, c->jwt_kid);
	} else {
		return 0;
	}
	if (!res)
		return code;
	if (PQntuples(res) == 1)
		snprintf(id, SANDBOX_ID_LEN + 1, "%s", db_val(res, 0, 0));
	PQclear(res);
	return 0;
}

int secrets_for_pusher(struct db *db, struct pool *p, const struct caller *c,
		       const char *repo_id, struct secrets_set *out, struct err *e)
{
	char id[SANDBOX_ID_LEN + 1];
	int rc;

	out->n = 0;
	if ((rc = pusher_sandbox(db, c, repo_id, id, e)) || !id[0])
		return rc;
	return secrets_for_sandbox(db, p, id, out, e);
}
