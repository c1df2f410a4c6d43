/* sandboxctl repo and collaborator: create a repository, set who may use it; and
 * split_repo, the OWNER/NAME argument that git-url takes too. */
#define _GNU_SOURCE /* setresuid, setresgid */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>
#include <grp.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/forge/repo.h"
#include "ctl.h"
#include "sandboxd/common/banned.h"

/* Splits OWNER/NAME into the two buffers; ERR_INVALID naming the argument. */
int split_repo(const char *arg, char *owner, size_t on, char *name, size_t nn,
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

int cmd_repo(int argc, char **argv)
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

int cmd_collaborator(int argc, char **argv)
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
