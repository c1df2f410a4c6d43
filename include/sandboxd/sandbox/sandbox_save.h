/* sandbox_save.h: nothing lost at a stop (SPEC.md §4): before an idle or lifetime stop, or
 * a close that asks, the sandbox's unpushed work (tracked changes and untracked files
 * committed on top of HEAD, and commits not pushed) is pushed as its creator to the
 * ephemeral ref refs/namespaces/ephemeral/refs/heads/sandbox/<id>, through the usual push
 * rules (ref policies, branch protection, push protection, and the values of the
 * sandbox's own secrets: decision 0077, which refuses the save whole).
 *
 * In two steps (app/sandbox/sh/save.sh, decision 0078): the commit, with no credential in
 * the container; then the push, to the service's own git URL (SANDBOXD_SANDBOX_GIT_URL,
 * never the clone's origin), from a git directory made for it, so that nothing of the
 * clone's configuration, the home's or the system's takes part. Its credential is a git
 * URL token of the creator's, minted here: ephemeral, five minutes, ref policies that let
 * it update that one ref only, and a jti that names the sandbox; it goes in as a file of
 * git configuration that the push step opens and removes at once: in no environment and no
 * argument. */
#ifndef SANDBOXD_SANDBOX_SAVE_H
#define SANDBOXD_SANDBOX_SAVE_H
#include "sandboxd/core/db.h"
#include "sandboxd/common/err.h"
#include "sandboxd/sandbox/sandbox.h"

#define SANDBOX_SAVE_PREFIX "refs/namespaces/ephemeral/refs/heads/sandbox/"
#define SANDBOX_SAVE_REF_MAX 96
/* The jti of the save's token: this, the sandbox's id, ".", random hex. */
#define SANDBOX_SAVE_JTI_PREFIX "sandbox-save."

/* Saves s's work (its container must run). 0 with ref set to where it went, or "" when
 * there was nothing to save; else the code, with e saying why (a refused push: the
 * service's reason, "push refused: …"; nothing is saved then, not even the files the
 * refusal does not name). */
int sandbox_save(struct db *db, const struct config *cfg, const struct sandbox *s,
		 char ref[SANDBOX_SAVE_REF_MAX], struct err *e) __attribute__((warn_unused_result));

#endif
