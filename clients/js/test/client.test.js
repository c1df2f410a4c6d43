// The Client: accounts, repositories, git URLs, tokens; errors, retries, abort, settings.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { Client, Sandbox, SandboxdError, AuthenticationError, NotFoundError, RateLimitError } from "../index.js";
import { URL, TOKEN, REPO, OWNER } from "./env.js";

const client = new Client(); // SANDBOXD_URL and SANDBOXD_TOKEN from the environment
const sfx = Math.random().toString(36).slice(2, 8);

test("the URL and token come from SANDBOXD_URL and SANDBOXD_TOKEN", async () => {
	assert.equal(client.url, URL.replace(/\/+$/, ""));
	assert.equal(client.token, TOKEN);
	const me = await client.getUser();
	assert.equal(me.login, OWNER);
});

test("options win over the environment: a bad token is AuthenticationError 401", async () => {
	const c = new Client({ url: URL, token: "dfy_nottherealtoken" });
	await assert.rejects(c.getUser(), (e) => {
		assert.ok(e instanceof AuthenticationError && e instanceof SandboxdError);
		assert.equal(e.status, 401);
		assert.equal(e.message, "bad credentials");
		return true;
	});
});

test("no URL at all is a TypeError naming SANDBOXD_URL", () => {
	const saved = process.env.SANDBOXD_URL;
	delete process.env.SANDBOXD_URL;
	try {
		assert.throws(() => new Client(), /SANDBOXD_URL/);
	} finally {
		process.env.SANDBOXD_URL = saved;
	}
});

test("listImages: the sandbox images, one of them the default", async () => {
	const imgs = await client.listImages();
	assert.ok(imgs.length >= 1);
	assert.equal(imgs.filter((i) => i.default).length, 1);
});

test("getRepo, listRepos: the test repository", async () => {
	const r = await client.getRepo(REPO);
	assert.equal(r.full_name, REPO);
	assert.equal(r.default_branch, "main");
	const list = await client.listRepos({ perPage: 100 });
	assert.ok(list.some((x) => x.full_name === REPO));
});

test("createRepo, updateRepo, deleteRepo; then getRepo is NotFoundError 404", async () => {
	const name = `sdk-tmp-${sfx}`;
	const full = `${OWNER}/${name}`;
	const made = await client.createRepo({ name, visibility: "private" });
	assert.equal(made.full_name, full);
	assert.equal(made.visibility, "private");
	const upd = await client.updateRepo(full, { visibility: "public" });
	assert.equal(upd.visibility, "public");
	assert.equal(await client.deleteRepo(full), undefined);
	await assert.rejects(client.getRepo(full), (e) => {
		assert.ok(e instanceof NotFoundError);
		assert.equal(e.status, 404);
		assert.equal(e.message, "repository not found");
		return true;
	});
});

test("createRepo of a name that exists: SandboxdError 409 with the server's text", async () => {
	await assert.rejects(client.createRepo({ name: REPO.split("/")[1] }), (e) => {
		assert.ok(e instanceof SandboxdError);
		assert.equal(e.status, 409);
		assert.equal(e.message, `repository ${REPO} already exists`);
		return true;
	});
});

test("a repo that is not owner/name is a TypeError before any call", () => {
	assert.throws(() => client.getRepo("nope"), /owner\/name/);
});

test("createGitUrl: a URL git can use, and its expiry", async () => {
	const g = await client.createGitUrl(REPO, { scopes: ["git:read"], ttl: 60 });
	assert.match(g.url, /^https?:\/\//);
	assert.ok(g.url.includes(`/${REPO}.git`));
	assert.ok(Date.parse(g.expires_at) > Date.now());
	// git takes the credentials from the URL; fetch wants them as a header.
	const u = new globalThis.URL(g.url);
	const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString("base64");
	u.username = u.password = "";
	const refs = await fetch(`${u.href.replace(/\/$/, "")}/info/refs?service=git-upload-pack`,
		{ headers: { authorization: `Basic ${basic}` } });
	assert.equal(refs.status, 200);
});

test("createGitUrl with a ttl over 3600: SandboxdError 400 with the server's text", async () => {
	await assert.rejects(client.createGitUrl(REPO, { scopes: ["git:read"], ttl: 7200 }), (e) => {
		assert.equal(e.status, 400);
		assert.equal(e.message, "field 'ttl' must be an integer between 1 and 3600");
		return true;
	});
});

test("createToken, listTokens, revokeToken: the new token works, then not", async () => {
	const t = await client.createToken({ scope: "read", note: `sdk ${sfx}` });
	assert.match(t.token, /^dfy_/);
	assert.equal(t.scope, "read");
	const mine = new Client({ url: URL, token: t.token });
	assert.equal((await mine.getUser()).login, OWNER);
	const list = await client.listTokens();
	assert.ok(list.some((x) => String(x.id) === String(t.id)));
	assert.ok(list.every((x) => !("token" in x)), "the list never shows a secret");
	assert.equal(await client.revokeToken(t.id), undefined);
	await assert.rejects(mine.getUser(), (e) => e.status === 401);
});

test("revokeToken of a token that does not exist: NotFoundError 404", async () => {
	await assert.rejects(client.revokeToken(999999999), (e) => {
		assert.ok(e instanceof NotFoundError);
		assert.equal(e.status, 404);
		assert.equal(e.message, "token not found");
		return true;
	});
});

test("createToken with a bad scope: SandboxdError 422 naming the field", async () => {
	await assert.rejects(client.createToken({ scope: "admin" }), (e) => {
		assert.ok(e.status === 400 || e.status === 422);
		assert.match(e.message, /scope/);
		return true;
	});
});

test("an aborted call rejects with the AbortSignal's reason", async () => {
	const ac = new AbortController();
	ac.abort(new Error("stop here"));
	await assert.rejects(client.getUser({ signal: ac.signal }), /stop here/);
});

test("on Node's fetch the client waits for an answer longer than undici's 300 s", async () => {
	assert.equal(client.dispatcher?.constructor?.name, "Agent");
	// undici keeps its options on a symbol of its own: read them back to see they hold.
	const opts = Object.getOwnPropertySymbols(client.dispatcher)
		.map((s) => client.dispatcher[s]).find((v) => v && typeof v === "object" && "headersTimeout" in v);
	if (opts) assert.equal(opts.headersTimeout, 3720000);
	assert.equal((await client.getUser()).login, OWNER, "calls go through it");
	assert.equal(new Client({ url: URL, fetch: async () => new Response("{}") }).dispatcher, null);
});

// A server of the test's own that answers 503/429 first, to see the retries.
async function flaky(answers) {
	let calls = 0;
	const srv = createServer((req, res) => {
		const a = answers[Math.min(calls++, answers.length - 1)];
		res.writeHead(a.status, { "content-type": "application/json", ...(a.headers ?? {}) });
		res.end(typeof a.body === "string" ? a.body : JSON.stringify(a.body));
	});
	await new Promise((r) => srv.listen(0, "127.0.0.1", r));
	return { url: `http://127.0.0.1:${srv.address().port}`, calls: () => calls, close: () => srv.close() };
}

test("503 and 429 are tried again after Retry-After", async () => {
	const s = await flaky([
		{ status: 503, headers: { "retry-after": "0" }, body: { message: "docker unavailable" } },
		{ status: 429, headers: { "retry-after": "1" }, body: { message: "too many" } },
		{ status: 200, body: { login: "x" } },
	]);
	try {
		const t0 = Date.now();
		const me = await new Client({ url: s.url, token: "t" }).getUser();
		assert.equal(me.login, "x");
		assert.equal(s.calls(), 3);
		assert.ok(Date.now() - t0 >= 900, "waited the second Retry-After (1 s)");
	} finally {
		s.close();
	}
});

test("past its retries (3 by default) the 429 is a RateLimitError", async () => {
	const s = await flaky([{ status: 429, headers: { "retry-after": "0" }, body: { message: "sandbox limit reached" } }]);
	try {
		await assert.rejects(new Client({ url: s.url, token: "t" }).getUser(), (e) => {
			assert.ok(e instanceof RateLimitError);
			assert.equal(e.message, "sandbox limit reached");
			return true;
		});
		assert.equal(s.calls(), 4);
	} finally {
		s.close();
	}
});

test("an answer that is not JSON is a SandboxdError naming the call, not a SyntaxError", async () => {
	const s = await flaky([{ status: 200, headers: { "content-type": "text/html" }, body: "<html>a proxy's page</html>" }]);
	try {
		await assert.rejects(new Client({ url: s.url, token: "t" }).getUser(), (e) => {
			assert.ok(e instanceof SandboxdError);
			assert.equal(e.status, 0);
			assert.equal(e.message, `GET /api/v3/user: the answer is not JSON: "<html>a proxy's page</html>"`);
			return true;
		});
	} finally {
		s.close();
	}
});

test("a Retry-After longer than maxRetryWaitMs is not waited for", async () => {
	const s = await flaky([{ status: 503, headers: { "retry-after": "3600" }, body: { message: "later" } }]);
	try {
		await assert.rejects(new Client({ url: s.url, token: "t" }).getUser(), (e) => e.status === 503 && e.message === "later");
		assert.equal(s.calls(), 1);
	} finally {
		s.close();
	}
});

test("a stream's {\"error\"} line after the start is thrown as a SandboxdError, after the output before it", async () => {
	const s = await flaky([{ status: 200, headers: { "content-type": "application/x-ndjson" },
		body: '{"stdout":"a\\n"}\n{"keepalive":true}\n{"error":"docker unavailable"}\n' }]);
	try {
		const sbx = new Sandbox(new Client({ url: s.url, token: "t" }), "o/r", { id: "x" });
		const seen = [];
		await assert.rejects(async () => { for await (const ev of sbx.execStream("true")) seen.push(ev); }, (e) => {
			assert.ok(e instanceof SandboxdError);
			assert.equal(e.message, "docker unavailable");
			return true;
		});
		assert.deepEqual(seen, [{ type: "stdout", data: "a\n" }]);
	} finally {
		s.close();
	}
});
