#!/usr/bin/env bash
# bench/sdk_js.sh (part "sdk" of make bench): what the TypeScript SDK (clients/js) adds to
# an exec beside a bare fetch of the same route, in the same Node process and run. A
# throwaway stack with one worker, a sandbox with its clone done; BENCH_SDK_EXECS (200)
# execs of `true` each way, one of each in turn (so that a drift of the stack weighs on
# both alike), after 20 of each to warm up; per exec: median and p99 in ms, and the
# difference of the medians. That difference is mostly the stack's noise, so the SDK's own
# cost is measured apart too: the same exec call with a fetch that answers a canned
# result at once (no network), BENCH_SDK_LOCAL (20,000) times, beside a bare fetch of the
# same stub: the SDK's overhead per exec (the issue's goal: at most 1 ms).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
N=${BENCH_SDK_EXECS:-200}
VAR=$(mktemp -d /tmp/sandboxd-sdk.XXXXXXXX)
chmod 755 "$VAR"
SID=''

# bench/lib.sh: closes SID, stops the stack, removes $VAR (BENCH_KEEP=1 keeps it).
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
command -v node >/dev/null || { echo "sdk: node is missing (deploy/install-deps.sh)" >&2; exit 1; }

one_worker_stack sdk
sandbox_with_clone sdk

cat >"$VAR/bench.mjs" <<'EOF'
import { Sandbox } from "./clients/js/index.js";
const [n, repo, id] = [Number(process.argv[2]), process.argv[3], process.argv[4]];
const url = `${process.env.SANDBOXD_URL}/api/v3/repos/${repo}/diffinery/sandboxes/${id}/exec`;
const headers = { authorization: `Bearer ${process.env.SANDBOXD_TOKEN}`, "content-type": "application/json", accept: "application/json" };
const sbx = await Sandbox.connect(id, { repo });
const bare = async () => {
	const r = await fetch(url, { method: "POST", headers, body: JSON.stringify({ cmd: "true" }) });
	const j = await r.json();
	if (r.status !== 200 || j.exitCode !== 0) throw new Error(`bare: ${r.status}`);
};
const sdk = async () => {
	const r = await sbx.exec("true");
	if (r.exitCode !== 0) throw new Error("sdk: exit " + r.exitCode);
};
const time = async (f, into) => { const t = process.hrtime.bigint(); await f(); into?.push(Number(process.hrtime.bigint() - t) / 1e6); };
for (let i = 0; i < 20; i++) { await time(bare); await time(sdk); }
const a = [], b = [];
for (let i = 0; i < n; i++) { await time(bare, a); await time(sdk, b); }
const q = (xs, p) => { const s = [...xs].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
console.log(`fetch ${q(a, 0.5).toFixed(2)} ${q(a, 0.99).toFixed(2)}`);
console.log(`sdk ${q(b, 0.5).toFixed(2)} ${q(b, 0.99).toFixed(2)}`);
// The SDK's own cost: a stub fetch answering the exec result at once.
const canned = JSON.stringify({ exitCode: 0, stdout: "", stderr: "", timedOut: false, truncated: false, durationMs: 1, stdoutBytes: 0, stderrBytes: 0 });
const stub = async () => new Response(canned, { status: 200, headers: { "content-type": "application/json" } });
const { Client } = await import("./clients/js/index.js");
const local = new Sandbox(new Client({ url: "http://stub", token: "t", fetch: stub }), repo, { id });
const m = Number(process.env.BENCH_SDK_LOCAL ?? 20000);
const loop = async (f) => { const t = process.hrtime.bigint(); for (let i = 0; i < m; i++) await f(); return Number(process.hrtime.bigint() - t) / 1e6 / m; };
const bareStub = async () => { const r = await stub(url, { method: "POST", headers, body: JSON.stringify({ cmd: "true" }) }); await r.json(); };
await loop(bareStub); await loop(() => local.exec("true"));
const lb = await loop(bareStub), ls = await loop(() => local.exec("true"));
console.log(`local ${(ls - lb).toFixed(4)} ${m}`);
EOF
ln -s "$ROOT/clients" "$VAR/clients"
out=$(SANDBOXD_URL=$SANDBOXD_URL SANDBOXD_TOKEN=$SANDBOXD_TOKEN node "$VAR/bench.mjs" "$N" admin/sdk "$SID")
read -r _ f50 f99 <<<"$(grep '^fetch' <<<"$out")"
read -r _ s50 s99 <<<"$(grep '^sdk' <<<"$out")"
read -r _ own m <<<"$(grep '^local' <<<"$out")"
echo
echo "SDK overhead per exec (clients/js beside a bare fetch, $N execs of true each, one worker)"
printf '%-12s p50 %7.2f ms  p99 %7.2f ms\n' "bare fetch" "$f50" "$f99" "sdk exec" "$s50" "$s99"
awk -v s="$s50" -v f="$f50" 'BEGIN { printf "difference   %+.2f ms (the medians: mostly the noise of the stack)\n", s - f }'
awk -v o="$own" -v m="$m" 'BEGIN { printf "SDK overhead %.4f ms per exec, its own cost over a bare fetch (%d calls on a stub fetch; goal: <= 1 ms): %s\n", o, m, (o <= 1 ? "met" : "NOT met") }'
