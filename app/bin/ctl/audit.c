/* sandboxctl audit: audit_log's monthly partitions, made ahead and pruned. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/lib/num.h"
#include "ctl.h"
#include "sandboxd/common/banned.h"

/* Parses a retention such as "180d" or "36h" into an interval text ("180 days"). */
static int parse_retention(const char *s, char *out, size_t n)
{
	size_t len = strlen(s);
	char digits[16];
	int64_t v;

	if (len < 2 || len >= sizeof(digits) || (s[len - 1] != 'd' && s[len - 1] != 'h'))
		return -1;
	snprintf(digits, sizeof(digits), "%.*s", (int)(len - 1), s);
	if (num_parse(digits, 1, s[len - 1] == 'd' ? 36500 : 876000, &v))
		return -1;
	snprintf(out, n, "%lld %s", (long long)v, s[len - 1] == 'd' ? "days" : "hours");
	return 0;
}

/* What audit is asked for. older names the retention, from says where it came from. */
struct audit_args {
	int prune, dry;
	const char *older, *from;
	char ahead[24], interval[32];
};

/* The options into a; 0, or the exit code of a usage error (printed). */
static int audit_options(int argc, char **argv, struct audit_args *a)
{
	static const struct option opts[] = {
		{ "months-ahead", required_argument, NULL, 'm' },
		{ "older-than", required_argument, NULL, 'o' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t v;
	int c;

	if (argc < 2 || (strcmp(argv[1], "partitions") && strcmp(argv[1], "prune")))
		return usage("audit subcommands: partitions, prune");
	a->prune = strcmp(argv[1], "prune") == 0;
	if (!a->older || !*a->older)
		a->older = "180d", a->from = "the default";
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (a->prune || num_parse(optarg, 0, 120, &v))
				return usage("--months-ahead (audit partitions) must be 0 to 120");
			snprintf(a->ahead, sizeof(a->ahead), "%lld", (long long)v);
			break;
		case 'o':
			if (!a->prune)
				return usage("--older-than is for audit prune");
			a->older = optarg, a->from = "--older-than";
			break;
		case 'n':
			if (!a->prune)
				return usage("--dry-run is for audit prune");
			a->dry = 1;
			break;
		default: return usage(NULL);
		}
	}
	if (optind != argc)
		return usage("unexpected argument");
	if (a->prune && parse_retention(a->older, a->interval, sizeof(a->interval))) {
		fprintf(stderr, "sandboxctl: %s: '%s' is not a retention such as 180d or 36h\n",
			a->from, a->older);
		return usage(NULL);
	}
	return 0;
}

/* Inside the transaction cmd_audit began: drops (or, dry, lists) the months older than
 * the retention. 0, or the database's code with e filled. */
static int audit_prune(const struct audit_args *a, struct err *e)
{
	char limit[40];
	int code = 0, n;
	PGresult *res;

	/* now() is the transaction's start: the same instant for both statements. */
	res = db_exec(&db, e, &code, "SELECT rfc3339(now() - $1::interval)", 1, a->interval);
	if (!res)
		return code;
	snprintf(limit, sizeof(limit), "%s", db_val(res, 0, 0));
	PQclear(res);
	res = db_exec(&db, e, &code,
		      "SELECT partition, rfc3339(range_start), rfc3339(range_end), row_count"
		      " FROM audit_prune($1::interval, $2::boolean)",
		      2, a->interval, a->dry ? "true" : "false");
	if (!res)
		return code;
	n = PQntuples(res);
	for (int i = 0; i < n; i++)
		printf("%s %s (%s to %s, %s rows)\n", a->dry ? "would drop" : "dropped",
		       db_val(res, i, 0), db_val(res, i, 1), db_val(res, i, 2), db_val(res, i, 3));
	printf("%s%d partition%s wholly older than %s (%s)\n",
	       a->dry ? "dry run: would drop " : "dropped ", n, n == 1 ? "" : "s", limit, a->older);
	PQclear(res);
	return 0;
}

/* audit partitions: the current month and N more exist, the default partition is empty.
 * audit prune: drops whole monthly partitions that end before now() - the retention
 * (sql/003_audit.sql: audit_ensure_partitions, audit_prune); --dry-run shows them and
 * changes nothing (its work happens in a transaction that is rolled back). */
int cmd_audit(int argc, char **argv)
{
	struct audit_args a = { .older = getenv("SANDBOXD_AUDIT_RETENTION"),
				.from = "SANDBOXD_AUDIT_RETENTION", .ahead = "2" };
	int rc, code = 0, n;
	PGresult *res;
	struct err e;

	if (wants_help(argc, argv))
		return help("audit");
	if ((rc = audit_options(argc, argv, &a)))
		return rc;
	if ((rc = connect_db(&e)) || (rc = db_begin(&db, &e)))
		return fail(rc, &e);
	/* Rows that fell into the default partition move into their months first, so that
	 * prune sees (and may drop) them too. */
	res = db_exec(&db, &e, &code, "SELECT p FROM audit_ensure_partitions($1::integer) p", 1,
		      a.prune ? "2" : a.ahead);
	if (!res)
		goto failed;
	n = PQntuples(res);
	for (int i = 0; i < n; i++)
		if (!a.prune || !a.dry)
			printf("created %s\n", db_val(res, i, 0));
	PQclear(res);
	if (a.prune && (code = audit_prune(&a, &e)))
		goto failed;
	if (a.dry) {
		db_rollback(&db);
		return EXIT_OK;
	}
	if ((rc = db_commit(&db, &e)))
		return fail(rc, &e);
	if (!a.prune && !n)
		printf("audit_log partitions are in place (this month and %s ahead)\n", a.ahead);
	return EXIT_OK;
failed:
	db_rollback(&db);
	return fail(code, &e);
}
