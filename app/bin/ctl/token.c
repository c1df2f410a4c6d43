/* sandboxctl token: create personal tokens, revoke them. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/lib/num.h"
#include "ctl.h"
#include "sandboxd/common/banned.h"

/* token revoke ID: revoking a revoked token again is not an error (its time stays). */
static int token_revoke(int argc, char **argv)
{
	int64_t n;
	PGresult *res;
	struct err e;
	int code = 0, rc;

	if (argc != 3 || num_parse(argv[2], 1, INT64_MAX, &n))
		return usage("token revoke takes one numeric token id");
	if ((rc = connect_db(&e)))
		return fail(rc, &e);
	res = db_exec(&db, &e, &code,
		      "UPDATE tokens SET revoked_at = coalesce(revoked_at, now())"
		      " WHERE id = $1 RETURNING id", 1, argv[2]);
	if (!res)
		return fail(code, &e);
	rc = PQntuples(res);
	PQclear(res);
	if (!rc)
		return fail(err_set(&e, ERR_NOTFOUND, "token %s not found", argv[2]), &e);
	printf("revoked %s\n", argv[2]);
	return EXIT_OK;
}

int cmd_token(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scope", required_argument, NULL, 's' },
		{ "expires-in", required_argument, NULL, 'x' },
		{ "note", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *scope = "write", *note = NULL;
	int64_t expires = 7776000;
	char token[TOKEN_LEN + 1], id[DB_ID_MAX], expires_at[32];
	struct account a;
	struct err e;
	int c, rc;

	if (wants_help(argc, argv))
		return help("token");
	if (argc < 3)
		return usage("token needs a subcommand and an argument");
	if (strcmp(argv[1], "revoke") == 0)
		return token_revoke(argc, argv);
	if (strcmp(argv[1], "create"))
		return usage("token subcommands: create, revoke");
	optind = 3;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': scope = optarg; break;
		case 'x':
			if (num_parse(optarg, 60, 31536000, &expires))
				return usage("--expires-in must be 60 to 31536000 seconds");
			break;
		case 'n': note = optarg; break;
		default: return usage(NULL);
		}
	}
	if (optind != argc)
		return usage("unexpected argument");
	if (strcmp(scope, "read") && strcmp(scope, "write"))
		return usage("--scope must be read or write");
	if ((rc = connect_db(&e)) || (rc = account_load(&db, argv[2], &a, &e)))
		return fail(rc, &e);
	rc = auth_token_create(&db, TOKEN_PERSONAL, a.id, NULL, strcmp(scope, "write") == 0,
			       (long)expires, note, token, id, expires_at, &e);
	if (rc)
		return fail(rc, &e);
	/* The token alone on stdout, so that scripts can capture it; the rest on stderr. */
	printf("%s\n", token);
	fprintf(stderr, "token id %s for %s, scope %s, expires %s\n", id, a.login, scope,
		expires_at);
	OPENSSL_cleanse(token, sizeof(token));
	return EXIT_OK;
}
