/* sandbox_save.c: a sandbox's unpushed work saved before it stops (sandbox_save.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>
#include "sandboxd/common/hex.h"
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/lib/base64.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/lib/randid.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/proto/tar.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/sandbox/sandbox_save.h"
#include "sandboxd/sandbox/scripts.h"
#include "sandboxd/common/banned.h"

#define SAVE_TTL 300               /* seconds the push's credential lives */

/* What the save needs of s's rows: who made it, where its repository is, where it began. */
struct whose {
	char login[JWT_SUB_MAX + 1], owner[JWT_OWNER_MAX + 1], name[JWT_NAME_MAX + 1], start[41];
	char home[16];             /* its container user's: who the credential's file is for */
};

static int load(struct db *db, const struct sandbox *s, struct whose *w, struct err *e)
{
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT a.login, o.login, r.name, s.commit_sha, coalesce(s.home, '')"
				"  FROM sandboxes s"
				"  JOIN accounts a ON a.id = s.account_id"
				"  JOIN repositories r ON r.id = s.repository_id"
				"  JOIN accounts o ON o.id = r.owner_id WHERE s.id = $1", 1, s->id);

	if (!res)
		return code;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOTFOUND, "sandbox %s has no repository", s->id);
	}
	snprintf(w->login, sizeof(w->login), "%s", db_val(res, 0, 0));
	snprintf(w->owner, sizeof(w->owner), "%s", db_val(res, 0, 1));
	snprintf(w->name, sizeof(w->name), "%s", db_val(res, 0, 2));
	snprintf(w->start, sizeof(w->start), "%s", db_val(res, 0, 3));
	snprintf(w->home, sizeof(w->home), "%s", db_val(res, 0, 4));
	PQclear(res);
	return 0;
}

/* The creator's git URL token for s's repository: ephemeral, write, and ref policies that
 * let it update sandbox/<id> (never force) and nothing else; its jti names the sandbox
 * (SANDBOX_SAVE_JTI_PREFIX), so that the push is searched for the sandbox's secret values
 * (secrets_for_pusher). *tok is malloc'd. */
static int mint(struct db *db, const struct sandbox *s, const struct whose *w, char **tok,
		struct err *e)
{
	char prefix[sizeof(SANDBOX_SAVE_JTI_PREFIX) + SANDBOX_ID_LEN + 1];
	struct jwt_claims c;

	memset(&c, 0, sizeof(c));
	snprintf(c.sub, sizeof(c.sub), "%s", w->login);
	snprintf(c.iss, sizeof(c.iss), "%s", w->owner);
	snprintf(c.owner, sizeof(c.owner), "%s", w->owner);
	snprintf(c.name, sizeof(c.name), "%s", w->name);
	c.scopes = JWT_SCOPE_READ | JWT_SCOPE_WRITE;
	c.ephemeral = 1;
	c.iat = (int64_t)time(NULL);
	c.exp = c.iat + SAVE_TTL;
	c.n_ref_policies = 2;
	snprintf(c.ref_policies[0].pattern, sizeof(c.ref_policies[0].pattern), "%s%s",
		 SANDBOX_SAVE_PREFIX, s->id);
	c.ref_policies[0].ops = JWT_OP_NO_FORCE_PUSH;
	snprintf(c.ref_policies[1].pattern, sizeof(c.ref_policies[1].pattern), "*");
	c.ref_policies[1].ops = JWT_OP_NO_PUSH;
	snprintf(prefix, sizeof(prefix), "%s%s.", SANDBOX_SAVE_JTI_PREFIX, s->id);
	return giturl_mint(db, &c, prefix, tok, e);
}

/* Why git's push failed, from its output: the first line the service's hook printed
 * ("remote: …", its reason), else the last line; without the blanks that end it, cleaned
 * to printable ASCII. */
static void push_reason(const char *text, char *out, size_t n)
{
	const char *start = strstr(text, "remote: "), *end;

	if (start && (start == text || start[-1] == '\n')) {
		start += 8;
	} else {
		end = text + strlen(text);
		while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
			end--;
		for (start = end; start > text && start[-1] != '\n'; start--)
			;
	}
	end = start + strcspn(start, "\r\n");
	/* git pads a remote's line with blanks (to clear a progress line): not part of it. */
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	snprintf(out, n, "%.*s", (int)(end - start), start);
	for (char *p = out; *p; p++)
		if (*p < 32 || *p > 126)
			*p = '?';
}

/* save.sh with argv[4] = step and env; its output in c, its exit code in *code. */
static int step(const struct sandbox *s, const char *what, const char *const *env,
		struct sandbox_output *c, int *code, struct err *e)
{
	const char *argv[] = { "bash", "-c", sh_save, "sandboxd-save", what, NULL };

	*code = -1;
	return sandbox_run_env(s->container_id, argv, env, c, code, e);
}

/* The credential for the push step, as a file of git configuration (the Authorization
 * header for the service's git URL only), put into s's container as /tmp/<name> (0400, the
 * sandbox user's; save.sh removes it as soon as it has it open). */
static int put_credential(const struct config *cfg, const struct sandbox *s,
			  const struct whose *w, const char *tok, const char *name, struct err *e)
{
	const char *home = w->home[0] ? w->home : boxuser_home();
	unsigned uid = strcmp(home, "/root") ? (unsigned)cfg->sandbox_uid : 0;
	size_t ul = strlen("x-access-token:"), tl = strlen(tok);
	char *basic = malloc(ul + tl + 1), *b64 = malloc(base64_encoded_size(ul + tl));
	struct buf conf, tar;
	int rc;

	buf_init(&conf, 4 * JWT_MAX_LEN);
	buf_init(&tar, 8 * JWT_MAX_LEN);
	if (!basic || !b64) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	memcpy(basic, "x-access-token:", ul);
	memcpy(basic + ul, tok, tl + 1);
	base64_encode((const unsigned char *)basic, ul + tl, b64);
	/* The same scope as the clone's own header (clone.sh): the service's URL, all of it. */
	if (buf_printf(&conf, "[http \"%s/\"]\n\textraHeader = Authorization: Basic %s\n",
		       cfg->sandbox_git_url, b64))
		rc = err_set(e, ERR_TOOBIG, "the save's credential is too long");
	else
		rc = tar_write_file(&tar, name, 0400, uid, (int64_t)time(NULL), conf.data, conf.len,
				    e);
	if (!rc)
		rc = box_file_put_buf(s->container_id, "/tmp", tar.data, tar.len, BOX_CALL_MS, e);
out:
	if (basic)
		OPENSSL_cleanse(basic, ul + tl + 1);
	if (b64)
		OPENSSL_cleanse(b64, base64_encoded_size(ul + tl));
	if (conf.data)
		OPENSSL_cleanse(conf.data, conf.len);
	if (tar.data)
		OPENSSL_cleanse(tar.data, tar.len);
	free(basic);
	free(b64);
	buf_release(&conf);
	buf_release(&tar);
	return rc;
}

/* The commit step: 0 with head set ("" when there is nothing to save), or the failure. */
static int commit(const struct sandbox *s, const struct whose *w, char head[41], struct err *e)
{
	char env_start[64];
	const char *env[] = { env_start, NULL };
	struct sandbox_output c;
	int rc, code;

	head[0] = 0;
	snprintf(env_start, sizeof(env_start), "SANDBOXD_SAVE_START=%s", w->start);
	if ((rc = step(s, "commit", env, &c, &code, e)))
		return rc;
	if (code == 0 && strcmp(c.out, "nothing\n") == 0)
		return 0;
	/* What comes out of the sandbox is read as untrusted: a commit id, or a failure. */
	if (code == 0 && strlen(c.out) == 46 && strncmp(c.out, "head ", 5) == 0 &&
	    c.out[45] == '\n' && hex_is(c.out + 5, 40)) {
		snprintf(head, 41, "%.40s", c.out + 5);
		return 0;
	}
	return err_set(e, ERR_FAIL, "%s", code == 3 ? "the sandbox has no clone"
					  : "its work could not be committed");
}

int sandbox_save(struct db *db, const struct config *cfg, const struct sandbox *s,
		 char ref[SANDBOX_SAVE_REF_MAX], struct err *e)
{
	char head[41], name[48], env_url[512], env_ref[96], env_head[64], env_cred[80], line[200];
	const char *env[] = { env_url, env_ref, env_head, env_cred, NULL };
	struct sandbox_output c;
	struct whose w;
	char *tok = NULL;
	int rc, code = -1;

	ref[0] = 0;
	if ((rc = load(db, s, &w, e)) || (rc = commit(s, &w, head, e)) || !head[0])
		return rc;
	/* Only now a credential, and only for the push step: the commit step ran the
	 * repository's own filters and hooks with none in the container. */
	if (randid(name, sizeof(name), ".sandboxd-save-", 16))
		return err_set(e, ERR_FAIL, "RNG failed");
	if ((rc = mint(db, s, &w, &tok, e)))
		return rc;
	rc = put_credential(cfg, s, &w, tok, name, e);
	OPENSSL_cleanse(tok, strlen(tok));
	free(tok);
	if (rc)
		return rc;
	snprintf(env_url, sizeof(env_url), "SANDBOXD_SAVE_URL=%s/%s/%s.git", cfg->sandbox_git_url,
		 w.owner, w.name);
	snprintf(env_ref, sizeof(env_ref), "SANDBOXD_SAVE_REF=sandbox/%s", s->id);
	snprintf(env_head, sizeof(env_head), "SANDBOXD_SAVE_HEAD=%s", head);
	snprintf(env_cred, sizeof(env_cred), "SANDBOXD_SAVE_CRED=/tmp/%s", name);
	if ((rc = step(s, "push", env, &c, &code, e)))
		return rc;
	if (code == 0 && strncmp(c.out, "saved ", 6) == 0) {
		snprintf(ref, SANDBOX_SAVE_REF_MAX, "%s%s", SANDBOX_SAVE_PREFIX, s->id);
		return 0;
	}
	push_reason(c.out, line, sizeof(line));
	if (code == 5)
		return err_set(e, ERR_FAIL, "%s", line[0] ? line : "the push was refused");
	if (code == 3 || code == 6)
		return err_set(e, ERR_FAIL, "%s", code == 3 ? "the sandbox has no clone"
						  : "the save's credential did not reach its push");
	return err_set(e, ERR_FAIL, "its work could not be pushed (exit %d)", code);
}
