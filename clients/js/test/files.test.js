// sandbox.files: JSON read and write (base64), list, remove, raw upload and download.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { Sandbox, NotFoundError, SandboxdError } from "../index.js";
import { REPO } from "./env.js";

let sbx;
before(async () => { sbx = await Sandbox.create({ repo: REPO }); });
after(async () => { await sbx?.close(); });

const sha = (b) => createHash("sha256").update(b).digest("hex");
async function inside(cmd) { return (await sbx.exec(cmd)).stdout.trim(); }

test("files.write of text, read back as bytes and as text", async () => {
	const w = await sbx.files.write("dir/hello.txt", "héllo\n");
	assert.deepEqual(w, { ok: true, path: "dir/hello.txt", size: 7 });
	const bytes = await sbx.files.read("dir/hello.txt");
	assert.ok(bytes instanceof Uint8Array);
	assert.equal(bytes.length, 7);
	assert.equal(await sbx.files.readText("dir/hello.txt"), "héllo\n");
	assert.equal(await inside("cat dir/hello.txt"), "héllo");
});

test("files.write of binary bytes with a mode", async () => {
	const data = randomBytes(4096);
	await sbx.files.write("/tmp/bin.dat", data, { mode: 0o755 });
	assert.equal(await inside("stat -c %a /tmp/bin.dat"), "755");
	assert.equal(sha(await sbx.files.read("/tmp/bin.dat")), sha(data));
});

test("files.read of a missing file: NotFoundError 404 no such file", async () => {
	await assert.rejects(sbx.files.read("nope.txt"), (e) => {
		assert.ok(e instanceof NotFoundError);
		assert.equal(e.status, 404);
		assert.equal(e.message, "no such file: nope.txt");
		return true;
	});
});

test("files.write without a path: 400 with the server's error", async () => {
	await assert.rejects(sbx.files.write("", "x"), (e) => {
		assert.ok(e instanceof SandboxdError);
		assert.equal(e.status, 400);
		assert.match(e.message, /path/);
		return true;
	});
});

test("files.list: entries with type and size; depth", async () => {
	await sbx.files.write("tree/a/b.txt", "bb");
	const l = await sbx.files.list("tree");
	assert.equal(l.truncated, false);
	assert.deepEqual(l.entries.map((e) => [e.name, e.type]), [["a", "dir"]]);
	const deep = await sbx.files.list("tree", { depth: 2 });
	const b = deep.entries.find((e) => e.name === "b.txt");
	assert.equal(b.type, "file");
	assert.equal(b.size, 2);
});

test("files.list of a missing path: 404 no such file", async () => {
	await assert.rejects(sbx.files.list("no/such/dir"), (e) => e.status === 404 && e.message === "no such file: no/such/dir");
});

test("files.remove: a file, then a directory with recursive", async () => {
	await sbx.files.write("gone/f.txt", "f");
	await sbx.files.remove("gone/f.txt");
	await assert.rejects(sbx.files.read("gone/f.txt"), (e) => e.status === 404);
	await sbx.files.write("gone/g.txt", "g");
	await assert.rejects(sbx.files.remove("gone"), (e) => e.status === 400);
	await sbx.files.remove("gone", { recursive: true });
	assert.equal(await inside("test -e gone && echo there || echo gone"), "gone");
});

test("files.remove of a missing path: 404 no such file", async () => {
	await assert.rejects(sbx.files.remove("never.txt"), (e) => e instanceof NotFoundError && e.message === "no such file: never.txt");
});

test("files.upload of bytes and download as a stream: the same bytes", async () => {
	const data = randomBytes(3 << 20);
	const up = await sbx.files.upload("raw/blob.bin", data);
	assert.deepEqual(up, { path: "raw/blob.bin", size: data.length });
	const chunks = [];
	for await (const c of await sbx.files.download("raw/blob.bin")) chunks.push(c);
	assert.equal(sha(Buffer.concat(chunks)), sha(data));
	assert.equal(await inside("sha256sum raw/blob.bin | cut -d' ' -f1"), sha(data));
});

test("files.upload of a Node stream (chunked) to an absolute path, with a mode", async () => {
	const parts = [randomBytes(100000), randomBytes(50000)];
	const up = await sbx.files.upload("/tmp/streamed.bin", Readable.from(parts), { mode: 0o600 });
	assert.equal(up.size, 150000);
	assert.equal(await inside("stat -c '%a %s' /tmp/streamed.bin"), "600 150000");
	const chunks = [];
	for await (const c of await sbx.files.download("/tmp/streamed.bin")) chunks.push(c);
	assert.equal(sha(Buffer.concat(chunks)), sha(Buffer.concat(parts)));
});

test("files.download of a missing file: NotFoundError 404", async () => {
	await assert.rejects(sbx.files.download("raw/none.bin"), (e) => e instanceof NotFoundError && e.message === "no such file: raw/none.bin");
});
