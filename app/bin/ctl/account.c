/* sandboxctl account: create, disable and enable accounts. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/forge/auth.h"
#include "ctl.h"
#include "sandboxd/common/banned.h"

int cmd_account(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kind", required_argument, NULL, 'k' },
		{ "site-admin", no_argument, NULL, 'a' },
		{ "name", required_argument, NULL, 'n' },
		{ "email", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	const char *kind = "user", *name = NULL, *email = NULL;
	int site_admin = 0, c, rc;
	struct account a;
	struct err e;

	if (wants_help(argc, argv))
		return help("account");
	if (argc < 3)
		return usage("account needs a subcommand and a login");
	const char *sub = argv[1], *login = argv[2];
	optind = 3;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': kind = optarg; break;
		case 'a': site_admin = 1; break;
		case 'n': name = optarg; break;
		case 'e': email = optarg; break;
		default: return usage(NULL);
		}
	}
	if (optind != argc)
		return usage("unexpected argument");
	if ((rc = account_valid_login(login, "login", &e)))
		return fail(rc, &e);
	if ((rc = connect_db(&e)))
		return fail(rc, &e);
	if (strcmp(sub, "create") == 0) {
		if (strcmp(kind, "user") && strcmp(kind, "agent"))
			return usage("--kind must be user or agent");
		rc = account_create(&db, login, kind, site_admin, name, email, &a, &e);
	} else if (strcmp(sub, "disable") == 0 || strcmp(sub, "enable") == 0) {
		int disabled = strcmp(sub, "disable") == 0;
		if (argc != 3)
			return usage("disable and enable take only a login");
		/* A disabled account's sandboxes end, their tokens revoked for good (SPEC §2). */
		rc = db_begin(&db, &e);
		if (!rc)
			rc = account_update(&db, login, &disabled, NULL, &a, &e);
		if (!rc)
			rc = auth_sandboxes_lost(&db, a.id, NULL, NULL, &e);
		if (!rc)
			rc = db_commit(&db, &e);
	} else {
		return usage("account subcommands: create, disable, enable");
	}
	if (rc)
		return fail(rc, &e);
	printf("%s %s%s%s\n", a.login, a.kind, a.site_admin ? " site-admin" : "",
	       a.disabled ? " disabled" : "");
	return EXIT_OK;
}
