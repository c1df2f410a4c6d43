// Sandboxes: create, connect, list, info, exec (attached, streamed, detached), idle
// timeout, keepalive, previews, close; and the refusals of each group.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Sandbox, Client, SandboxdError, NotFoundError } from "../index.js";
import { REPO, NO_SUCH_ID, OTHER_TOKEN } from "./env.js";

let sbx;
before(async () => { sbx = await Sandbox.create({ repo: REPO }); });
after(async () => { await sbx?.close(); });

test("Sandbox.create: an id, the default branch, a running state", () => {
	assert.ok(typeof sbx.id === "string" && sbx.id.length > 0);
	assert.equal(sbx.repo, REPO);
	assert.equal(sbx.info.ref, "main");
	assert.ok(["starting", "ready"].includes(sbx.info.state));
});

test("Sandbox.create at a ref that does not resolve: 422 unknown ref", async () => {
	await assert.rejects(Sandbox.create({ repo: REPO, ref: "no-such-branch" }), (e) => {
		assert.ok(e instanceof SandboxdError);
		assert.equal(e.status, 422);
		assert.equal(e.message, "unknown ref");
		return true;
	});
});

test("Sandbox.create with an unknown image: 422 unknown image", async () => {
	await assert.rejects(Sandbox.create({ repo: REPO, image: "no-such-image" }), (e) => {
		assert.equal(e.status, 422);
		assert.equal(e.message, "unknown image");
		return true;
	});
});

test("Sandbox.connect: the same sandbox by id, with its details", async () => {
	const again = await Sandbox.connect(sbx.id, { repo: REPO });
	assert.equal(again.id, sbx.id);
	assert.ok(again.info.resources && again.info.clone);
	const r = await again.exec("echo $SANDBOX_ID");
	assert.equal(r.stdout.trim(), sbx.id);
});

test("Sandbox.connect by the id alone: its repository found, the same routes", async () => {
	const byId = await Sandbox.connect(sbx.id);
	assert.equal(byId.repo, REPO);
	assert.equal(byId.info.repository, REPO);
	assert.equal(byId.base, sbx.base);
	assert.equal((await byId.exec("echo by-id")).stdout, "by-id\n");
	await assert.rejects(Sandbox.connect(NO_SUCH_ID), (e) => {
		assert.ok(e instanceof NotFoundError);
		assert.equal(e.message, "sandbox not found");
		return true;
	});
});

test("Sandbox.mine: the caller's sandboxes on every repository, by state, page after page", async () => {
	const ready = [];
	for await (const s of Sandbox.mine({ state: "ready", perPage: 1 })) ready.push(s);
	assert.ok(ready.some((s) => s.id === sbx.id));
	assert.ok(ready.every((s) => s.state === "ready" && s.repository === REPO));
	const closed = [];
	for await (const s of Sandbox.mine({ state: "closed" })) closed.push(s.id);
	assert.ok(!closed.includes(sbx.id));
	await assert.rejects((async () => { for await (const _ of Sandbox.mine({ state: "running" })); })(), (e) => {
		assert.equal(e.status, 422);
		assert.equal(e.message, "query 'state' must be one of starting, ready, closed, stopped, failed");
		return true;
	});
});

test("Sandbox.connect to an id that does not exist: NotFoundError 404", async () => {
	await assert.rejects(Sandbox.connect(NO_SUCH_ID, { repo: REPO }), (e) => {
		assert.ok(e instanceof NotFoundError);
		assert.equal(e.status, 404);
		assert.equal(e.message, "sandbox not found");
		return true;
	});
});

test("Sandbox.connect as another writer of the repository: 403 not your sandbox", async () => {
	// The same sandbox through the owner's own client first: the id is right.
	assert.equal((await Sandbox.connect(sbx.id, { repo: REPO })).id, sbx.id);
	await assert.rejects(Sandbox.connect(sbx.id, { repo: REPO, token: OTHER_TOKEN }), (e) => {
		assert.ok(e instanceof SandboxdError);
		assert.equal(e.status, 403);
		assert.equal(e.message, "not your sandbox");
		return true;
	});
});

test("a sandbox call with a read-scoped token: 403 this needs a token with write scope", async () => {
	const c = new Client();
	const t = await c.createToken({ scope: "read", note: "sdk read" });
	try {
		const ro = new Sandbox(new Client({ token: t.token }), REPO, { id: sbx.id });
		await assert.rejects(ro.exec("true"), (e) => {
			assert.equal(e.status, 403);
			assert.equal(e.message, "this needs a token with write scope");
			return true;
		});
		assert.equal((await new Client({ token: t.token }).getRepo(REPO)).full_name, REPO, "it reads the repository");
	} finally {
		await c.revokeToken(t.id);
	}
});

test("Sandbox.list and Client.listSandboxes: the sandbox is there", async () => {
	const l = await Sandbox.list({ repo: REPO });
	assert.ok(l.some((s) => s.id === sbx.id));
	const l2 = await new Client().listSandboxes(REPO);
	assert.ok(l2.some((s) => s.id === sbx.id));
});

test("getInfo: the clone is done once an exec has run", async () => {
	await sbx.exec("true");
	const info = await sbx.getInfo();
	assert.equal(info.id, sbx.id);
	assert.equal(info.state, "ready");
	assert.equal(info.clone.state, "done");
	assert.equal(sbx.info, info);
});

test("exec: stdout, stderr, exit code 0", async () => {
	const r = await sbx.exec("cat x; echo oops >&2");
	assert.deepEqual([r.exitCode, r.stdout, r.stderr, r.timedOut, r.truncated], [0, "x\n", "oops\n", false, false]);
	assert.equal(typeof r.durationMs, "number");
});

test("exec: a non-zero exit is a result, not an error", async () => {
	const r = await sbx.exec("exit 3");
	assert.equal(r.exitCode, 3);
});

test("exec: cwd and env", async () => {
	await sbx.exec("mkdir -p sub");
	const r = await sbx.exec('pwd; echo "$GREETING"', { cwd: "sub", env: { GREETING: "hello" } });
	assert.equal(r.stdout, "/workspace/repo/sub\nhello\n");
});

test("exec: timeoutMs ends it with 124 and timedOut", async () => {
	const r = await sbx.exec("sleep 30", { timeoutMs: 1000 });
	assert.equal(r.exitCode, 124);
	assert.equal(r.timedOut, true);
});

test("exec with a timeoutMs over the limit: 400 with the server's text", async () => {
	await assert.rejects(sbx.exec("true", { timeoutMs: 3600001 }), (e) => {
		assert.equal(e.status, 400);
		assert.match(e.message, /timeoutMs/);
		return true;
	});
});

test("exec on a sandbox that does not exist: NotFoundError 404", async () => {
	const ghost = new Sandbox(sbx.client, REPO, { id: NO_SUCH_ID });
	await assert.rejects(ghost.exec("true"), (e) => e instanceof NotFoundError && e.message === "sandbox not found");
});

test("exec with onStdout/onStderr streams the pieces and returns the whole result", async () => {
	const outs = [], errs = [];
	const r = await sbx.exec("echo a; echo b >&2; echo c", { onStdout: (d) => outs.push(d), onStderr: (d) => errs.push(d) });
	assert.equal(r.exitCode, 0);
	assert.equal(outs.join(""), "a\nc\n");
	assert.equal(errs.join(""), "b\n");
	assert.equal(r.stdout, "a\nc\n");
	assert.equal(r.stderr, "b\n");
});

test("execStream: stdout and stderr events, then the result", async () => {
	const evs = [];
	for await (const ev of sbx.execStream("echo one; sleep 0.3; echo two >&2; exit 5")) evs.push(ev);
	const last = evs.pop();
	assert.equal(last.type, "result");
	assert.equal(last.result.exitCode, 5);
	assert.ok(!("stdout" in last.result));
	assert.equal(evs.filter((e) => e.type === "stdout").map((e) => e.data).join(""), "one\n");
	assert.equal(evs.filter((e) => e.type === "stderr").map((e) => e.data).join(""), "two\n");
});

test("execStream {lines: true}: whole lines, the last one without its newline too", async () => {
	const lines = [];
	for await (const ev of sbx.execStream("printf 'l1\\nl2\\npart'; sleep 0.2; printf 'ial\\n'; printf end", { lines: true }))
		if (ev.type === "stdout") lines.push(ev.data);
	assert.deepEqual(lines, ["l1", "l2", "partial", "end"]);
});

test("execStream {keepalive: true}: a keepalive event in 16 s of silence, then the output", async () => {
	const types = [];
	for await (const ev of sbx.execStream("sleep 16; echo done", { keepalive: true })) types.push(ev.type);
	assert.ok(types.indexOf("keepalive") >= 0 && types.indexOf("keepalive") < types.indexOf("stdout"), types.join(","));
	assert.equal(types.at(-1), "result");
});

test("execStream on a sandbox that does not exist: NotFoundError 404 before any event", async () => {
	const ghost = new Sandbox(sbx.client, REPO, { id: NO_SUCH_ID });
	await assert.rejects(async () => { for await (const _ of ghost.execStream("true")); }, (e) => e.status === 404);
});

test("execStream aborted by its signal stops reading", async () => {
	const ac = new AbortController();
	const seen = [];
	await assert.rejects(async () => {
		for await (const ev of sbx.execStream("echo go; sleep 20", { signal: ac.signal, timeoutMs: 3000 })) {
			seen.push(ev);
			if (ev.type === "stdout") ac.abort(new Error("enough"));
		}
	}, /enough|abort/i);
	assert.equal(seen[0].data, "go\n");
});

test("setIdleTimeout and keepalive", async () => {
	const info = await sbx.setIdleTimeout(600);
	const left = Date.parse(info.idle_stop_at) - Date.now();
	// now + 600 s (no exec of this sandbox is running: none keeps it busy for longer)
	assert.ok(left > 590e3 && left <= 601e3, `idle_stop_at ${info.idle_stop_at}`);
	assert.equal(await sbx.keepalive(), undefined);
});

test("setIdleTimeout out of range: 400 naming the field", async () => {
	await assert.rejects(sbx.setIdleTimeout(10), (e) => {
		assert.equal(e.status, 400);
		assert.equal(e.message, "field 'idle_timeout_seconds' must be an integer between 60 and 86400");
		return true;
	});
});

test("execDetached: 202 and an execId; poll by offset; wait for the end", async () => {
	const h = await sbx.execDetached("echo first; sleep 1; echo second; echo e >&2; exit 2");
	assert.match(h.execId, /.+/);
	let r = await h.poll();
	while (!r.stdout.includes("first") && r.state === "running") r = await h.poll();
	const rest = await h.wait({ intervalMs: 100 });
	assert.equal(rest.state, "exited");
	assert.equal(rest.exitCode, 2);
	assert.equal(r.stdout + rest.stdout, "first\nsecond\n");
	assert.equal(h.stdoutOffset, 13);
	const all = await sbx.getExec(h.execId);
	assert.equal(all.stdout, "first\nsecond\n");
	assert.equal(all.stderr, "e\n");
	const tail = await sbx.getExec(h.execId, { stdoutOffset: 6 });
	assert.equal(tail.stdout, "second\n");
});

test("listExecs and killExec: the exec is listed, killed with TERM: 143", async () => {
	const h = await sbx.execDetached("sleep 60");
	const list = await sbx.listExecs();
	assert.equal(list[0].execId, h.execId);
	assert.equal(list[0].state, "running");
	await h.kill("TERM");
	const r = await h.wait({ intervalMs: 100 });
	assert.equal(r.killed, true);
	assert.equal(r.exitCode, 143);
});

test("getExec and killExec of an exec that does not exist: NotFoundError 404", async () => {
	await assert.rejects(sbx.getExec("nope"), (e) => e instanceof NotFoundError && e.status === 404);
	await assert.rejects(sbx.killExec("nope"), (e) => e instanceof NotFoundError && e.status === 404);
});

test("commands (E2B's names): run, run in the background, list, kill", async () => {
	const r = await sbx.commands.run("echo ported", { env: { A: "1" } });
	assert.equal(r.stdout, "ported\n");
	const h = await sbx.commands.run("sleep 60", { background: true });
	assert.ok((await sbx.commands.list()).some((x) => x.execId === h.execId));
	await sbx.commands.kill(h.execId);
	const done = await h.wait({ intervalMs: 100 });
	assert.equal(done.killed, true);
	assert.equal(done.exitCode, 137);
	await assert.rejects(sbx.commands.kill("nope"), (e) => e instanceof NotFoundError);
});

test("previews: create, list, delete", async () => {
	const p = await sbx.previews.create(3000, { ttl: 120 });
	assert.equal(p.port, 3000);
	assert.match(p.previewId, /^[a-z2-7]{26}$/);
	assert.ok(p.url.includes(p.previewId));
	const list = await sbx.previews.list();
	assert.ok(list.some((x) => x.previewId === p.previewId));
	assert.equal(await sbx.previews.delete(p.previewId), undefined);
	const after = await sbx.previews.list();
	assert.ok(!after.some((x) => x.previewId === p.previewId));
});

test("previews: a port out of range is refused, a missing preview is 404", async () => {
	await assert.rejects(sbx.previews.create(70000), (e) => {
		assert.equal(e.status, 400);
		assert.equal(e.message, "field 'port' must be an integer between 1 and 65535");
		return true;
	});
	await assert.rejects(sbx.previews.delete("a".repeat(26)), (e) => e.status === 404);
});

test("close: 204, again 204 (and kill, E2B's name); then a call is 410 sandbox is closed", async () => {
	const s = await Sandbox.create({ repo: REPO });
	assert.equal(await s.close(), undefined);
	assert.equal(await s.kill(), undefined);
	await assert.rejects(s.exec("true"), (e) => {
		assert.ok(e instanceof SandboxdError);
		assert.equal(e.status, 410);
		assert.equal(e.message, "sandbox is closed");
		return true;
	});
});

test("close {save: true}: the unpushed work lands on the ephemeral branch sandbox/<id>", async () => {
	const s = await Sandbox.create({ repo: REPO });
	await s.files.write("saved.txt", "keep me\n");
	await s.close({ save: true });
	const c = await new Client().getCommit(REPO, `sandbox/${s.id}`, { namespace: "ephemeral" });
	assert.ok(c.files.some((f) => f.filename === "saved.txt"), JSON.stringify(c.files));
	const branches = await new Client().listBranches(REPO, { namespace: "ephemeral" });
	assert.ok(branches.some((b) => b.name === `sandbox/${s.id}`));
});
