/* ctl.h: what sandboxctl.c and its commands (app/bin/ctl/, one file per command group, as
 * git's builtin/ beside git.c) share. Internal to sandboxctl: not in include/sandboxd/.
 * Every int here is an exit code or a result: warn_unused_result, as in include/. */
#ifndef SANDBOXCTL_CTL_H
#define SANDBOXCTL_CTL_H
#include <stddef.h>
#include <openssl/evp.h>
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_NOTFOUND = 3, EXIT_EXISTS = 4 };

/* sandboxctl.c: the database (connect_db connects it, main closes it) and the helpers. */
extern struct db db;
/* msg (when not NULL) and the usage text on stderr; EXIT_USAGE. */
int usage(const char *msg) __attribute__((warn_unused_result));
/* Maps an error to an exit code after printing it. */
int fail(int code, const struct err *e) __attribute__((warn_unused_result));
/* db on SANDBOXD_DATABASE_URL. */
int connect_db(struct err *e) __attribute__((warn_unused_result));
/* True when argv has --help; commands print their line of usage_text then. */
int wants_help(int argc, char **argv) __attribute__((warn_unused_result));
/* The usage text's lines that name command, on stdout; EXIT_OK. */
int help(const char *command) __attribute__((warn_unused_result));

/* repo.c: splits OWNER/NAME into the two buffers; ERR_INVALID naming the argument. */
int split_repo(const char *arg, char *owner, size_t on, char *name, size_t nn, struct err *e)
	__attribute__((warn_unused_result));
/* key.c: the private key in path (PEM, at most JWT_PEM_MAX bytes) into *key. */
int read_private_key(const char *path, EVP_PKEY **key, struct err *e)
	__attribute__((warn_unused_result));

/* The commands (sandboxctl.c's table): each gets argv from the command's name on and
 * returns the exit code. */
int cmd_migrate(int argc, char **argv) __attribute__((warn_unused_result));      /* migrate.c */
int cmd_account(int argc, char **argv) __attribute__((warn_unused_result));      /* account.c */
int cmd_token(int argc, char **argv) __attribute__((warn_unused_result));        /* token.c */
int cmd_repo(int argc, char **argv) __attribute__((warn_unused_result));         /* repo.c */
int cmd_collaborator(int argc, char **argv) __attribute__((warn_unused_result)); /* repo.c */
int cmd_key(int argc, char **argv) __attribute__((warn_unused_result));          /* key.c */
int cmd_git_url(int argc, char **argv) __attribute__((warn_unused_result));      /* git_url.c */
int cmd_audit(int argc, char **argv) __attribute__((warn_unused_result));        /* audit.c */
int cmd_engine(int argc, char **argv) __attribute__((warn_unused_result));       /* engine.c */
#endif
