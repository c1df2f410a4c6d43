#!/usr/bin/env bash
# t_root_tools.sh: what root inside is for (SPEC.md §4 "Root inside, nobody outside"), on the
# default image (standard) of the stack's own engine: `pip install` of a wheel built here
# and `npm install -g` of a tarball packed here both work offline, system-wide, as a CI
# runner's root would do, and what they installed runs. (apt-get is t_root_inside's.)
. "$(dirname "$0")/lib.sh"

api GET /healthz "" -
expect_json .sandbox_user.mode userns 'the stack runs sandboxes as a remapped root'

mk_sandbox "rt$SFX" r
run_ok() { # NAME CMD EXPECTED_LAST_LINE: exit 0 and that last line of stdout
	api POST "$SB/$ID/exec" "$(jq -nc --arg c "$2" '{cmd: $c, timeoutMs: 300000}')" "$OT"
	local got
	got=$(_json '.stdout | rtrimstr("\n") | split("\n") | last')
	if [[ $STATUS == 200 && $(_json .exitCode) == 0 && $got == "$3" ]]; then
		ok "$1"
	else
		fail "$1" "expected exit 0 and '$3', got $STATUS exit $(_json .exitCode) '$got': $(_json .stderr | tail -n 5)"
	fi
}
check_eq 'the sandbox is on standard' standard "$(sql "select image from sandboxes where id = '$ID'")"

# No network is needed: pip and npm are told so (--no-index, --offline), and a proxy that
# does not exist takes any request that would slip through.
OFF='export http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 npm_config_registry=http://127.0.0.1:9/'

run_ok 'pip: a wheel built here (no index, no build isolation)' "$OFF; set -e; mkdir -p /tmp/w/hello_rt && cd /tmp/w
printf 'def greet():\n    return \"hello from a wheel\"\n' > hello_rt/__init__.py
printf '[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n[project]\nname = \"hello-rt\"\nversion = \"1.0\"\n' > pyproject.toml
python3 -m pip wheel -q --no-deps --no-build-isolation --no-index -w dist . >/dev/null 2>&1
ls dist" 'hello_rt-1.0-py3-none-any.whl'
run_ok 'pip install of it, system-wide as root' "$OFF; set -e; cd /tmp/w
python3 -m pip install -q --no-index --break-system-packages dist/hello_rt-1.0-py3-none-any.whl 2>&1 | grep -v WARNING || true
cd / && python3 -c 'import hello_rt; print(hello_rt.greet())'" 'hello from a wheel'
run_ok 'it landed in the system site (root wrote there)' \
	"python3 -c 'import hello_rt, os; print(os.stat(hello_rt.__file__).st_uid)'" '0'

run_ok 'npm: a tarball packed here' "$OFF; set -e; mkdir -p /tmp/n && cd /tmp/n
printf '{\"name\":\"hello-rt\",\"version\":\"1.0.0\",\"bin\":{\"hello-rt\":\"bin.js\"}}' > package.json
printf '#!/usr/bin/env node\nconsole.log(\"hello from npm\")\n' > bin.js
npm pack --silent 2>/dev/null | tail -n 1" 'hello-rt-1.0.0.tgz'
run_ok 'npm install -g of it, offline' "$OFF; set -e; cd /tmp/n
npm install -g --offline --no-audit --no-fund ./hello-rt-1.0.0.tgz >/dev/null 2>&1
hello-rt" 'hello from npm'
run_ok 'its command is on the system PATH (root wrote /usr/local)' \
	'command -v hello-rt; stat -c %u "$(command -v hello-rt)"' '0'

api POST "$SB/$ID/close" '' "$OT"
expect_status 204 'closed'
finish
