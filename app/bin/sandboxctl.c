/* sandboxctl: the operator's command line. Exit codes scripts can rely on:
 * 0 done, 1 runtime failure (database, disk), 2 usage, 3 not found, 4 already exists. */
#define _GNU_SOURCE /* setresuid, setresgid */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <git2.h>
#include <fcntl.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/core/migrations.h"
#include "sandboxd/engine/engine_admin.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/forge/repo.h"
#include "sandboxd/common/banned.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_NOTFOUND = 3, EXIT_EXISTS = 4 };

static const char usage_text[] =
	"usage: sandboxctl COMMAND [ARGS]\n"
	"  migrate                                   apply the database migrations\n"
	"  account create LOGIN [--kind user|agent] [--site-admin] [--name N] [--email E]\n"
	"  account disable LOGIN | account enable LOGIN\n"
	"  token create LOGIN [--scope read|write] [--expires-in SECONDS] [--note TEXT]\n"
	"  token revoke ID\n"
	"  repo create OWNER/NAME [--visibility public|private] [--default-branch BRANCH]\n"
	"  collaborator set OWNER/NAME LOGIN read|write|admin|none\n"
	"  key generate --out PRIVATE.pem            a P-256 key pair; prints the public key\n"
	"  key proof --key PRIVATE.pem --login LOGIN  prints the proof POST /user/keys wants\n"
	"  git-url --key PRIVATE.pem --repo OWNER/NAME [--scope git:read|git:write]...\n"
	"          [--ttl SECONDS] [--kind normal|ephemeral] [--policy PATTERN=OP[,OP]]...\n"
	"          [--url BASE] [--issued-at UNIX]  sign a git URL locally (no server)\n"
	"  engine add NAME URL [--max N] [--ca F --cert F --key F | --insecure]  register a Docker engine\n"
	"  engine drain NAME | engine activate NAME  stop or resume new sandboxes on it\n"
	"  engine remove NAME                        forget it (once nothing runs there)\n"
	"  engine list                               each engine's state, health and load\n"
	"  audit partitions [--months-ahead N]      create audit_log's monthly partitions ahead\n"
	"  audit prune [--older-than N{d|h}] [--dry-run]  drop audit months wholly older than that\n"
	"Settings: SANDBOXD_DATABASE_URL (required but for key and git-url),\n"
	"  SANDBOXD_REPOS_DIR (repo create), SANDBOXD_PUBLIC_URL (git-url's default --url),\n"
	"  SANDBOXD_AUDIT_RETENTION (audit prune's default --older-than, 180d if unset).\n"
	"Exit codes: 0 done, 1 failure, 2 usage, 3 not found, 4 already exists.\n"
	"Each command takes --help.\n";

static struct db db;

static int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "sandboxctl: %s\n", msg);
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

/* Maps an error to an exit code after printing it. */
static int fail(int code, const struct err *e)
{
	fprintf(stderr, "sandboxctl: %s\n", e->msg);
	switch (code) {
	case ERR_INVALID: return EXIT_USAGE;
	case ERR_NOTFOUND: return EXIT_NOTFOUND;
	case ERR_EXISTS: return EXIT_EXISTS;
	default: return EXIT_FAIL;
	}
}

static int connect_db(struct err *e)
{
	const char *url = getenv("SANDBOXD_DATABASE_URL");

	if (!url || !*url)
		return err_set(e, ERR_FAIL, "SANDBOXD_DATABASE_URL is not set");
	db_init(&db, url);
	return db_ensure(&db, e);
}

/* True when argv has --help; commands print their line of usage_text then. */
static int wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static int help(const char *command)
{
	const char *p = usage_text;
	size_t n = strlen(command);

	printf("usage:\n");
	while ((p = strstr(p, command))) {
		const char *eol = strchr(p, '\n');
		if (p[-1] == ' ' && p[n] == ' ')
			printf("  sandboxctl %.*s\n", (int)(eol - p), p);
		p = eol;
	}
	printf("Exit codes: 0 done, 1 failure, 2 usage, 3 not found, 4 already exists.\n");
	return EXIT_OK;
}

static int cmd_migrate(int argc, char **argv)
{
	struct err e;
	int rc, applied = 0;

	if (wants_help(argc, argv))
		return help("migrate");
	if (argc != 1)
		return usage("migrate takes no arguments");
	if ((rc = connect_db(&e)))
		return fail(rc, &e);
	/* One migrator at a time, across hosts: an advisory lock on a fixed key. */
	if ((rc = db_run(&db, &e, "SELECT pg_advisory_lock(7370001)", 0)))
		return fail(rc, &e);
	/* Only create the table when it is missing, so that a role that may not create
	 * anything can still ask whether the schema is up to date. */
	PGresult *have = db_exec(&db, &e, &rc, "SELECT to_regclass('schema_migrations') IS NOT NULL", 0);
	if (!have)
		return fail(rc, &e);
	int exists = db_bool(have, 0, 0);
	PQclear(have);
	if (!exists && (rc = db_run(&db, &e,
				    "CREATE TABLE schema_migrations ("
				    " version integer PRIMARY KEY, name text NOT NULL,"
				    " applied_at timestamptz NOT NULL DEFAULT now())", 0)))
		return fail(rc, &e);
	for (int i = 0; i < migrations_count; i++) {
		const struct migration *m = &migrations[i];
		char v[16];
		PGresult *res;
		int code = 0;

		snprintf(v, sizeof(v), "%d", m->version);
		res = db_exec(&db, &e, &code, "SELECT 1 FROM schema_migrations WHERE version = $1",
			      1, v);
		if (!res)
			return fail(code, &e);
		int done = PQntuples(res) > 0;
		PQclear(res);
		if (done)
			continue;
		if ((rc = db_begin(&db, &e)))
			return fail(rc, &e);
		/* Our own file, several statements: the one place without parameters. */
		res = PQexec(db.conn, m->sql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK) {
			fprintf(stderr, "sandboxctl: migration %s failed: %s", m->name,
				PQresultErrorMessage(res));
			PQclear(res);
			db_rollback(&db);
			return EXIT_FAIL;
		}
		PQclear(res);
		if ((rc = db_run(&db, &e, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
				 2, v, m->name)) ||
		    (rc = db_commit(&db, &e)))
			return fail(rc, &e);
		printf("applied %s\n", m->name);
		applied++;
	}
	if (!applied)
		printf("database is up to date\n");
	return EXIT_OK;
}

static int cmd_account(int argc, char **argv)
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

static int cmd_token(int argc, char **argv)
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

/* Splits OWNER/NAME into the two buffers; ERR_INVALID naming the argument. */
static int split_repo(const char *arg, char *owner, size_t on, char *name, size_t nn,
		      struct err *e)
{
	const char *slash = strchr(arg, '/');

	if (!slash || (size_t)(slash - arg) >= on || strlen(slash + 1) >= nn)
		return err_set(e, ERR_INVALID, "'%s' is not OWNER/NAME", arg);
	snprintf(owner, on, "%.*s", (int)(slash - arg), arg);
	snprintf(name, nn, "%s", slash + 1);
	int rc = account_valid_login(owner, "owner", e);
	return rc ? rc : repo_valid_name(name, "name", e);
}

/* Run as root, `repo create` makes the repository as the owner of SANDBOXD_REPOS_DIR (the
 * service's user): a repository that root owns would refuse the service's first push.
 * Called once the database is connected, so that nothing of root's (a ~/.pgpass) is needed
 * after the switch. */
static int become_repos_owner(const char *dir, struct err *e)
{
	struct stat st;

	if (geteuid() != 0 || stat(dir, &st) || st.st_uid == 0)
		return 0;
	if (setgroups(0, NULL) || setresgid(st.st_gid, st.st_gid, st.st_gid) ||
	    setresuid(st.st_uid, st.st_uid, st.st_uid))
		return err_set(e, ERR_FAIL, "cannot become the owner (uid %u) of '%s': %m",
			       (unsigned)st.st_uid, dir);
	/* root's ~/.gitconfig is out of reach now, and none of its business: as the service,
	 * which runs with no home, read no global configuration. */
	if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, "") ||
	    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, ""))
		return err_set(e, ERR_FAIL, "cannot reset libgit2's configuration search path");
	return 0;
}

static int cmd_repo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "visibility", required_argument, NULL, 'v' },
		{ "default-branch", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	const char *visibility = "private", *branch = "main", *dir = getenv("SANDBOXD_REPOS_DIR");
	char owner[48], name[104], *path = NULL;
	struct account a;
	struct repo repo;
	struct err e;
	int c, rc;

	if (wants_help(argc, argv))
		return help("repo");
	if (argc < 3 || strcmp(argv[1], "create"))
		return usage("repo create OWNER/NAME");
	optind = 3;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'v': visibility = optarg; break;
		case 'b': branch = optarg; break;
		default: return usage(NULL);
		}
	}
	if (optind != argc)
		return usage("unexpected argument");
	if (strcmp(visibility, "public") && strcmp(visibility, "private"))
		return usage("--visibility must be public or private");
	if (!dir || dir[0] != '/')
		return usage("SANDBOXD_REPOS_DIR must be set to an absolute path");
	if ((rc = split_repo(argv[2], owner, sizeof(owner), name, sizeof(name), &e)) ||
	    (rc = repo_valid_branch(branch, "default-branch", &e)))
		return fail(rc, &e);
	git_libgit2_init();
	if ((rc = connect_db(&e)) || (rc = become_repos_owner(dir, &e)) ||
	    (rc = account_load(&db, owner, &a, &e)) || (rc = db_begin(&db, &e)))
		return fail(rc, &e);
	rc = repo_create(&db, dir, a.id, a.login, name, visibility, branch, &repo, &path, &e);
	if (rc) {
		db_rollback(&db);
		return fail(rc, &e);
	}
	if ((rc = db_commit(&db, &e))) {
		repo_remove_dir(path);
		free(path);
		return fail(rc, &e);
	}
	printf("%s/%s %s\n", repo.owner, repo.name, path);
	free(path);
	return EXIT_OK;
}

static int cmd_collaborator(int argc, char **argv)
{
	char owner[48], name[104];
	struct account owner_acc, a;
	struct err e;
	PGresult *res;
	int rc, code = 0;

	if (wants_help(argc, argv))
		return help("collaborator");
	if (argc != 5 || strcmp(argv[1], "set"))
		return usage("collaborator set OWNER/NAME LOGIN read|write|admin|none");
	const char *role = argv[4];
	if (strcmp(role, "none") && role_parse(role) == ROLE_NONE)
		return usage("the role must be read, write, admin or none");
	if ((rc = split_repo(argv[2], owner, sizeof(owner), name, sizeof(name), &e)))
		return fail(rc, &e);
	if ((rc = connect_db(&e)) || (rc = account_load(&db, owner, &owner_acc, &e)) ||
	    (rc = account_load(&db, argv[3], &a, &e)))
		return fail(rc, &e);
	res = db_exec(&db, &e, &code,
		      "SELECT id FROM repositories WHERE owner_id = $1 AND lower(name) = lower($2)",
		      2, owner_acc.id, name);
	if (!res)
		return fail(code, &e);
	if (PQntuples(res) != 1) {
		PQclear(res);
		return fail(err_set(&e, ERR_NOTFOUND, "repository %s not found", argv[2]), &e);
	}
	char repo_id[24];
	snprintf(repo_id, sizeof(repo_id), "%s", db_val(res, 0, 0));
	PQclear(res);
	/* The role and the end of the sandboxes it no longer allows, together (SPEC §2). */
	if ((rc = db_begin(&db, &e)))
		return fail(rc, &e);
	if (strcmp(role, "none") == 0)
		rc = db_run(&db, &e,
			    "DELETE FROM collaborators WHERE repository_id = $1 AND account_id = $2",
			    2, repo_id, a.id);
	else
		rc = db_run(&db, &e,
			    "INSERT INTO collaborators (repository_id, account_id, role)"
			    " VALUES ($1, $2, $3) ON CONFLICT (repository_id, account_id)"
			    " DO UPDATE SET role = excluded.role",
			    3, repo_id, a.id, role);
	if (!rc)
		rc = auth_sandboxes_lost(&db, a.id, repo_id, NULL, &e);
	if (!rc)
		rc = db_commit(&db, &e);
	if (rc)
		return fail(rc, &e);
	printf("%s on %s: %s\n", a.login, argv[2], role);
	return EXIT_OK;
}

/* The private key in path (PEM, at most JWT_PEM_MAX bytes) into *key. */
static int read_private_key(const char *path, EVP_PKEY **key, struct err *e)
{
	char pem[JWT_PEM_MAX + 1];
	FILE *f;
	size_t n;
	int rc;

	if (!(f = fopen(path, "r")))
		return err_set(e, ERR_NOTFOUND, "cannot read %s", path);
	n = fread(pem, 1, sizeof(pem) - 1, f);
	fclose(f);
	pem[n] = 0;
	rc = jwt_key_load_pem(pem, n, JWT_KEY_PRIVATE, key, e);
	OPENSSL_cleanse(pem, sizeof(pem));
	return rc;
}

/* key proof --key PRIVATE.pem --login LOGIN: the proof of possession that registering the
 * key's public half as LOGIN needs (giturl.h); valid for GITURL_PROOF_TTL seconds. */
static int key_proof(int argc, char **argv)
{
	const char *path = NULL, *login = NULL;
	EVP_PKEY *key = NULL;
	char *proof = NULL;
	struct err e;
	int rc;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--key") == 0)
			path = argv[i + 1];
		else if (strcmp(argv[i], "--login") == 0)
			login = argv[i + 1];
	}
	if (!path || !login)
		return usage("key proof --key PRIVATE.pem --login LOGIN");
	if ((rc = account_valid_login(login, "--login", &e)))
		return fail(rc, &e);
	if ((rc = read_private_key(path, &key, &e)) ||
	    (rc = giturl_key_proof_make(key, login, (int64_t)time(NULL), &proof, &e)))
		goto out;
	printf("%s\n", proof);
out:
	free(proof);
	EVP_PKEY_free(key);
	return rc ? fail(rc, &e) : EXIT_OK;
}

static int cmd_key(int argc, char **argv)
{
	const char *path = NULL;
	EVP_PKEY *key = NULL;
	char *priv = NULL, *pub = NULL, kid[JWT_KID_MAX + 1];
	struct err e;
	int fd, rc;

	if (wants_help(argc, argv))
		return help("key");
	if (argc == 6 && strcmp(argv[1], "proof") == 0)
		return key_proof(argc, argv);
	if (argc != 4 || strcmp(argv[1], "generate") || strcmp(argv[2], "--out"))
		return usage("key generate --out PRIVATE.pem | key proof --key PRIVATE.pem --login LOGIN");
	path = argv[3];
	if ((rc = jwt_key_generate(&key, &e)) || (rc = jwt_kid(key, kid, &e)) ||
	    (rc = jwt_key_pem(key, JWT_KEY_PRIVATE, &priv, &e)) ||
	    (rc = jwt_key_pem(key, JWT_KEY_PUBLIC, &pub, &e)))
		goto out;
	/* The private key is born 0600 and never overwrites anything. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, priv, strlen(priv)) != (ssize_t)strlen(priv) || close(fd)) {
		rc = err_set(&e, ERR_FAIL, "cannot write %s (it must not exist yet)", path);
		goto out;
	}
	printf("%s", pub);
	fprintf(stderr, "private key in %s, kid %s; register the public key with POST "
		"/api/v3/user/keys {public_key, proof} (proof: sandboxctl key proof)\n", path, kid);
out:
	if (priv) {
		OPENSSL_cleanse(priv, strlen(priv));
		free(priv);
	}
	free(pub);
	EVP_PKEY_free(key);
	return rc ? fail(rc, &e) : EXIT_OK;
}

/* "PATTERN=no-push,no-force-push" into p. */
static int parse_policy(const char *arg, struct jwt_ref_policy *p)
{
	const char *eq = strrchr(arg, '=');
	char ops[64];

	if (!eq || eq == arg || (size_t)(eq - arg) > JWT_PATTERN_MAX || strlen(eq + 1) >= sizeof(ops))
		return -1;
	snprintf(p->pattern, sizeof(p->pattern), "%.*s", (int)(eq - arg), arg);
	snprintf(ops, sizeof(ops), "%s", eq + 1);
	p->ops = 0;
	for (char *s = ops, *comma; s; s = comma ? comma + 1 : NULL) {
		if ((comma = strchr(s, ',')))
			*comma = 0;
		if (strcmp(s, "no-push") == 0)
			p->ops |= JWT_OP_NO_PUSH;
		else if (strcmp(s, "no-force-push") == 0)
			p->ops |= JWT_OP_NO_FORCE_PUSH;
		else
			return -1;
	}
	return 0;
}

/* What git-url is asked for: the claims it signs, and where and with what. */
struct git_url_args {
	const char *keyfile, *repo, *base;
	int64_t ttl, iat;
	struct jwt_claims c;
};

/* The options into a; 0, or the exit code of a usage error (printed). */
static int git_url_options(int argc, char **argv, struct git_url_args *a)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "repo", required_argument, NULL, 'r' },
		{ "scope", required_argument, NULL, 's' },
		{ "ttl", required_argument, NULL, 't' },
		{ "kind", required_argument, NULL, 'K' },
		{ "policy", required_argument, NULL, 'p' },
		{ "url", required_argument, NULL, 'u' },
		{ "issued-at", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	struct jwt_claims *c = &a->c;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'k': a->keyfile = optarg; break;
		case 'r': a->repo = optarg; break;
		case 's':
			if (strcmp(optarg, "git:read") == 0)
				c->scopes |= JWT_SCOPE_READ;
			else if (strcmp(optarg, "git:write") == 0)
				c->scopes |= JWT_SCOPE_WRITE;
			else
				return usage("--scope must be git:read or git:write");
			break;
		case 't':
			if (num_parse(optarg, 1, JWT_MAX_TTL, &a->ttl))
				return usage("--ttl must be 1 to 3600 seconds");
			break;
		case 'K':
			if (strcmp(optarg, "normal") && strcmp(optarg, "ephemeral"))
				return usage("--kind must be normal or ephemeral");
			c->ephemeral = strcmp(optarg, "ephemeral") == 0;
			break;
		case 'p':
			if (c->n_ref_policies == JWT_MAX_REF_POLICIES ||
			    parse_policy(optarg, &c->ref_policies[c->n_ref_policies++]))
				return usage("--policy must be PATTERN=no-push|no-force-push[,…]");
			break;
		case 'u': a->base = optarg; break;
		case 'i':
			if (num_parse(optarg, 0, JWT_TIME_MAX - JWT_MAX_TTL, &a->iat))
				return usage("--issued-at must be a Unix time");
			break;
		default: return usage(NULL);
		}
	}
	if (optind != argc || !a->keyfile || !a->repo)
		return usage("git-url needs --key and --repo");
	if (!a->base || (strncmp(a->base, "http://", 7) && strncmp(a->base, "https://", 8)))
		return usage("--url (or SANDBOXD_PUBLIC_URL) must be the service's http(s) URL");
	if (!c->scopes)
		c->scopes = JWT_SCOPE_READ;
	return 0;
}

static int cmd_git_url(int argc, char **argv)
{
	struct git_url_args a = { .base = getenv("SANDBOXD_PUBLIC_URL"), .ttl = JWT_DEFAULT_TTL,
				  .iat = (int64_t)time(NULL) };
	char owner[48], name[104], *tok = NULL;
	EVP_PKEY *key = NULL;
	struct err e;
	int rc;

	if (wants_help(argc, argv))
		return help("git-url");
	if ((rc = git_url_options(argc, argv, &a)))
		return rc;
	if ((rc = split_repo(a.repo, owner, sizeof(owner), name, sizeof(name), &e)))
		return fail(rc, &e);
	if ((rc = read_private_key(a.keyfile, &key, &e)) == ERR_NOTFOUND)
		return fail(rc, &e);
	if (rc)
		goto out;
	/* An owner's key signs as the owner: iss is the owner, the audience the service's. */
	snprintf(a.c.iss, sizeof(a.c.iss), "%s", owner);
	snprintf(a.c.owner, sizeof(a.c.owner), "%.39s", owner);
	snprintf(a.c.name, sizeof(a.c.name), "%.100s", name);
	a.c.iat = a.iat;
	a.c.exp = a.iat + a.ttl;
	if ((rc = giturl_sign(key, &a.c, &tok, &e)))
		goto out;
	const char *proto = strncmp(a.base, "https://", 8) == 0 ? "https://" : "http://";
	size_t bl = strlen(a.base);
	while (bl > 0 && a.base[bl - 1] == '/')
		bl--;
	printf("%sx-token:%s@%.*s/%s/%s.git\n", proto, tok, (int)(bl - strlen(proto)),
	       a.base + strlen(proto), owner, name);
out:
	free(tok);
	EVP_PKEY_free(key);
	return rc ? fail(rc, &e) : EXIT_OK;
}

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
static int cmd_audit(int argc, char **argv)
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

/* The commands, as cgit's cmd.c has them: a name and its function, which gets argv from
 * the command's name on. */
static int cmd_engine(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max", required_argument, NULL, 'm' },
		{ "ca", required_argument, NULL, 'a' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "insecure", no_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ca = NULL, *cert = NULL, *key = NULL, *op = argc > 1 ? argv[1] : "";
	int add = !strcmp(op, "add"), list = !strcmp(op, "list");
	int64_t max = 100;
	struct err e;
	int c, rc, want = add ? 4 : list ? 2 : 3, insecure = 0;

	if (wants_help(argc, argv))
		return help("engine");
	if (!add && !list && strcmp(op, "drain") && strcmp(op, "activate") && strcmp(op, "remove"))
		return usage("engine add|drain|activate|remove|list");
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
		default: return usage(NULL);
		}
	}
	if (argc < want || (add ? optind != argc : argc != want))
		return usage(add ? "engine add NAME URL [--max N] [--ca F --cert F --key F | --insecure]"
			     : list ? "engine list takes no arguments"
				    : "engine drain|activate|remove NAME");
	if ((rc = connect_db(&e)))
		return fail(rc, &e);
	if (add)
		rc = engine_add(&db, argv[2], argv[3], ca, cert, key, (int)max, insecure, &e);
	else if (!strcmp(op, "drain") || !strcmp(op, "activate"))
		rc = engine_set_state(&db, argv[2], op[0] == 'd' ? "draining" : "active", &e);
	else if (!list)
		rc = engine_remove(&db, argv[2], &e);
	else
		rc = engine_print(&db, stdout, &e);
	if (rc)
		return fail(rc, &e);
	if (!list)
		printf("engine %s: %s\n", argv[2], add ? "added" : op[0] == 'r' ? "removed"
		       : op[0] == 'd' ? "draining" : "active");
	return EXIT_OK;
}

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "migrate", cmd_migrate },
	{ "account", cmd_account },
	{ "token", cmd_token },
	{ "repo", cmd_repo },
	{ "collaborator", cmd_collaborator },
	{ "key", cmd_key },
	{ "git-url", cmd_git_url },
	{ "audit", cmd_audit },
	{ "engine", cmd_engine },
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
