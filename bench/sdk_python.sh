#!/usr/bin/env bash
# bench/sdk_python.sh (part "sdk" of make bench, after sdk_js.sh): what the Python SDK
# (clients/python) adds to an exec beside a bare urllib call of the same route, in the same
# process and run. A throwaway stack with one worker, a sandbox with its clone done;
# BENCH_SDK_EXECS (200) execs of `true` each way, one of each in turn, after 20 of each to
# warm up: median and p99 in ms. The difference of the medians is mostly the stack's noise,
# so the SDK's own cost is measured apart too: the same exec with a transport that answers
# a canned result at once (no network), BENCH_SDK_LOCAL (20,000) times, beside the bare
# call's own work on the same canned bytes (encode the body, decode the answer). The
# issue's goal: at most 1 ms per exec.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
N=${BENCH_SDK_EXECS:-200}
VAR=$(mktemp -d /tmp/sandboxd-sdkpy.XXXXXXXX)
chmod 755 "$VAR"
SID=''

# bench/lib.sh: closes SID, stops the stack, removes $VAR (BENCH_KEEP=1 keeps it).
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
one_worker_stack sdkpy
sandbox_with_clone sdkpy

cat >"$VAR/bench.py" <<'PY'
import io, json, os, sys, time, urllib.request
sys.path.insert(0, sys.argv[4])
from sandboxd import Client, Sandbox

n, repo, sid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
url = f"{os.environ['SANDBOXD_URL']}/api/v3/repos/{repo}/diffinery/sandboxes/{sid}/exec"
headers = {"Authorization": f"Bearer {os.environ['SANDBOXD_TOKEN']}",
           "Content-Type": "application/json", "Accept": "application/json"}
sb = Sandbox.connect(sid, repo)

def bare():
    req = urllib.request.Request(url, data=json.dumps({"cmd": "true"}).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        if json.loads(r.read())["exitCode"] != 0:
            raise SystemExit("bare: exit")

def sdk():
    if sb.exec("true").exit_code != 0:
        raise SystemExit("sdk: exit")

def timed(f, into=None):
    t = time.perf_counter(); f()
    if into is not None:
        into.append((time.perf_counter() - t) * 1000)

for _ in range(20):
    timed(bare); timed(sdk)
a, b = [], []
for _ in range(n):
    timed(bare, a); timed(sdk, b)
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]
print(f"bare {q(a, .5):.2f} {q(a, .99):.2f}")
print(f"sdk {q(b, .5):.2f} {q(b, .99):.2f}")

canned = json.dumps({"exitCode": 0, "stdout": "", "stderr": "", "timedOut": False, "truncated": False,
                     "durationMs": 1, "stdoutBytes": 0, "stderrBytes": 0}).encode()

class Canned(Client):
    def open(self, method, path, **kw):    # the transport, answered at once
        if kw.get("json_body") is not None:
            json.dumps(kw["json_body"]).encode()
        return io.BytesIO(canned)

local = Sandbox(Canned(url="http://stub", token="t"), repo, {"id": sid})
m = int(os.environ.get("BENCH_SDK_LOCAL", "20000"))
def loop(f):
    t = time.perf_counter()
    for _ in range(m):
        f()
    return (time.perf_counter() - t) * 1000 / m
def bare_local():
    json.dumps({"cmd": "true"}).encode()
    json.loads(io.BytesIO(canned).read())
loop(bare_local); loop(lambda: local.exec("true"))
lb, ls = loop(bare_local), loop(lambda: local.exec("true"))
print(f"local {ls - lb:.4f} {m}")
PY
out=$(SANDBOXD_URL=$SANDBOXD_URL SANDBOXD_TOKEN=$SANDBOXD_TOKEN /usr/bin/python3 "$VAR/bench.py" "$N" admin/sdkpy "$SID" "$ROOT/clients/python")
read -r _ f50 f99 <<<"$(grep '^bare' <<<"$out")"
read -r _ s50 s99 <<<"$(grep '^sdk' <<<"$out")"
read -r _ own m <<<"$(grep '^local' <<<"$out")"
echo
echo "Python SDK overhead per exec (clients/python beside a bare urllib call, $N execs of true each, one worker)"
printf '%-12s p50 %7.2f ms  p99 %7.2f ms\n' "bare urllib" "$f50" "$f99" "sdk exec" "$s50" "$s99"
awk -v s="$s50" -v f="$f50" 'BEGIN { printf "difference   %+.2f ms (the medians: mostly the noise of the stack)\n", s - f }'
awk -v o="$own" -v m="$m" 'BEGIN { printf "SDK overhead %.4f ms per exec, its own cost over a bare call (%d calls on a canned transport; goal: <= 1 ms): %s\n", o, m, (o <= 1 ? "met" : "NOT met") }'
