/* sandbox_save.h: nothing lost at a stop (SPEC.md §4): before an idle or lifetime stop, or
 * a close that asks, the sandbox's unpushed work (tracked changes and untracked files
 * committed on top of HEAD, and commits not pushed) is pushed as its creator to the
 * ephemeral ref refs/namespaces/ephemeral/refs/heads/sandbox/<id>, through the usual push
 * rules (ref policies, branch protection, push protection). The credential is a git URL
 * token of the creator's, minted here: ephemeral, five minutes, and ref policies that let
 * it update that one ref only (app/sandbox/sh/save.sh uses it). */
#ifndef SANDBOXD_SANDBOX_SAVE_H
#define SANDBOXD_SANDBOX_SAVE_H
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"
#include "sandboxd/sandbox/sandbox.h"

#define SANDBOX_SAVE_PREFIX "refs/namespaces/ephemeral/refs/heads/sandbox/"
#define SANDBOX_SAVE_REF_MAX 96

/* Saves s's work (its container must run). 0 with ref set to where it went, or "" when
 * there was nothing to save; else the code, with e saying why (a refused push: git's last
 * words). */
int sandbox_save(struct db *db, const struct sandbox *s, char ref[SANDBOX_SAVE_REF_MAX],
		 struct err *e) __attribute__((warn_unused_result));

#endif
