/* sandboxctl: the operator's command line. Exit codes scripts can rely on:
 * 0 done, 1 runtime failure (database, disk), 2 usage, 3 not found, 4 already exists.
 * main() and the table of commands; the commands are in ctl/, one file per group, and
 * ctl/ctl.h is what they share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/ctl.h"
#include "sandboxd/common/banned.h"

/* Each command's lines of usage_text, which is made of them in this order; the table
 * below gives each command its own. */
#define USAGE_MIGRATE \
	"  migrate                                   apply the database migrations\n"
#define USAGE_ACCOUNT \
	"  account create LOGIN [--kind user|agent] [--site-admin] [--name N] [--email E]\n" \
	"  account disable LOGIN | account enable LOGIN\n"
#define USAGE_TOKEN \
	"  token create LOGIN [--scope read|write] [--expires-in SECONDS] [--note TEXT]\n" \
	"  token revoke ID\n"
#define USAGE_REPO \
	"  repo create OWNER/NAME [--visibility public|private] [--default-branch BRANCH]\n"
#define USAGE_COLLABORATOR \
	"  collaborator set OWNER/NAME LOGIN read|write|admin|none\n"
#define USAGE_KEY \
	"  key generate --out PRIVATE.pem            a P-256 key pair; prints the public key\n" \
	"  key proof --key PRIVATE.pem --login LOGIN  prints the proof POST /user/keys wants\n"
#define USAGE_GIT_URL \
	"  git-url --key PRIVATE.pem --repo OWNER/NAME [--scope git:read|git:write]...\n" \
	"          [--ttl SECONDS] [--kind normal|ephemeral] [--policy PATTERN=OP[,OP]]...\n" \
	"          [--url BASE] [--issued-at UNIX]  sign a git URL locally (no server)\n"
#define USAGE_ENGINE \
	"  engine add NAME URL [--max N] [--ca F --cert F --key F | --insecure] [--runtime R]\n" \
	"                                            register a Docker engine (R: its gVisor runtime)\n" \
	"  engine runtime NAME R|none                its gVisor runtime (isolation gvisor), or none\n" \
	"  engine drain NAME | engine activate NAME  stop or resume new sandboxes on it\n" \
	"  engine remove NAME                        forget it (once nothing runs there)\n" \
	"  engine list                               each engine's state, health and load\n"
#define USAGE_AUDIT \
	"  audit partitions [--months-ahead N]      create audit_log's monthly partitions ahead\n" \
	"  audit prune [--older-than N{d|h}] [--dry-run]  drop audit months wholly older than that\n"

static const char usage_text[] =
	"usage: sandboxctl COMMAND [ARGS]\n"
	USAGE_MIGRATE USAGE_ACCOUNT USAGE_TOKEN USAGE_REPO USAGE_COLLABORATOR
	USAGE_KEY USAGE_GIT_URL USAGE_ENGINE USAGE_AUDIT
	"Settings: SANDBOXD_DATABASE_URL (required but for key and git-url),\n"
	"  SANDBOXD_REPOS_DIR (repo create), SANDBOXD_PUBLIC_URL (git-url's default --url),\n"
	"  SANDBOXD_AUDIT_RETENTION (audit prune's default --older-than, 180d if unset).\n"
	"Exit codes: 0 done, 1 failure, 2 usage, 3 not found, 4 already exists.\n"
	"Each command takes --help.\n";

struct db db;

int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "sandboxctl: %s\n", msg);
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

/* Maps an error to an exit code after printing it. */
int fail(int code, const struct err *e)
{
	fprintf(stderr, "sandboxctl: %s\n", e->msg);
	switch (code) {
	case ERR_INVALID: return EXIT_USAGE;
	case ERR_NOTFOUND: return EXIT_NOTFOUND;
	case ERR_EXISTS: return EXIT_EXISTS;
	default: return EXIT_FAIL;
	}
}

int connect_db(struct err *e)
{
	const char *url = getenv("SANDBOXD_DATABASE_URL");

	if (!url || !*url)
		return err_set(e, ERR_FAIL, "SANDBOXD_DATABASE_URL is not set");
	db_init(&db, url);
	return db_ensure(&db, e);
}

/* True when argv has --help; commands print their line of usage_text then. */
int wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

int help(const char *command)
{
	const char *p = usage_text;
	size_t n = strlen(command);

	printf("usage:\n");
	/* A command's lines begin with two spaces and its name; the name elsewhere (in the
	 * settings' words, "but for key and git-url") is not one. */
	while ((p = strstr(p, command))) {
		const char *eol = strchr(p, '\n');
		if (p - usage_text >= 3 && !strncmp(p - 3, "\n  ", 3) && p[n] == ' ')
			printf("  sandboxctl %.*s\n", (int)(eol - p), p);
		p = eol;
	}
	printf("Exit codes: 0 done, 1 failure, 2 usage, 3 not found, 4 already exists.\n");
	return EXIT_OK;
}

/* The commands, as cgit's cmd.c has them: a name and its function, which gets argv from
 * the command's name on. */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage; /* its lines of usage_text */
} commands[] = {
	{ "migrate", cmd_migrate, USAGE_MIGRATE },
	{ "account", cmd_account, USAGE_ACCOUNT },
	{ "token", cmd_token, USAGE_TOKEN },
	{ "repo", cmd_repo, USAGE_REPO },
	{ "collaborator", cmd_collaborator, USAGE_COLLABORATOR },
	{ "key", cmd_key, USAGE_KEY },
	{ "git-url", cmd_git_url, USAGE_GIT_URL },
	{ "audit", cmd_audit, USAGE_AUDIT },
	{ "engine", cmd_engine, USAGE_ENGINE },
};

int main(int argc, char **argv)
{
	int rc = -1;

	if (argc < 2)
		return usage(NULL);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]) && rc < 0; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			rc = commands[i].run(argc - 1, argv + 1);
	if (rc < 0)
		rc = usage("unknown command");
	db_close(&db);
	return rc;
}
