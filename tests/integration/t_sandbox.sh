#!/usr/bin/env bash
# t_sandbox.sh: sandboxes on the real Docker engine: create, get, list, close, who may
# call, refusals, the clone inside with its sandbox token, and nothing left running.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
fails() { ! "$@"; }
container_of() { docker ps -aq --filter "label=sandboxd.sandbox=$(owner_label_of "$1")"; }
in_box() { # SANDBOX CMD…: run as the sandbox user, like an exec would
	docker exec -u "$BOX_USER" -w /workspace/repo "$(container_of "$1")" "${@:2}"
}
clone_state() { clone_state_as "$1" "$2" "$OT"; }
clone_state_as() {
	api GET "/api/v3/repos/$R/diffinery/sandboxes/$1" "" "$3"
	[ "$(_json .clone.state)" = "$2" ]
}

O="sbx$SFX"
mk_user "$O" --name "Sandbox Owner" --email "owner@example.test" || exit 1
OT=$LAST_TOKEN
R="$O/app"
api POST /api/v3/user/repos '{"name":"app","visibility":"private"}' "$OT"
expect_status 201 'repository created'
W=$_T/w
git init -q -b main "$W"
echo one >"$W/f" && git -C "$W" add f && git -C "$W" commit -qm one
git -C "$W" tag v1
echo two >"$W/f" && git -C "$W" commit -qam two
git -C "$W" push -q "http://t:$OT@$HOSTPORT/$R.git" main v1
SB=/api/v3/repos/$R/diffinery/sandboxes

# --- create ----------------------------------------------------------------------------
api POST "$SB" '{}' "$OT"
expect_status 201 'create on the default branch: 201'
expect_schema sandbox.create 201
expect_keys . 'created_at,egress,id,image,isolation,ref,state' '{id, ref, state, image, egress, isolation, created_at}'
expect_json .isolation container 'isolation: container, the default'
expect_json .ref main 'ref defaults to the default branch'
expect_json .state ready 'state ready once the container runs'
expect_json_match .id '^sb_[0-9a-f]{24}$' 'an opaque id'
ID=$(_json .id)
check 'its container runs, labelled with the sandbox' [ -n "$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")" ]
check 'the clone finishes' wait_until 60 clone_state "$ID" done
expect_schema sandbox.get 200
expect_keys . 'clone,commit,created_at,egress,end_reason,id,idle_stop_at,image,isolation,last_used_at,ref,resources,saved_ref,state' 'GET shape (SPEC §4)'
expect_json .isolation container 'GET echoes its isolation'
expect_json '[.end_reason, .saved_ref] | map(tostring) | join("|")' 'null|null' 'a live sandbox: end_reason and saved_ref null'
expect_json '.resources | [.cpus, .memoryMiB, .diskMiB] | map(tostring) | join("|")' \
	"${SANDBOXD_SANDBOX_CPUS:-2}|${SANDBOXD_SANDBOX_MEMORY_MB:-512}|${SANDBOXD_SANDBOX_DISK_MB:-10240}" \
	"resources: the defaults' CPUs, memory and disk"
expect_json .commit "$(git -C "$W" rev-parse main)" 'commit is the resolved ref'
check_eq 'the repository is checked out at /workspace/repo' two "$(in_box "$ID" cat f)"
check_eq 'on the branch asked for' main "$(in_box "$ID" git rev-parse --abbrev-ref HEAD)"
check_eq "user.name is the creator's" 'Sandbox Owner' "$(in_box "$ID" git config user.name)"
check_eq "user.email is the creator's" 'owner@example.test' "$(in_box "$ID" git config user.email)"
HDR=$(in_box "$ID" git config --get "http.http://sandboxd.internal:${SANDBOXD_URL##*:}/.extraheader")
check 'the clone sends the sandbox token in a header for the service only' grep -q '^Authorization: Basic ' <<<"$HDR"
check 'the header holds the sandbox token' grep -q '^x-access-token:dst_' <<<"$(base64 -d <<<"${HDR##* }")"
check_eq 'the remote URL holds no credential' "http://sandboxd.internal:${SANDBOXD_URL##*:}/$R.git" "$(in_box "$ID" git config remote.origin.url)"
# What a command sees (a container from the warm pool was made before its sandbox: its
# own environment cannot name it; every exec's does).
api POST "$SB/$ID/exec" '{"cmd":"env"}' "$OT"
BOX_ENV=$(_json .stdout)
expect_schema sandbox.exec 200
check 'the environment is readable' grep -q "^SANDBOX_ID=$ID\$" <<<"$BOX_ENV"
check 'and holds no token' eval '! grep -q dst_ <<<"$BOX_ENV"'
api POST "$SB/$ID/exec" '{"cmd":"id -u"}' "$OT"
expect_json .stdout "$BOX_UID" "commands run as the user /healthz names ($BOX_UID: root only on an engine that remaps it, t_root_inside)"
api POST "$SB/$ID/exec" '{"cmd":"printenv SANDBOX_ID SANDBOX_REPOSITORY"}' "$OT"
check_eq 'SANDBOX_ID and SANDBOX_REPOSITORY are set' "$ID"$'\n'"$R" "$(_json .stdout)"
echo three >"$_T/three"
check 'git push from inside the sandbox works' in_box "$ID" sh -c 'echo in-box > g && git add g && git commit -qm in-box && git push -q origin HEAD:refs/heads/from-box'
check_eq 'the pushed branch landed' "$(in_box "$ID" git rev-parse HEAD)" "$(git --git-dir "$REPOS_DIR/$R.git" rev-parse -q --verify refs/heads/from-box)"
check_eq 'the push is audited as the creator with the sandbox token' "$O|sandbox" "$(sql "select login || '|' || token_kind from audit_log where action = 'git.push.ref' and repository = '$R' and details->>'ref' = 'refs/heads/from-box'")"
TOK=$(box_token_of "$(container_of "$ID")")
check_eq 'the sandbox token reads its repository' 200 "$(curl -s -o /dev/null -w '%{http_code}' -u "x:$TOK" "$SANDBOXD_URL/$R.git/info/refs?service=git-upload-pack")"
api GET /api/v3/user "" "$TOK"
expect_error 403 'sandbox tokens can only be used for git' 'a sandbox token on REST: 403'
api POST "$SB" '{}' "$TOK"
expect_error 403 "job and sandbox tokens can't start sandboxes" 'a sandbox token cannot start sandboxes'

api POST "$SB" '{"ref":"v1"}' "$OT"
expect_status 201 'create at a tag'
TAGID=$(_json .id)
check 'the tag clone finishes' wait_until 60 clone_state "$TAGID" done
check_eq 'checked out at the tag' one "$(in_box "$TAGID" cat f)"
api POST "$SB" "{\"ref\":\"$(git -C "$W" rev-parse main~1)\"}" "$OT"
expect_status 201 'create at a commit SHA'
SHAID=$(_json .id)

# --- shallow and blobless clones (SPEC §4 Create: depth, filter) -------------------------------
box_run() { api POST "$SB/$1/exec" "$(jq -nc --arg c "$2" '{cmd: $c}')" "$OT"; }
api POST "$SB" '{"depth":0}' "$OT"
expect_error 400 "field 'depth' must be an integer between 1 and 1000000" 'depth 0: 400 naming it'
api POST "$SB" '{"filter":"tree:0"}' "$OT"
expect_error 400 "field 'filter' must be \"blob:none\"" 'another filter: 400 naming it'
api POST "$SB" '{"depth":1}' "$OT"
expect_status 201 'a shallow create (depth 1)'
SHID=$(_json .id)
check 'its clone finishes' wait_until 60 clone_state "$SHID" done
box_run "$SHID" 'git rev-parse --is-shallow-repository; git rev-list --count HEAD; git rev-parse --abbrev-ref HEAD; git rev-parse --abbrev-ref @{upstream}; cat f'
expect_json .stdout $'true\n1\nmain\norigin/main\ntwo' 'one commit, shallow, on main tracking origin/main'
box_run "$SHID" 'echo s > s && git add s && git commit -qm s && git push -q origin HEAD:refs/heads/from-shallow 2>&1 && git fetch -q origin 2>&1 && git log --oneline | wc -l'
expect_json .exitCode 0 'git push and git fetch work from the shallow clone'
check_eq 'the pushed branch landed on the tip of main' "$(git -C "$W" rev-parse main)" \
	"$(git --git-dir "$REPOS_DIR/$R.git" rev-parse -q --verify refs/heads/from-shallow~1)"
check_eq 'the create is audited with its depth' 1 "$(sql "select details->>'depth' from audit_log where action = 'sandbox.create' and sandbox_id = '$SHID'")"
api POST "$SB/$SHID/close" "" "$OT"
api POST "$SB" '{"ref":"v1","depth":1}' "$OT"
expect_status 201 'a shallow create at a tag (not a branch tip)'
SHID=$(_json .id)
check 'its clone finishes' wait_until 60 clone_state "$SHID" done
box_run "$SHID" 'git rev-list --count HEAD; cat f'
expect_json .stdout $'1\none' 'one commit, the tag'"'"'s'
api POST "$SB/$SHID/close" "" "$OT"
api POST "$SB" '{"filter":"blob:none"}' "$OT"
expect_status 201 'a blobless create'
SHID=$(_json .id)
check 'its clone finishes' wait_until 60 clone_state "$SHID" done
box_run "$SHID" 'git config remote.origin.promisor; git rev-list --count HEAD; cat f; git show HEAD~1:f'
expect_json .stdout $'true\n2\ntwo\none' 'all history, a promisor remote, old contents fetched when asked'
check_eq 'the create is audited with its filter' blob:none "$(sql "select details->>'filter' from audit_log where action = 'sandbox.create' and sandbox_id = '$SHID'")"
api POST "$SB/$SHID/close" "" "$OT"

# --- refusals ----------------------------------------------------------------------------
api POST "$SB" '{"ref":"no-such-branch"}' "$OT"
expect_error 422 'unknown ref' 'an unknown ref: 422'
api POST "$SB" '{"ref":"main~1"}' "$OT"
expect_error 422 'unknown ref' 'revision syntax is not a ref: 422'
api POST "$SB" '{"ref":5}' "$OT"
expect_error 400 "field 'ref' must be a string" 'ref of the wrong type: 400'
api POST "/api/v3/repos/$R/job-tokens" '{"scope":"write"}' "$OT"
JOB=$(_json .token)
api POST "$SB" '{}' "$JOB"
expect_error 403 "job and sandbox tokens can't start sandboxes" 'a job token: 403 with the exact text'
RD=$(mk_token "$O" read)
api POST "$SB" '{}' "$RD"
expect_error 403 'this needs a token with write scope' 'a read token: 403'
OTHER="sbxo$SFX"
mk_user "$OTHER" || exit 1
XT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$OTHER" '{"role":"write"}' "$OT"
api GET "$SB/$ID" "" "$XT"
expect_error 403 'not your sandbox' "another user's sandbox: 403"
expect_schema sandbox.get 403
api POST "$SB/$ID/close" "" "$XT"
expect_error 403 'not your sandbox' "closing another user's sandbox: 403"
api GET "$SB" "" "$XT"
expect_json 'length' 0 "a collaborator lists only their own sandboxes"
api GET "$SB" "" "$OT"
expect_json 'length' 6 'the owner (admin) lists every sandbox of the repository (the clone modes'"'"' three, closed, too)'
expect_schema sandbox.list 200
api GET "$SB/sb_000000000000000000000000" "" "$OT"
expect_error 404 'sandbox not found' 'an unknown sandbox: 404'
api POST "$SB" '{}' "$XT"
expect_status 201 'the collaborator may start one'
XID=$(_json .id)
check 'the collaborator sandbox clones' wait_until 60 clone_state_as "$XID" done "$XT"
TOKX=$(box_token_of "$(container_of "$XID")")
refs() { curl -s -o /dev/null -w '%{http_code}' -u "x:$1" "$SANDBOXD_URL/$R.git/info/refs?service=git-upload-pack"; }
check_eq "the collaborator's sandbox token reads the repository" 200 "$(refs "$TOKX")"
api DELETE "/api/v3/repos/$R/collaborators/$OTHER" '' "$OT"
check_eq 'the creator losing access revokes the sandbox token' 401 "$(refs "$TOKX")"
api PUT "/api/v3/repos/$R/collaborators/$OTHER" '{"role":"write"}' "$OT"
check_eq 'access back: it stays revoked, for good (SPEC §2)' 401 "$(refs "$TOKX")"
api GET "$SB/$XID" "" "$XT"
expect_json .state stopped 'and its sandbox is stopped'
api POST "$SB" '{}' "$XT"
expect_status 201 'the creator, back, starts a new one'
api POST "$SB" '{}' "$XT"
api POST "$SB" '{}' "$XT"
api POST "$SB" '{}' "$XT"
api POST "$SB" '{}' "$XT"
expect_error 429 'sandbox limit reached' 'past the per-account limit: 429'
api PATCH "/api/v3/repos/$R" '{"archived":true}' "$OT"
api GET "$SB/$ID" "" "$OT"
expect_error 403 'repository is archived (read-only)' 'an archived repository: 403 on every call'
api PATCH "/api/v3/repos/$R" '{"archived":false}' "$OT"

# --- close ---------------------------------------------------------------------------------
api POST "$SB/$ID/close" "" "$OT"
expect_status 204 'close: 204'
api POST "$SB/$ID/close" "" "$OT"
expect_status 204 'closing again: 204'
check_eq 'its container is gone' '' "$(docker ps -aq --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")"
api GET "$SB/$ID" "" "$OT"
expect_json .state closed 'state closed'
expect_json .end_reason closed 'end_reason: closed'
check_eq 'its git token stops working' 401 "$(curl -s -o /dev/null -w '%{http_code}' -u "x:$TOK" "$SANDBOXD_URL/$R.git/info/refs?service=git-upload-pack")"
check_eq 'create and close are audited with the sandbox id' 2 "$(sql "select count(distinct action) from audit_log where sandbox_id = '$ID' and action in ('sandbox.create', 'sandbox.close')")"
for s in $TAGID $SHAID; do api POST "$SB/$s/close" "" "$OT"; done
for s in $(sql "select id from sandboxes where account_id = (select id from accounts where login = '$OTHER') and state = 'ready'"); do api POST "$SB/$s/close" "" "$XT"; done
check_eq 'nothing of this test runs any more' '' "$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$TAGID")"; docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$XID")")"
# --- the per-account limit under concurrent creates ----------------------------------------
# The count and the insert are one step for the database (the account row is locked):
# creates that race never pass the limit (4 in the test configuration).
L="sbl$SFX"
mk_user "$L" || exit 1
LT=$LAST_TOKEN
api POST /api/v3/user/repos '{"name":"lim","visibility":"private"}' "$LT"
git -C "$W" push -q "http://t:$LT@$HOSTPORT/$L/lim.git" main
LSB=/api/v3/repos/$L/lim/diffinery/sandboxes
race() { # N: N creates at once; prints their statuses, sorted
	local i
	for i in $(seq "$1"); do
		curl -s -o "$_T/race.$i" -w '%{http_code}\n' -X POST -H "Authorization: Bearer $LT" \
			-H 'Content-Type: application/json' -d '{}' --max-time 120 "$SANDBOXD_URL$LSB" &
	done
	wait
}
running() { sql "select count(*) from sandboxes s join accounts a on a.id = s.account_id where a.login = '$L' and s.state in ('starting', 'ready')"; }
close_all() {
	local s
	for s in $(sql "select s.id from sandboxes s join accounts a on a.id = s.account_id where a.login = '$L' and s.state in ('starting', 'ready')"); do
		api POST "$LSB/$s/close" "" "$LT"
	done
}
OUT=$(race 6 | sort | uniq -c | awk '{print $2 "x" $1}' | paste -sd' ')
check_eq 'six creates at once: exactly four 201 and two 429' '201x4 429x2' "$OUT"
check_eq 'four sandboxes run' 4 "$(running)"
check_eq 'the two refused ones say why' 2 "$(grep -l '{"message":"sandbox limit reached"}' "$_T"/race.* | wc -l)"
close_all
# With two already running, the racing creates see them and each other.
api POST "$LSB" '{}' "$LT"
api POST "$LSB" '{}' "$LT"
OUT=$(race 4 | sort | uniq -c | awk '{print $2 "x" $1}' | paste -sd' ')
check_eq 'two running, four creates at once: two 201 and two 429' '201x2 429x2' "$OUT"
check_eq 'never more than the limit' 4 "$(running)"
close_all
check_eq 'nothing of the race runs any more' '' "$(for s in $(sql "select s.id from sandboxes s join accounts a on a.id = s.account_id where a.login = '$L'"); do docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$s")"; done)"

# ---- a cold container's parameters, cut short on its input ---------------------------------
# A cold create writes the clone's parameters to its container's input before the start
# (app/sandbox/sh/clone.sh reads them there). Input that ends before them all (a write cut short)
# fails the clone with a reason, and the container waits, as after any failed clone.
CUT=$(docker create -i --label "sandboxd.test=cut$SFX" sandboxd-runner:minimal \
	bash -c "$(cat "$ROOT/app/sandbox/sh/clone.sh")" sandboxd-clone)
AT_EXIT+=("docker rm -f '$CUT' >/dev/null 2>&1")
printf 'http://sandboxd.internal/o/r.git\ndst_cut\n' | timeout 60 docker start -a -i "$CUT" >/dev/null 2>&1 &
cut_state() { [[ $(docker exec "$CUT" cat /workspace/.sandboxd/clone.state 2>/dev/null) == failed ]]; }
check 'parameters cut short on the input: the clone is failed' wait_until 20 cut_state
check_eq 'with the reason' 'the sandbox parameters did not arrive whole' \
	"$(docker exec "$CUT" cat /workspace/.sandboxd/clone.log)"
check_eq 'and the container waits (its first process is sleep)' running \
	"$(docker inspect -f '{{.State.Status}}' "$CUT")"
check_eq 'no part of them is left in it' '' \
	"$(docker exec "$CUT" sh -c 'grep -rl dst_cut /tmp /workspace 2>/dev/null')"
docker rm -f "$CUT" >/dev/null 2>&1
wait
finish
