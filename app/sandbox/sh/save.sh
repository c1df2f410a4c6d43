# save.sh: before a stop, what the work tree holds that is not pushed (SPEC.md §4 "Nothing
# lost at a stop"), in two runs (sandbox_save.c; docs/decisions/0078):
#
# `save.sh commit`: tracked changes and untracked files (.gitignore respected) committed on
# top of HEAD. Prints "head <commit>", or "nothing" when HEAD is $SANDBOXD_SAVE_START (the
# commit the sandbox started at) and the tree is clean. There is no credential in the
# container yet: the repository's own filters and hooks run here as in any commit of the
# sandbox's (but its commit hooks: --no-verify).
#
# `save.sh push`: $SANDBOXD_SAVE_HEAD pushed to refs/heads/$SANDBOXD_SAVE_REF of
# $SANDBOXD_SAVE_URL, the URL the service knows (never origin's, which the sandbox can
# set), from a git directory made here for the push, whose objects are the clone's (as
# alternates) and whose configuration is ours: nothing of the clone's configuration
# (remotes, url.*.insteadOf, http.proxy, credential helpers, hooks), the home's or the
# system's takes part, nor any GIT_* or proxy variable. The credential is the file
# $SANDBOXD_SAVE_CRED that the service put in just before (git configuration: the
# Authorization header for the service's URL only): opened on descriptor 9 and removed at
# once, git reads it as /dev/fd/9 (include.path; its programs inherit the descriptor and
# only the path goes through GIT_CONFIG_PARAMETERS), so that it is in no environment, no
# argument and no file once the push runs. Prints "saved <commit>".
# Exit 3: no clone, 4: the commit failed, 5: the push was refused (git's words on stdout),
# 6: the credential was not there.
# shellcheck shell=bash

commit() {
	cd /workspace/repo 2>/dev/null || exit 3
	git add -A >/dev/null 2>&1 || exit 4
	if ! git diff --cached --quiet 2>/dev/null; then
		git commit -q --no-verify -m "Work saved by sandboxd when the sandbox stopped" \
			>/dev/null 2>&1 || exit 4
	fi
	head=$(git rev-parse -q --verify 'HEAD^{commit}') || { echo nothing; exit 0; }
	[ "$head" = "$SANDBOXD_SAVE_START" ] && { echo nothing; exit 0; }
	echo "head $head"
}

push() {
	local cred=$SANDBOXD_SAVE_CRED url=$SANDBOXD_SAVE_URL head=$SANDBOXD_SAVE_HEAD
	local ref=$SANDBOXD_SAVE_REF clone=/workspace/repo/.git dir
	{ [ -f "$cred" ] && exec 9<"$cred"; } || exit 6
	rm -f "$cred"
	unset SANDBOXD_SAVE_CRED
	[ -d "$clone/objects" ] || exit 3
	# Nothing of what the sandbox could have set for git or libcurl.
	unset "${!GIT_@}" http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy \
		NO_PROXY no_proxy
	dir=$(mktemp -d /tmp/.sandboxd-push.XXXXXX) || exit 5
	trap 'rm -rf "$dir"' EXIT
	# A bare repository by hand (git init would copy the system's templates): HEAD, refs,
	# objects borrowed from the clone, its shallow list (a shallow clone's history ends
	# there), and a configuration of two lines.
	mkdir -p "$dir/git/objects/info" "$dir/git/refs" "$dir/home" &&
		printf 'ref: refs/heads/save\n' >"$dir/git/HEAD" &&
		printf '[core]\n\trepositoryformatversion = 0\n\tbare = true\n' >"$dir/git/config" &&
		printf '%s\n' "$clone/objects" >"$dir/git/objects/info/alternates" || exit 5
	if [ -f "$clone/shallow" ]; then cp "$clone/shallow" "$dir/git/shallow" || exit 5; fi
	export GIT_DIR="$dir/git" HOME="$dir/home" XDG_CONFIG_HOME="$dir/home" \
		GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
	cd "$dir" || exit 5
	git -c include.path=/dev/fd/9 -c core.hooksPath=/dev/null -c http.proxy= \
		-c http.followRedirects=false -c credential.helper= \
		push -q --no-verify "$url" "$head:refs/heads/$ref" 2>&1 || exit 5
	echo "saved $head"
}

case ${1:-} in
commit) commit ;;
push) push ;;
*) exit 2 ;;
esac
