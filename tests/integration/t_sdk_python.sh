#!/usr/bin/env bash
# t_sdk_python.sh: the Python SDK (clients/python, issue 33 item 3) against the real stack.
# Installed as the README says, with no package index: a venv with Debian's site packages
# and `pip install --no-index --no-build-isolation` of a copy of clients/python (so that the
# build's leftovers stay out of the tree); then clients/python/tests run with the venv's
# python from elsewhere, as a user of their own with a repository of their own, each test
# one check here (tests/run.py prints a line per test), so that a failure is named.
# shellcheck disable=SC2034 # LAST_REQ and BODY are lib.sh's
. "$(dirname "$0")/lib.sh"

PY=$ROOT/clients/python
V=$_T/venv
LAST_REQ="python3 -m venv --system-site-packages; pip install --no-index --no-build-isolation clients/python"
cp -r "$PY" "$_T/src"
if /usr/bin/python3 -m venv --system-site-packages "$V" >"$_T/pip.log" 2>&1 &&
	"$V/bin/pip" install -q --no-index --no-build-isolation "$_T/src" >>"$_T/pip.log" 2>&1; then
	ok 'pip install --no-index --no-build-isolation of clients/python in a venv'
else
	BODY=$(tail -n 20 "$_T/pip.log")
	fail 'pip install --no-index --no-build-isolation of clients/python in a venv' 'the install failed'
	finish
fi
BODY=$(cd "$_T" && "$V/bin/python" -c 'import sandboxd; print(sandboxd.__version__, sandboxd.__file__)' 2>&1)
check_cond 'the installed package imports from the venv, not from the tree' \
	"[[ \$BODY == '0.1.0 $V/'*'/site-packages/sandboxd/__init__.py' ]]"

O="sdkpy$SFX"
mk_repo "$O" sdk
AT_EXIT+=("ctl token revoke $LAST_TOKEN_ID; ctl account disable $O")
mk_writer "sdkpy2$SFX"
# Whatever sandbox a test left behind (a failure before its tearDown) is closed at the end.
AT_EXIT+=(close_open_sandboxes)

LAST_REQ='python -m unittest clients/python/tests (tests/run.py)'
(cd "$_T" && SANDBOXD_URL=$SANDBOXD_URL SANDBOXD_TOKEN=$OT SDK_TEST_REPO=$R SDK_TEST_OTHER_TOKEN=$OT2 \
	timeout 600 "$V/bin/python" "$PY/tests/run.py" "$PY/tests") >"$_T/py.out" 2>"$_T/py.err"
rc=$?
checks_from_lines python "$_T/py.out"
BODY=$(tail -c 1500 "$_T/py.err")
check_cond 'the tests ran (at least 20) and exited 0 with none failed' \
	"((N_LINES >= 20)) && ! grep -q '^fail' '$_T/py.out' && ((rc == 0))"
it_tokens "$(cat "$_T/py.out" "$_T/py.err")"
close_open_sandboxes
api GET "$SB" '' "$OT"
expect_json '[.[] | select(.state == "ready" or .state == "starting")] | length' 0 \
	'no sandbox of the tests is left running'
finish
