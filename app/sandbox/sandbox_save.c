/* sandbox_save.c: a sandbox's unpushed work saved before it stops (sandbox_save.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>
#include "sandboxd/forge/giturl.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/sandbox/sandbox_save.h"
#include "sandboxd/sandbox/scripts.h"
#include "sandboxd/common/banned.h"

#define SAVE_TTL 300               /* seconds the push's credential lives */

/* The creator's git URL token for s's repository: ephemeral, write, and ref policies that
 * let it update sandbox/<id> (never force) and nothing else. *tok is malloc'd. */
static int mint(struct db *db, const struct sandbox *s, char **tok, char start[41],
		struct err *e)
{
	struct jwt_claims c;
	int code = 0;
	PGresult *res = db_exec(db, e, &code,
				"SELECT a.login, o.login, r.name, s.commit_sha FROM sandboxes s"
				"  JOIN accounts a ON a.id = s.account_id"
				"  JOIN repositories r ON r.id = s.repository_id"
				"  JOIN accounts o ON o.id = r.owner_id WHERE s.id = $1", 1, s->id);

	if (!res)
		return code;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return err_set(e, ERR_NOTFOUND, "sandbox %s has no repository", s->id);
	}
	memset(&c, 0, sizeof(c));
	snprintf(c.sub, sizeof(c.sub), "%s", db_val(res, 0, 0));
	snprintf(c.iss, sizeof(c.iss), "%s", db_val(res, 0, 1));
	snprintf(c.owner, sizeof(c.owner), "%s", db_val(res, 0, 1));
	snprintf(c.name, sizeof(c.name), "%s", db_val(res, 0, 2));
	snprintf(start, 41, "%s", db_val(res, 0, 3));
	PQclear(res);
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
	return giturl_mint(db, &c, tok, e);
}

/* Why git's push failed, from its output: the first line the service's hook printed
 * ("remote: …", its reason), else the last line; cleaned to printable ASCII. */
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
	snprintf(out, n, "%.*s", (int)(end - start), start);
	for (char *p = out; *p; p++)
		if (*p < 32 || *p > 126)
			*p = '?';
}

int sandbox_save(struct db *db, const struct sandbox *s, char ref[SANDBOX_SAVE_REF_MAX],
		 struct err *e)
{
	char start[41], env_tok[JWT_MAX_LEN + 32], env_ref[96], env_start[64], line[200];
	struct sandbox_output c;
	char *tok = NULL;
	int rc, code = -1;

	ref[0] = 0;
	if ((rc = mint(db, s, &tok, start, e)))
		return rc;
	snprintf(env_tok, sizeof(env_tok), "SANDBOXD_SAVE_TOKEN=%s", tok);
	OPENSSL_cleanse(tok, strlen(tok));
	free(tok);
	snprintf(env_ref, sizeof(env_ref), "SANDBOXD_SAVE_REF=sandbox/%s", s->id);
	snprintf(env_start, sizeof(env_start), "SANDBOXD_SAVE_START=%s", start);
	const char *argv[] = { "bash", "-c", sh_save, "sandboxd-save", NULL };
	const char *env[] = { env_tok, env_ref, env_start, NULL };
	rc = sandbox_run_env(s->container_id, argv, env, &c, &code, e);
	OPENSSL_cleanse(env_tok, sizeof(env_tok));
	if (rc)
		return rc;
	if (code == 0 && strncmp(c.out, "saved ", 6) == 0) {
		snprintf(ref, SANDBOX_SAVE_REF_MAX, "%s%s", SANDBOX_SAVE_PREFIX, s->id);
		return 0;
	}
	if (code == 0 && strncmp(c.out, "nothing", 7) == 0)
		return 0;
	push_reason(c.out, line, sizeof(line));
	return err_set(e, ERR_FAIL, "%s", code == 5 ? line[0] ? line : "the push was refused"
					: code == 3 ? "the sandbox has no clone"
					: "its work could not be committed");
}
