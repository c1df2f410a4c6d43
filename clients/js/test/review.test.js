// Review and merge on the Client: a branch pushed from a sandbox, its branches, commit and
// compare, merged into main, then deleted; and the refusals.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client, Sandbox, NotFoundError, SandboxdError } from "../index.js";
import { REPO } from "./env.js";

const client = new Client();
const branch = `sdk-${Math.random().toString(36).slice(2, 8)}`;
let sbx;
before(async () => {
	sbx = await Sandbox.create({ repo: REPO });
	const r = await sbx.exec(`git checkout -q -b ${branch} && echo y > ${branch}.txt && git add . &&
		git commit -qm "add ${branch}" && git push -q origin ${branch}`);
	assert.equal(r.exitCode, 0, r.stderr);
});
after(async () => { await sbx?.close(); });

test("listBranches: main and the pushed branch", async () => {
	const b = await client.listBranches(REPO);
	const names = b.map((x) => x.name);
	assert.ok(names.includes("main") && names.includes(branch));
	assert.equal(b.find((x) => x.name === "main").protected, true);
});

test("getCommit: the branch's commit with its file", async () => {
	const c = await client.getCommit(REPO, branch);
	assert.equal(c.commit.message.trim(), `add ${branch}`);
	assert.deepEqual(c.files.map((f) => [f.filename, f.status]), [[`${branch}.txt`, "added"]]);
});

test("getCommit of a ref that does not exist: NotFoundError 404", async () => {
	await assert.rejects(client.getCommit(REPO, "no/such/ref"), (e) => e instanceof NotFoundError && e.status === 404);
});

test("compare: the branch is 1 ahead of main", async () => {
	const c = await client.compare(REPO, "main", branch);
	assert.equal(c.status, "ahead");
	assert.equal(c.ahead_by, 1);
	assert.equal(c.behind_by, 0);
});

test("compare in the ephemeral namespace of a branch that is not there: 404", async () => {
	await assert.rejects(client.compare(REPO, "main", branch, { namespace: "ephemeral" }), (e) => e.status === 404);
});

test("merge: a fast-forward (201), then nothing to merge (null)", async () => {
	const m = await client.merge(REPO, { base: "main", head: branch });
	assert.equal(m.fast_forward, true);
	assert.match(m.sha, /^[0-9a-f]{40}$/);
	assert.equal(await client.merge(REPO, { base: "main", head: branch }), null);
	const main = await client.getCommit(REPO, "main");
	assert.equal(main.sha, m.sha);
});

test("merge of a head that does not exist: the server's refusal", async () => {
	await assert.rejects(client.merge(REPO, { base: "main", head: "no-such-head" }), (e) => {
		assert.ok(e instanceof SandboxdError);
		assert.ok(e.status === 404 || e.status === 422, `status ${e.status}`);
		assert.ok(e.message.length > 0);
		return true;
	});
});

test("deleteRef: the branch is gone; the default branch is refused with 422", async () => {
	assert.equal(await client.deleteRef(REPO, `heads/${branch}`), undefined);
	const names = (await client.listBranches(REPO)).map((x) => x.name);
	assert.ok(!names.includes(branch));
	await assert.rejects(client.deleteRef(REPO, "heads/main"), (e) => e.status === 422);
});
