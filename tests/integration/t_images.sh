#!/usr/bin/env bash
# t_images.sh: what's inside a sandbox (SPEC.md §4). GET /api/v3/sandbox-images lists the
# stack's images (the default SANDBOXD_IMAGES: standard first, then minimal) with their size
# and the main tools' versions, and those versions are what the tools print inside a sandbox
# of the image; a repository picks an image (PATCH {sandbox_image}, null back to the
# default), a create picks one ({image}) over the repository's; unknown names are 422; the
# warm pool holds the default image only, so another image's create starts cold.
. "$(dirname "$0")/lib.sh"

O="img$SFX"
mk_repo "$O" tools
new_sandbox() { # [BODY]: a sandbox (ID), closed at exit
	local body=${1:-'{}'}
	api POST "$SB" "$body" "$OT"
	ID=$(_json .id)
	[[ -n $ID && $ID != null ]] && AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
}
run() { api POST "$SB/$ID/exec" "$(jq -nc --arg c "$1" '{cmd: $c}')" "$OT"; }
close_it() { api POST "$SB/$ID/close" '' "$OT"; }

# --- the list ---------------------------------------------------------------------------------
api GET /api/v3/sandbox-images '' -
expect_status 401 'the list needs a token'
api GET /api/v3/sandbox-images '' "$OT"
expect_status 200 'any token lists the images'
LIST=$BODY
check_eq 'standard (the default) then minimal, with their references' \
	'standard=sandboxd-runner:standard:true,minimal=sandboxd-runner:minimal:false' \
	"$(jq -r 'map("\(.name)=\(.image):\(.default)") | join(",")' <<<"$LIST")"
check_eq 'each entry is {name, image, default, present, size, packages}' \
	'default,image,name,packages,present,size' "$(jq -r '[.[] | keys | join(",")] | unique | join(";")' <<<"$LIST")"
check_eq 'both are in the engine, each with its size in bytes (the engine says the same)' \
	"$(docker image inspect -f '{{.Size}}' sandboxd-runner:standard) $(docker image inspect -f '{{.Size}}' sandboxd-runner:minimal)" \
	"$(jq -r 'map(select(.present) | .size) | join(" ")' <<<"$LIST")"
check_cond 'standard is the larger: toolchains (> 500 MB), minimal < 400 MB' \
	'(( $(jq ".[0].size" <<<"$LIST") > 500000000 && $(jq ".[1].size" <<<"$LIST") < 400000000 ))'
check_eq 'every package has a name and a version that is not empty' 0 \
	"$(jq '[.[].packages[] | select((.name // "") == "" or (.version // "") == "")] | length' <<<"$LIST")"
ver() { jq -r --arg i "$1" --arg p "$2" '.[] | select(.name == $i) | .packages[] | select(.name == $p) | .version' <<<"$LIST"; }
check_eq 'standard lists the toolchains' 'cmake gcc git jq node npm pip pytest python3 ripgrep sqlite3' \
	"$(jq -r '.[0].packages | map(.name) | map(select(IN("node","npm","python3","pip","pytest","gcc","cmake","git","jq","ripgrep","sqlite3"))) | sort | join(" ")' <<<"$LIST")"
check_eq 'minimal lists git and no toolchain' "git=$(ver standard git) node=" \
	"git=$(ver minimal git) node=$(ver minimal node)"
check_eq 'the versions are the image label the build wrote (not a list in the service)' \
	"$(docker image inspect -f '{{index .Config.Labels "sandboxd.packages"}}' sandboxd-runner:standard)" \
	"$(jq -r '.[0].packages | map("\(.name)=\(.version)") | join(" ")' <<<"$LIST")"

# --- a sandbox on the default image: the tools print those versions ---------------------------
new_sandbox
expect_status 201 'a sandbox without an image: created'
check_eq 'on the default image' standard "$(_json .image)"
STD=$ID
api GET "$SB/$STD" '' "$OT"
expect_json .image standard 'its state says image standard'
run 'node --version; npm --version; python3 --version; python3 -m pytest --version 2>&1; gcc --version | head -n 1; cmake --version | head -n 1; git --version; jq --version; rg --version | head -n 1; sqlite3 --version; make --version | head -n 1; id -un'
expect_json .exitCode 0 'the toolchains run inside (as the sandbox user)'
OUT=$(_json .stdout)
for t in node npm python3 pytest gcc cmake git jq ripgrep sqlite3 make; do
	v=$(ver standard "$t")
	check "$t: the listed version ($v) is what it prints inside" \
		grep -qF -- "$v" <<<"$OUT"
done
run 'apt-get install --simulate --no-install-recommends hello 2>&1 | grep -c "^Inst hello "'
check_eq 'apt lists are in the image: apt-get can resolve a package (simulated: no root, no network)' \
	'0|1' "$(_json .exitCode)|$(_json .stdout)"
close_it

# --- the repository's choice ------------------------------------------------------------------
api GET "/api/v3/repos/$R" '' "$OT"
check_eq 'a repository says sandbox_image null while unset' null "$(_json .sandbox_image)"
api PATCH "/api/v3/repos/$R" '{"sandbox_image":"nope"}' "$OT"
expect_error 422 'unknown image' 'PATCH a name SANDBOXD_IMAGES does not hold: 422 unknown image'
api PATCH "/api/v3/repos/$R" '{"sandbox_image":5}' "$OT"
expect_error 400 "field 'sandbox_image' must be a string" 'PATCH a number: 400'
api PATCH "/api/v3/repos/$R" '{"sandbox_image":"minimal"}' "$OT"
expect_status 200 'PATCH {sandbox_image: minimal}'
expect_json .sandbox_image minimal 'the answer says it'
api GET "/api/v3/repos/$R" '' "$OT"
expect_json .sandbox_image minimal 'and so does the repository afterwards'
api GET /api/v3/user/repos '' "$OT"
check_eq 'and the list of repositories' minimal "$(jq -r --arg n tools '.[] | select(.name == $n) | .sandbox_image' <<<"$BODY")"
check_eq 'the change is audited' '"minimal"' \
	"$(sql "select details->'changes'->'sandbox_image' from audit_log where action = 'repo.update' and repository = '$R' order by id desc limit 1")"

# The pool's warm containers are of the default image; a create of another starts cold.
check 'the warm pool has a ready container' wait_until 60 warm_ready_at_least 1
check_eq 'of the default image only' sandboxd-runner:standard \
	"$(sql "select string_agg(distinct image, ',') from warm_containers where instance = '$SANDBOXD_INSTANCE' and state = 'ready'")"
new_sandbox
expect_status 201 'a create without an image on that repository'
check_eq 'runs the repository'"'"'s image' minimal "$(_json .image)"
MIN=$ID
check_eq 'started cold, the warm pool notwithstanding (audited pooled false, image minimal)' 'false|minimal' \
	"$(create_audit "$MIN" pooled image)"
run 'command -v node || printf "no-node "; tr "\n" " " </usr/share/sandboxd-runner/packages'
check_eq 'inside: no node, and the packages file minimal'"'"'s build wrote' \
	"no-node $(jq -r '.[1].packages | map("\(.name)=\(.version)") | join(" ")' <<<"$LIST") " "$(_json .stdout)"
close_it

# --- the create's choice wins over the repository's -------------------------------------------
new_sandbox '{"image":"nope"}'
expect_error 422 'unknown image' 'a create of an unknown image: 422 unknown image'
check_eq 'and no sandbox row for it' 0 \
	"$(sql "select count(*) from sandboxes s join accounts a on a.id = s.account_id where a.login = '$O' and s.state in ('starting','ready')")"
new_sandbox '{"image":7}'
expect_error 400 "field 'image' must be a string" 'a create with a number for image: 400'
new_sandbox '{"image":"standard"}'
expect_status 201 'a create that asks for standard on a minimal repository'
check_eq 'runs standard' standard "$(_json .image)"
run 'node --version'
expect_json .stdout "v$(ver standard node)" 'node is there'
close_it

# --- back to the default ----------------------------------------------------------------------
api PATCH "/api/v3/repos/$R" '{"sandbox_image":null}' "$OT"
expect_json .sandbox_image null 'PATCH {sandbox_image: null}: unset again'
new_sandbox '{"image":"minimal"}'
check_eq 'a create may still ask for minimal' minimal "$(_json .image)"
close_it
new_sandbox
check_eq 'and without asking gets the default again' standard "$(_json .image)"
close_it

# --- an operator's own image, FROM standard, once named in SANDBOXD_IMAGES --------------------
# Built offline (no package fetched): a tool of its own, and the label extended with it.
OWN=sandboxd-it-own:$SFX
rm_own() { docker image rm -f "$OWN" >/dev/null 2>&1; }
AT_EXIT+=(rm_own)
mkdir -p "$_T/own"
cat >"$_T/own/Dockerfile" <<EOF
FROM sandboxd-runner:standard
RUN printf '#!/bin/sh\necho "owntool 4.2.1"\n' >/usr/local/bin/owntool && chmod 0755 /usr/local/bin/owntool
LABEL sandboxd.packages="$(jq -r '.[0].packages | map("\(.name)=\(.version)") | join(" ")' <<<"$LIST") owntool=4.2.1"
EOF
build_own() { # its log shown when it fails
	DOCKER_BUILDKIT=0 docker build -q --label sandboxd.test=t_images -t "$OWN" "$_T/own" >"$_T/build.log" 2>&1 ||
		{ tail -n 5 "$_T/build.log" | sed 's/^/#   /'; return 1; }
}
check 'docker build of an image FROM sandboxd-runner:standard' build_own
IMAGES="standard=sandboxd-runner:standard,minimal=sandboxd-runner:minimal,own=$OWN"
stack_restart own-image SANDBOXD_IMAGES="$IMAGES"
api GET /api/v3/sandbox-images '' "$OT"
check_eq 'the list has it, with its own tool' "own=$OWN:false 4.2.1" \
	"$(jq -r --arg i "$OWN" '.[] | select(.name == "own") | "\(.name)=\(.image):\(.default) \(.packages[] | select(.name == "owntool") | .version)"' <<<"$BODY")"
new_sandbox '{"image":"own"}'
expect_status 201 'a create of it'
run 'owntool; node --version'
check_eq 'its tool and standard'"'"'s run inside' "owntool 4.2.1
v$(ver standard node)" "$(_json .stdout)"
close_it
api PATCH "/api/v3/repos/$R" '{"sandbox_image":"own"}' "$OT"
expect_json .sandbox_image own 'the repository picks it'

# The operator drops the name: the repository's choice is refused, never swapped silently.
stack_restart suite-settings
api POST "$SB" '{}' "$OT"
expect_error 422 'unknown image' 'a create on a repository whose image is no longer named: 422 unknown image'
api POST "$SB" '{"image":"minimal"}' "$OT"
expect_status 201 'while a create that names one still works'
ID=$(_json .id)
close_it
api PATCH "/api/v3/repos/$R" '{"sandbox_image":null}' "$OT"
expect_json .sandbox_image null 'and PATCH null repairs the repository'
finish
