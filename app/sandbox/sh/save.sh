# save.sh: before a stop, what the work tree holds that is not pushed (SPEC.md §4 "Nothing
# lost at a stop"): tracked changes and untracked files (.gitignore respected) committed on
# top of HEAD, then HEAD pushed to refs/heads/$SANDBOXD_SAVE_REF with the credential in
# $SANDBOXD_SAVE_TOKEN, an ephemeral git URL token of the creator's (so it lands under
# refs/namespaces/ephemeral/, through the usual push rules). The credential reaches git
# through its environment, never an argument; it replaces the clone's own header for the
# service's URL (an empty value resets git's list). $SANDBOXD_SAVE_START is the commit the
# sandbox started at: nothing newer and a clean tree is nothing to save.
# Prints "saved <commit>" or "nothing"; exit 3: no clone, 4: the commit failed, 5: the push
# was refused (git's words on stdout).
# shellcheck shell=bash

cd /workspace/repo 2>/dev/null || exit 3
git add -A >/dev/null 2>&1 || exit 4
if ! git diff --cached --quiet 2>/dev/null; then
	git commit -q --no-verify -m "Work saved by sandboxd when the sandbox stopped" \
		>/dev/null 2>&1 || exit 4
fi
head=$(git rev-parse -q --verify HEAD) || { echo nothing; exit 0; }
[ "$head" = "$SANDBOXD_SAVE_START" ] && { echo nothing; exit 0; }
url=$(git remote get-url origin) || exit 3
base=${url%/*/*}/
export GIT_CONFIG_COUNT=2 GIT_TERMINAL_PROMPT=0
export GIT_CONFIG_KEY_0="http.$base.extraHeader" GIT_CONFIG_VALUE_0=
export GIT_CONFIG_KEY_1="http.$base.extraHeader"
GIT_CONFIG_VALUE_1="Authorization: Basic $(printf 'x-access-token:%s' "$SANDBOXD_SAVE_TOKEN" | base64 -w0)"
export GIT_CONFIG_VALUE_1
unset SANDBOXD_SAVE_TOKEN
git push -q origin "$head:refs/heads/$SANDBOXD_SAVE_REF" 2>&1 || exit 5
echo "saved $head"
