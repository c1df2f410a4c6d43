#!/usr/bin/env bash
# t_sbx.sh: sbx, the command line for people (issue 33 item 4, man/sbx.1, decision 0094),
# the built binary against the real stack: create (the id alone, --json, a bad ref's own
# text), exec (streamed as it comes, stdout and stderr apart, the command's exit code, the
# words quoted), cp both ways with 3 MiB of random bytes, ls, preview, list, close (and
# exec after it), the settings from the environment or the config file, and the errors a
# person sees. The token must never show in anything sbx prints.
# shellcheck disable=SC2034 # LAST_REQ, STATUS and BODY are lib.sh's
. "$(dirname "$0")/lib.sh"

SBX="$ROOT/${SANDBOXD_BUILD:-build}/sbx"
[[ -x $SBX ]] || {
	fail 'the sbx binary is built' "$SBX is missing (make all)"
	finish
}

O="sbx$SFX"
mk_repo "$O" app
AT_EXIT+=("ctl token revoke $LAST_TOKEN_ID; ctl account disable $O")
# Whatever sandbox is left open at the end is closed.
AT_EXIT+=(close_open_sandboxes)

# sbx ARGS…: run as the repository's owner with the environment's settings (HOME with no
# config); output in OUT and ERR, code in RC; everything printed is kept to look for the
# token at the end.
mkdir -p "$_T/home"
sbx() {
	HOME=$_T/home XDG_CONFIG_HOME='' SANDBOXD_TOKEN=$OT timeout 300 "$SBX" "$@" \
		>"$_T/sbx.out" 2>"$_T/sbx.err"
	RC=$?
	OUT=$(cat "$_T/sbx.out")
	ERR=$(cat "$_T/sbx.err")
	cat "$_T/sbx.out" "$_T/sbx.err" >>"$_T/sbx.all"
	LAST_REQ="sbx $*" STATUS="exit $RC" BODY="stdout: ${OUT:0:600}
stderr: ${ERR:0:600}"
}

# --- create ------------------------------------------------------------------------------
sbx create "$R"
check_cond 'create prints the id alone and exits 0' "[[ \$RC == 0 && \$OUT =~ ^sb_[0-9a-f]{24}\$ ]]"
ID=$OUT
[[ -n $ID ]] || finish

sbx --json create "$R@main"
check_cond 'create --json prints the whole answer (id, ref, state)' \
	"[[ \$RC == 0 ]] && jq -e '(.id | test(\"^sb_[0-9a-f]{24}\$\")) and .ref == \"main\" and (.state | type) == \"string\"' <<<\"\$OUT\" >/dev/null"
ID2=$(jq -r .id <<<"$OUT" 2>/dev/null)

sbx create "$R@no-such-branch"
check_eq 'create at an unknown ref: the server text and status on stderr' \
	'sbx: unknown ref (HTTP 422)' "$ERR"
check_cond '… exit 1, nothing on stdout' "[[ \$RC == 1 && -z \$OUT ]]"

sbx create not-a-repo
check_cond 'create of a bare name: usage error, exit 2' \
	"[[ \$RC == 2 && \$ERR == 'sbx: create: the repository must be OWNER/NAME'* ]]"

# --- exec --------------------------------------------------------------------------------
sbx exec "$ID" -- bash -c 'echo out; echo err >&2; exit 3'
check_eq 'exec: the exit code is the command'"'"'s' 3 "$RC"
check_eq 'exec: stdout on stdout' out "$OUT"
check_eq 'exec: stderr on stderr' err "$ERR"

sbx exec "$ID" -- true
check_cond 'exec of true: exit 0, no output' "[[ \$RC == 0 && -z \$OUT && -z \$ERR ]]"

sbx exec "$ID" -- printf '%s|' 'a b' "it's" '$HOME' '*'
check_eq 'exec: each word reaches the command as it was (spaces, quotes, $, globs)' \
	"a b|it's|\$HOME|*|" "$OUT"

sbx exec "$ID" -- 'echo one && exit 4'
check_cond 'exec of one word: a command line, as typed' "[[ \$RC == 4 && \$OUT == one ]]"

sbx exec --cwd /tmp "$ID" -- pwd
check_eq 'exec --cwd' /tmp "$OUT"

sbx exec --timeout 1000 "$ID" -- sleep 30
check_cond 'exec --timeout: past it, 124 (timed out)' "[[ \$RC == 124 ]]"

sbx --json exec "$ID" -- bash -c 'echo hi; exit 5'
check_cond 'exec --json: the stream'"'"'s lines as they came, the result last, the code kept' \
	"[[ \$RC == 5 ]] && jq -se '(map(.stdout // empty) | join(\"\")) == \"hi\n\" and .[-1].exitCode == 5' <<<\"\$OUT\" >/dev/null"

# Streamed: the first line shows while the command still runs.
HOME=$_T/home SANDBOXD_TOKEN=$OT "$SBX" exec "$ID" -- bash -c 'echo first; sleep 60; echo late' \
	>"$_T/stream.out" 2>&1 &
SPID=$!
AT_EXIT+=("kill $SPID 2>/dev/null")
if wait_until 30 grep -qx first "$_T/stream.out"; then
	check_cond 'exec streams: the first line shows while the command runs' \
		"kill -0 $SPID 2>/dev/null && ! grep -q late '$_T/stream.out'"
else
	BODY=$(cat "$_T/stream.out") fail 'exec streams: the first line shows while the command runs' \
		'no "first" within 30 s'
fi
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null

# --- cp ----------------------------------------------------------------------------------
head -c $((3 * 1024 * 1024)) /dev/urandom >"$_T/big.bin"
SUM=$(sha256sum <"$_T/big.bin" | cut -d' ' -f1)
sbx cp "$_T/big.bin" "$ID:dir/big.bin"
check_cond 'cp LOCAL ID:PATH: exit 0, nothing printed (no bar off a terminal)' "[[ \$RC == 0 && -z \$OUT && -z \$ERR ]]"
sbx exec "$ID" -- sha256sum dir/big.bin
check_eq '… the file in the sandbox has the same sha256' "$SUM  dir/big.bin" "$OUT"
sbx cp "$ID:dir/big.bin" "$_T/back.bin"
check_cond 'cp ID:PATH LOCAL: exit 0' "[[ \$RC == 0 ]]"
check_eq '… the file back has the same sha256' "$SUM" "$(sha256sum <"$_T/back.bin" | cut -d' ' -f1)"
check_cond '… and no part file is left' "[[ ! -e '$_T/back.bin.sbx-part' ]]"

# On a terminal (script(1) gives one), a transfer over 1 MiB draws its bar on stderr.
if command -v script >/dev/null; then
	HOME=$_T/home SANDBOXD_TOKEN=$OT SBX_BIN=$SBX SRC=$_T/big.bin DST="$ID:tty.bin" \
		timeout 120 script -qec '"$SBX_BIN" cp "$SRC" "$DST"' /dev/null >"$_T/tty.out" 2>&1
	check_cond 'cp on a terminal: a progress bar to 3.0 MiB' \
		"grep -qE 'upload \\[#{30}\\] +3\\.0 / 3\\.0 MiB' '$_T/tty.out'"
	cat "$_T/tty.out" >>"$_T/sbx.all"
else
	skip 'cp on a terminal: a progress bar (no script(1) here)'
fi

sbx --json cp "$_T/big.bin" "$ID:/tmp/abs.bin"
check_cond 'cp to an absolute path, --json: the answer {path, size}' \
	"[[ \$RC == 0 ]] && jq -e '.size == 3145728' <<<\"\$OUT\" >/dev/null"

sbx cp "$ID:missing.bin" "$_T/missing.bin"
check_eq 'cp of a missing file: the server text on stderr' \
	'sbx: no such file: missing.bin (HTTP 404)' "$ERR"
check_cond '… exit 1, no file made' "[[ \$RC == 1 && ! -e '$_T/missing.bin' && ! -e '$_T/missing.bin.sbx-part' ]]"

sbx cp "$_T/big.bin" "$_T/other.bin"
check_cond 'cp between two local paths: usage error, exit 2' "[[ \$RC == 2 ]]"

# --- ls ----------------------------------------------------------------------------------
sbx ls "$ID"
check_cond 'ls: the work tree, a directory with a slash, a file with its size' \
	"grep -qE '^d +[0-9]+  dir/\$' <<<\"\$OUT\" && grep -qE '^- +2  x\$' <<<\"\$OUT\""
sbx ls "$ID" dir
check_cond 'ls ID PATH' "[[ \$RC == 0 ]] && grep -qE '^- +3145728  big.bin\$' <<<\"\$OUT\""
sbx --json ls "$ID" dir
check_cond 'ls --json: the answer {path, entries, truncated}' \
	"jq -e '.entries[0].name == \"big.bin\" and .truncated == false' <<<\"\$OUT\" >/dev/null"
sbx ls "$ID" nowhere
check_cond 'ls of a missing path: the server text, exit 1' \
	"[[ \$RC == 1 && \$ERR == 'sbx: '*'(HTTP 404)' ]]"

# --- preview -----------------------------------------------------------------------------
sbx preview "$ID" 3000
check_cond 'preview: the URL' "[[ \$RC == 0 && \$OUT =~ ^https?://[a-z0-9]{26}\\. ]]"
sbx --json preview "$ID" 3001
check_cond 'preview --json: {previewId, port, url, expires_at}' \
	"jq -e '.port == 3001 and (.url | type) == \"string\"' <<<\"\$OUT\" >/dev/null"
sbx preview "$ID" 70000
check_cond 'preview of port 70000: usage error, exit 2' "[[ \$RC == 2 && \$ERR == 'sbx: preview: PORT must be a number from 1 to 65535'* ]]"

# --- list --------------------------------------------------------------------------------
sbx list
check_cond 'list: the new sandbox, ready, on its repository' \
	"grep -qP '^\\Q$ID\\E\\tready\\t\\Q$R\\E\\tmain\\t' <<<\"\$OUT\""
sbx list --state closed
check_cond 'list --state closed: not the ready one' "[[ \$RC == 0 ]] && ! grep -q '$ID' <<<\"\$OUT\""
sbx --json list --state ready
check_cond 'list --json: one array with both sandboxes' \
	"jq -e 'map(.id) | (index(\"$ID\") != null) and (index(\"$ID2\") != null)' <<<\"\$OUT\" >/dev/null"
sbx list --state sleeping
check_eq 'list --state of no state: the server text' \
	"sbx: query 'state' must be one of starting, ready, closed, stopped, failed (HTTP 422)" "$ERR"

# --- settings ----------------------------------------------------------------------------
CH=$_T/cfg-home
mkdir -p "$CH/.config/sandboxd"
printf '# sbx settings\nurl = %s\ntoken = %s\n' "$SANDBOXD_URL" "$OT" >"$CH/.config/sandboxd/config"
chmod 600 "$CH/.config/sandboxd/config"
env -u SANDBOXD_URL -u SANDBOXD_TOKEN -u XDG_CONFIG_HOME HOME="$CH" "$SBX" list >"$_T/cfg.out" 2>&1
check_cond 'with no environment, the config file (mode 600) gives the URL and the token' \
	"grep -q '$ID' '$_T/cfg.out'"
chmod 644 "$CH/.config/sandboxd/config"
env -u SANDBOXD_URL -u SANDBOXD_TOKEN -u XDG_CONFIG_HOME HOME="$CH" "$SBX" list >"$_T/cfg.out" 2>&1
RC=$?
check_eq 'a config file others may read is refused, saying so' \
	"sbx: $CH/.config/sandboxd/config holds a token but others may read it (mode 0644): chmod 600 $CH/.config/sandboxd/config" \
	"$(cat "$_T/cfg.out")"
check_eq '… exit 2' 2 "$RC"
env -u SANDBOXD_TOKEN -u XDG_CONFIG_HOME HOME="$_T/home" "$SBX" list >"$_T/cfg.out" 2>&1
RC=$?
check_eq 'no token anywhere: a clear error' \
	"sbx: no token: set SANDBOXD_TOKEN, or \`token = …\` in $_T/home/.config/sandboxd/config" \
	"$(cat "$_T/cfg.out")"
check_eq '… exit 2' 2 "$RC"
HOME=$_T/home SANDBOXD_TOKEN=dfy_not_a_token "$SBX" list >"$_T/cfg.out" 2>&1
check_cond 'a wrong token: the server'"'"'s 401 text, exit 1' \
	"[[ \$? == 1 ]] && grep -q '(HTTP 401)' '$_T/cfg.out'"
sbx frobnicate
check_cond 'an unknown command: exit 2, named' "[[ \$RC == 2 && \$ERR == \"sbx: unknown command 'frobnicate'\"* ]]"

# --- close -------------------------------------------------------------------------------
sbx close "$ID"
check_cond 'close: exit 0, nothing printed' "[[ \$RC == 0 && -z \$OUT && -z \$ERR ]]"
sbx exec "$ID" -- true
check_eq 'exec on the closed sandbox: the server text' 'sbx: sandbox is closed (HTTP 410)' "$ERR"
check_eq '… exit 1' 1 "$RC"
# close --save: the work left uncommitted in the second sandbox is saved to its ephemeral
# ref, which the sandbox's answer then names and the bare repository holds.
sbx exec "$ID2" -- 'echo saved-by-sbx >saved.txt'
sbx close "$ID2" --save
check_cond 'close --save: exit 0, nothing printed' "[[ \$RC == 0 && -z \$OUT && -z \$ERR ]]"
api GET "$SB/$ID2" '' "$OT"
check_eq '… the sandbox closed, its saved_ref the ephemeral one' \
	"closed|refs/namespaces/ephemeral/refs/heads/sandbox/$ID2" "$(_json .state)|$(_json .saved_ref)"
check_eq '… which holds the file' saved-by-sbx \
	"$(git --git-dir="$REPOS_DIR/$R.git" show "refs/namespaces/ephemeral/refs/heads/sandbox/$ID2:saved.txt" 2>&1)"
sbx close sb_000000000000000000000000
check_eq 'close of no sandbox: the server text' 'sbx: sandbox not found (HTTP 404)' "$ERR"

check_cond 'the token shows in nothing sbx printed' "! grep -qF '$OT' '$_T/sbx.all' '$_T/cfg.out' '$_T/stream.out'"
finish
