/* sandboxctl engine: register, drain, activate, remove and list the Docker engines. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "sandboxd/engine/engine_admin.h"
#include "sandboxd/lib/num.h"
#include "ctl.h"
#include "sandboxd/common/banned.h"

int cmd_engine(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max", required_argument, NULL, 'm' },
		{ "ca", required_argument, NULL, 'a' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "insecure", no_argument, NULL, 'i' },
		{ "runtime", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ca = NULL, *cert = NULL, *key = NULL, *runtime = NULL;
	const char *op = argc > 1 ? argv[1] : "";
	int add = !strcmp(op, "add"), list = !strcmp(op, "list"), rt = !strcmp(op, "runtime");
	int64_t max = 100;
	struct err e;
	int c, rc, want = add || rt ? 4 : list ? 2 : 3, insecure = 0;

	if (wants_help(argc, argv))
		return help("engine");
	if (!add && !list && !rt && strcmp(op, "drain") && strcmp(op, "activate") &&
	    strcmp(op, "remove"))
		return usage("engine add|runtime|drain|activate|remove|list");
	optind = want;
	while (add && argc >= want && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (num_parse(optarg, 0, 100000, &max))
				return usage("--max must be a number from 0 to 100000");
			break;
		case 'a': ca = optarg; break;
		case 'c': cert = optarg; break;
		case 'k': key = optarg; break;
		case 'i': insecure = 1; break;
		case 'r': runtime = optarg; break;
		default: return usage(NULL);
		}
	}
	if (argc < want || (add ? optind != argc : argc != want))
		return usage(add ? "engine add NAME URL [--max N] [--ca F --cert F --key F | --insecure]"
				   " [--runtime R]"
			     : list ? "engine list takes no arguments"
			     : rt ? "engine runtime NAME R|none"
				  : "engine drain|activate|remove NAME");
	if ((rc = connect_db(&e)))
		return fail(rc, &e);
	if (add)
		rc = engine_add(&db, argv[2], argv[3], ca, cert, key, (int)max, insecure, runtime, &e);
	else if (rt)
		rc = engine_set_runtime(&db, argv[2], strcmp(argv[3], "none") ? argv[3] : NULL, &e);
	else if (!strcmp(op, "drain") || !strcmp(op, "activate"))
		rc = engine_set_state(&db, argv[2], op[0] == 'd' ? "draining" : "active", &e);
	else if (!list)
		rc = engine_remove(&db, argv[2], &e);
	else
		rc = engine_print(&db, stdout, &e);
	if (rc)
		return fail(rc, &e);
	if (rt)
		printf("engine %s: gVisor runtime %s\n", argv[2], argv[3]);
	else if (!list)
		printf("engine %s: %s\n", argv[2], add ? "added" : op[0] == 'r' ? "removed"
		       : op[0] == 'd' ? "draining" : "active");
	return EXIT_OK;
}
