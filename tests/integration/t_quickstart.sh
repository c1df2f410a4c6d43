#!/usr/bin/env bash
# t_quickstart.sh: the README's five-minute tour, run as written (issue 15). The fenced blocks
# whose info string is `sh quickstart` are taken from README.md in order and run in one bash, as a
# newcomer pastes them after `make run`: from a folder whose `var` is this stack's var folder,
# with an emptied environment (no SANDBOXD_*, no git identity: only what `. var/local.env`
# gives). Each block's output is compared with the `quickstart-answer` block under it: the
# status line exactly, the JSON by keys, value types and fixed values, a text exactly. Between
# blocks (the bash waits on a fifo) the test checks what the answers do not show: the sandbox's
# token is recorded for run.sh's secret check, its commit is in the bare repository, and after
# the close its row is closed and its container gone.
#
# QS_SHOW=DIR keeps each block's real output in DIR (stepNN.out), to update the README from.
. "$(dirname "$0")/lib.sh"

README=$ROOT/README.md
# what `make run` serves, as the README's answers show it; read as this stack's URL
SHOWN_URL=http://127.0.0.1:8080
# the values that differ from run to run: compared by type and form (hex digits aside)
VARYING='["id","created_at","durationMs","commit","last_used_at","idle_stop_at","expires_at","sha","date"]'
STEP_TIMEOUT=240
Q=$_T/qs     # the blocks, the answers, the outputs
NEWCOMER=$_T/newcomer # the folder the newcomer pastes in; var -> the stack's var folder
mkdir -p "$Q" "$NEWCOMER/home"
ln -s "$SANDBOXD_VAR" "$NEWCOMER/var"

# --- the blocks --------------------------------------------------------------------------------
# stepNN.sh: the Nth `sh quickstart` block; answerNN: the `quickstart-answer` block after it.
awk -v dir="$Q" '
	f != "" && /^```[ \t]*$/ { close(f); f = ""; next }
	f == "" && /^```[A-Za-z]+ quickstart$/ { n++; f = sprintf("%s/step%02d.sh", dir, n); printf "" >f; next }
	f == "" && /^```[A-Za-z]+ quickstart-answer$/ { f = sprintf("%s/answer%02d", dir, n); printf "" >f; next }
	f != "" { print >f }
' "$README"
STEPS=$(find "$Q" -name 'step*.sh' | wc -l)
check_cond "README.md has the quick start's blocks (8 or more: $STEPS)" '((STEPS >= 8))'
check 'no answer block stands before the first command block' test ! -e "$Q/answer00"
UNSHOWN=''
for f in "$Q"/step*.sh; do
	n=${f##*/step}
	n=${n%.sh}
	grep -q '^sd ' "$f" && [[ ! -s $Q/answer$n ]] && UNSHOWN+=" $n"
done
check_eq 'every block that calls the API shows its answer (blocks without one:)' '' "$UNSHOWN"
((STEPS > 0)) || finish

# --- the newcomer's shell ------------------------------------------------------------------------
# One bash runs the blocks in order; after each it reports on DONE and waits on GO, so that the
# test looks at the stack while the sandbox still runs.
DONE=$Q/done GO=$Q/go
mkfifo "$DONE" "$GO"
{
	printf 'cd %q || exit 1\n' "$NEWCOMER"
	printf 'exec 8>%q 9<%q\n' "$DONE" "$GO"
	for ((i = 1; i <= STEPS; i++)); do
		s=$(printf '%02d' "$i")
		printf '{ . %q; } >%q 2>%q </dev/null; echo $? >%q\n' "$Q/step$s.sh" "$Q/step$s.out" "$Q/step$s.err" "$Q/step$s.rc"
		printf 'echo %s >&8; read -r _ <&9 || exit 0\n' "$s"
	done
} >"$Q/driver.sh"
# (read-write opens do not block on a fifo; the bash's own opens then find their peer)
exec 8<>"$DONE" 9<>"$GO"
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$NEWCOMER/home" \
	LANG=C.UTF-8 bash --noprofile --norc "$Q/driver.sh" </dev/null &
DRIVER=$!
AT_EXIT+=('kill "$DRIVER" 2>/dev/null; wait "$DRIVER" 2>/dev/null')
AT_EXIT+=(cleanup_hello)

# cleanup_hello: the quick start's repository goes, and with it any sandbox a failed run left.
cleanup_hello() { api DELETE /api/v3/repos/admin/hello; }

# wait_step NN: true once the bash reports block NN done (false if it ended or took too long).
wait_step() {
	local got t0=$SECONDS
	while ((SECONDS - t0 < STEP_TIMEOUT)); do
		if read -r -t 1 got <&8; then
			[[ $got == "$1" ]] && return 0
			fail "block $1 reported in order" "block $got reported instead"
			return 1
		fi
		kill -0 "$DRIVER" 2>/dev/null || return 1
	done
	return 1
}

# shape_diff WANT GOT: the places where GOT differs from WANT in keys, types or fixed values,
# one a line (none: the same shape).
shape_diff() {
	jq -nr --argjson w "$1" --argjson g "$2" --argjson vary "$VARYING" '
		def form: if type == "string" then gsub("[0-9a-f]"; "x") else type end;
		def at($p): if $p == "" then "the top level" else $p end;
		def diff($w; $g; $p; $v):
			if ($w | type) != ($g | type) then ["\(at($p)): \($w | type) shown, \($g | type) answered"]
			elif ($w | type) == "object" then
				if ($w | keys) != ($g | keys) then ["\(at($p)): keys \($w | keys) shown, \($g | keys) answered"]
				else [$w | keys[] as $k | diff($w[$k]; $g[$k]; "\($p).\($k)"; $vary | index([$k]) != null)] | add // []
				end
			elif ($w | type) == "array" then
				if ($w | length) != ($g | length) then ["\(at($p)): \($w | length) items shown, \($g | length) answered"]
				else [range($w | length) as $i | diff($w[$i]; $g[$i]; "\($p)[\($i)]"; false)] | add // []
				end
			elif $v then (if ($w | form) != ($g | form) then ["\($p): \($w | tojson) shown, \($g | tojson) answered (not of the same form)"] else [] end)
			elif $w != $g then ["\($p): \($w | tojson) shown, \($g | tojson) answered"]
			else [] end;
		diff($w; $g; ""; false)[]'
}

# compare NN NAME: block NN's output against its answer.
compare() {
	local n=$1 name=$2 want got wstatus gstatus wbody gbody d
	want=$(sed "s|$SHOWN_URL|$SANDBOXD_URL|g" "$Q/answer$n")
	got=$(cat "$Q/step$n.out")
	if [[ $want != HTTP/* ]]; then
		check_eq "$name: prints what the README shows" "$want" "$got"
		return
	fi
	wstatus=${want%%$'\n'*} gstatus=${got%%$'\n'*}
	wbody=$(sed 1d <<<"$want") gbody=$(sed 1d <<<"$got")
	# shellcheck disable=SC2034 # what lib.sh's fail shows
	STATUS=$gstatus BODY=$gbody LAST_REQ=$name
	check_eq "$name: status line '$wstatus'" "$wstatus" "$gstatus"
	if [[ -z $wbody ]]; then
		check_eq "$name: no body, as shown" '' "$gbody"
		return
	fi
	if ! jq -e . >/dev/null 2>&1 <<<"$wbody"; then
		fail "$name: the README's answer is JSON" "$(head -c 200 <<<"$wbody")"
		return
	fi
	if ! d=$(shape_diff "$wbody" "$gbody" 2>&1); then
		fail "$name: the answer is JSON" "$d"
	elif [[ -n $d ]]; then
		fail "$name: the answer has the keys, types and fixed values shown" "$(head -n 10 <<<"$d" | paste -sd';' -)"
	else
		ok "$name: the answer has the keys, types and fixed values shown"
	fi
}

SANDBOX='' CID=''
for ((i = 1; i <= STEPS; i++)); do
	n=$(printf '%02d' "$i")
	# named by its first API call, else its first line
	first=$( (grep -m1 '^sd ' "$Q/step$n.sh" || grep -v -m1 -E '^[[:space:]]*(#|$)' "$Q/step$n.sh") | cut -c1-70)
	name="block $n ($first)"
	if ! wait_step "$n"; then
		fail "$name: done within $STEP_TIMEOUT s" "the bash ended or hung; stderr: $(head -c 300 "$Q/step$n.err" 2>/dev/null)"
		break
	fi
	[[ -n ${QS_SHOW:-} ]] && mkdir -p "$QS_SHOW" && sed "s|$SANDBOXD_URL|$SHOWN_URL|g" "$Q/step$n.out" >"$QS_SHOW/step$n.out"
	it_tokens "$(cat "$Q/step$n.out")"
	check_eq "$name: exits 0" 0 "$(cat "$Q/step$n.rc")"
	check_eq "$name: nothing on stderr" '' "$(head -c 600 "$Q/step$n.err")"
	[[ -e $Q/answer$n ]] && compare "$n" "$name"
	# the sandbox, once made: its token (only in its container) for the secret check
	if [[ -z $SANDBOX ]] && grep -q '/diffinery/sandboxes ' "$Q/step$n.sh"; then
		SANDBOX=$(sed 1d "$Q/step$n.out" | jq -r '.id // empty' 2>/dev/null)
		check_cond "$name: a sandbox id ($SANDBOX)" '[[ $SANDBOX =~ ^sb_[0-9a-f]{24}$ ]]'
		[[ -n $SANDBOX ]] && _it_sandbox_token "$SANDBOX"
		CID=$(sql "select container_id from sandboxes where id = '$SANDBOX'")
		check_eq "$name: its container runs" true "$(docker inspect -f '{{.State.Running}}' "$CID" 2>&1)"
	fi
	echo go >&9
done
wait "$DRIVER"

# --- what the answers do not show -----------------------------------------------------------------
BARE=$REPOS_DIR/admin/hello.git
check_eq "the bare repository's main: the sandbox's commit on the first push's" \
	'Local admin: Notes from the sandbox|You: First commit' \
	"$(git --git-dir "$BARE" log --format='%an: %s' main 2>&1 | paste -sd'|' -)"
if [[ -n $SANDBOX ]]; then
	check_eq 'the closed sandbox is closed in the database' closed \
		"$(sql "select state from sandboxes where id = '$SANDBOX'")"
	check_eq 'and its container is gone' '' "$(docker ps -aq --no-trunc --filter "id=${CID:-none}")"
fi
finish
