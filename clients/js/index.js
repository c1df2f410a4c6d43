// sandboxd's JavaScript SDK: plain ESM on Node's own fetch, no dependency. The types are in
// index.d.ts beside it (hand-written, checked by `tsc --noEmit`), so `npm pack` ships what
// is in git with no build step to forget (docs/decisions/0092-js-sdk.md).
//
// Routes, fields and statuses are SPEC.md §4's; this file only shapes them.

const API = "/api/v3";
const DEFAULT_RETRIES = 3; // 429/503 answers retried this many times (4 tries in all)
const DEFAULT_RETRY_WAIT_MS = 1000; // when the answer has no Retry-After
const MAX_RETRY_WAIT_MS = 60000; // a longer Retry-After is not waited for: the error goes up
// An attached exec answers when its command ends: up to timeoutMs (at most 1 h) plus the
// kill's 5 s, and a create up to 3 min. Node's fetch gives up on headers after 300 s.
const HEADERS_TIMEOUT_MS = 3600000 + 120000;

// ---- errors ------------------------------------------------------------------------------------

/** Any answer of the service that is not a success: its status and its text. */
export class SandboxdError extends Error {
	constructor(status, message, body = null, headers = null) {
		super(message);
		this.name = "SandboxdError";
		this.status = status;
		this.body = body;
		this.headers = headers;
	}
}
/** 401: a missing, bad or expired token. */
export class AuthenticationError extends SandboxdError {
	constructor(...a) { super(...a); this.name = "AuthenticationError"; }
}
/** 404: no such repository, sandbox, exec, file or route. */
export class NotFoundError extends SandboxdError {
	constructor(...a) { super(...a); this.name = "NotFoundError"; }
}
/** 429: a limit of the service; retried first (Retry-After), thrown when the tries are spent. */
export class RateLimitError extends SandboxdError {
	constructor(...a) { super(...a); this.name = "RateLimitError"; }
}

function errorFor(status, body, headers) {
	let text = `HTTP ${status}`;
	if (body && typeof body === "object") {
		if (typeof body.error === "string") text = body.error;
		else if (typeof body.message === "string") text = body.message;
	} else if (typeof body === "string" && body !== "") {
		text = body;
	}
	const C = status === 401 ? AuthenticationError
		: status === 404 ? NotFoundError
		: status === 429 ? RateLimitError
		: SandboxdError;
	return new C(status, text, body, headers);
}

// A JSON answer or line, or a SandboxdError (status 0) naming what came instead: whatever
// answers in the server's place (a proxy's HTML page, a cut line) is not a result.
function parseJson(text, what) {
	try {
		return JSON.parse(text);
	} catch {
		throw new SandboxdError(0, `${what}: the answer is not JSON: ${JSON.stringify(String(text).slice(0, 80))}`);
	}
}

async function errorFromResponse(res) {
	const raw = await res.text().catch(() => "");
	let body = raw;
	try { body = JSON.parse(raw); } catch { /* not JSON: the text itself */ }
	return errorFor(res.status, body, res.headers);
}

// ---- small helpers -----------------------------------------------------------------------------

function env(name) {
	return typeof process !== "undefined" && process.env ? process.env[name] : undefined;
}

// "owner/name" -> "/api/v3/repos/owner/name"
function repoPath(repo) {
	if (typeof repo !== "string" || !/^[^/\s]+\/[^/\s]+$/.test(repo))
		throw new TypeError(`repo must be "owner/name", got ${JSON.stringify(repo)}`);
	const [o, n] = repo.split("/");
	return `${API}/repos/${encodeURIComponent(o)}/${encodeURIComponent(n)}`;
}

// A ref name keeps its '/' (the routes' {ref+}); each segment is escaped.
function refPath(ref) {
	return String(ref).split("/").map(encodeURIComponent).join("/");
}

// Raw file routes: relative to /workspace/repo, absolute when the first segment is %2F.
function filePath(path) {
	const p = String(path);
	if (p === "") throw new TypeError("path must not be empty");
	if (p.startsWith("/")) return "%2F" + p.replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/");
	return p.split("/").map(encodeURIComponent).join("/");
}

function toBytes(data) {
	if (typeof data === "string") return new TextEncoder().encode(data);
	if (data instanceof Uint8Array) return data;
	if (data instanceof ArrayBuffer) return new Uint8Array(data);
	if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
	throw new TypeError("data must be a string, Uint8Array, ArrayBuffer or typed array");
}

function b64(bytes) {
	return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

function sleep(ms, signal) {
	return new Promise((resolve, reject) => {
		if (signal?.aborted) return reject(signal.reason);
		const t = setTimeout(() => { signal?.removeEventListener("abort", onAbort); resolve(); }, ms);
		function onAbort() { clearTimeout(t); reject(signal.reason); }
		signal?.addEventListener("abort", onAbort, { once: true });
	});
}

// Retry-After: seconds, or an HTTP date; absent or unreadable: the default wait.
function retryAfterMs(headers, fallback) {
	const v = headers.get("retry-after");
	if (v === null) return fallback;
	if (/^\s*\d+\s*$/.test(v)) return Number(v) * 1000;
	const at = Date.parse(v);
	return Number.isNaN(at) ? fallback : Math.max(0, at - Date.now());
}

// Node's fetch is undici's, whose Agent gives up waiting for an answer's headers after
// 300 s: a `make test` of 6 minutes would fail. Node does not export the class, but its
// global dispatcher is one (registered under undici's own global symbol): an Agent of the
// same class with a longer headers timeout goes in each call's `dispatcher`. Anything
// else (another runtime, a fetch of the caller's) gets no dispatcher and its own defaults.
let longAgent;
function longDispatcher() {
	if (longAgent !== undefined) return longAgent;
	longAgent = null;
	try {
		const sym = Symbol.for("undici.globalDispatcher.1");
		if (!globalThis[sym]) globalThis.fetch("data:,").catch(() => {}); // loads undici, sets it
		const A = globalThis[sym]?.constructor;
		if (typeof A === "function" && A.name === "Agent")
			longAgent = new A({ headersTimeout: HEADERS_TIMEOUT_MS, bodyTimeout: HEADERS_TIMEOUT_MS });
	} catch {
		longAgent = null;
	}
	return longAgent;
}

function query(params) {
	const q = new URLSearchParams();
	for (const [k, v] of Object.entries(params ?? {}))
		if (v !== undefined && v !== null) q.set(k, String(v));
	const s = q.toString();
	return s ? `?${s}` : "";
}

// ---- the client --------------------------------------------------------------------------------

/** The service at one URL with one token: every REST route as a thin method. */
export class Client {
	constructor(opts = {}) {
		const url = opts.url ?? env("SANDBOXD_URL");
		if (!url) throw new TypeError("no service URL: pass {url} or set SANDBOXD_URL");
		this.url = String(url).replace(/\/+$/, "");
		this.token = opts.token ?? env("SANDBOXD_TOKEN") ?? null;
		this.retries = opts.retries ?? DEFAULT_RETRIES;
		this.retryWaitMs = opts.retryWaitMs ?? DEFAULT_RETRY_WAIT_MS;
		this.maxRetryWaitMs = opts.maxRetryWaitMs ?? MAX_RETRY_WAIT_MS;
		this.fetch = opts.fetch ?? globalThis.fetch;
		this.dispatcher = opts.fetch ? null : longDispatcher();
	}

	/**
	 * One call: the Response once its status is a success, else a thrown SandboxdError.
	 * 429 and 503 are tried again after Retry-After, at most `retries` times, when the
	 * body can be sent again (not a stream).
	 */
	async raw(method, path, opts = {}) {
		const headers = { ...(opts.headers ?? {}) };
		if (this.token) headers.authorization = `Bearer ${this.token}`;
		let body = opts.body;
		if (opts.json !== undefined) {
			headers["content-type"] = "application/json";
			body = JSON.stringify(opts.json);
		}
		headers.accept ??= "application/json";
		const replayable = body === undefined || typeof body === "string" || body instanceof Uint8Array;
		const init = { method, headers, body, signal: opts.signal };
		if (this.dispatcher) init.dispatcher = this.dispatcher;
		if (body !== undefined && !replayable) init.duplex = "half";
		for (let attempt = 0; ; attempt++) {
			const res = await this.fetch(this.url + path, init);
			if (res.ok || res.status === 304) return res;
			if ((res.status === 429 || res.status === 503) && replayable && attempt < this.retries) {
				const wait = retryAfterMs(res.headers, this.retryWaitMs * 2 ** attempt);
				if (wait <= this.maxRetryWaitMs) {
					await res.body?.cancel().catch(() => {});
					await sleep(wait, opts.signal);
					continue;
				}
			}
			throw await errorFromResponse(res);
		}
	}

	/** One call with a JSON answer (null for 204). */
	async request(method, path, opts = {}) {
		const res = await this.raw(method, path, opts);
		if (res.status === 204) return null;
		const text = await res.text();
		return text === "" ? null : parseJson(text, `${method} ${path}`);
	}

	// accounts
	getUser(o = {}) { return this.request("GET", `${API}/user`, o); }
	listImages(o = {}) { return this.request("GET", `${API}/sandbox-images`, o); }

	// repositories
	createRepo(body, o = {}) { return this.request("POST", `${API}/user/repos`, { ...o, json: body }); }
	getRepo(repo, o = {}) { return this.request("GET", repoPath(repo), o); }
	listRepos(o = {}) {
		return this.request("GET", `${API}/user/repos${query({ per_page: o.perPage, page: o.page })}`, o);
	}
	updateRepo(repo, body, o = {}) { return this.request("PATCH", repoPath(repo), { ...o, json: body }); }
	deleteRepo(repo, o = {}) { return this.request("DELETE", repoPath(repo), o).then(() => {}); }

	// git URLs and tokens
	createGitUrl(repo, body, o = {}) {
		return this.request("POST", `${repoPath(repo)}/git-urls`, { ...o, json: body });
	}
	createToken(body, o = {}) { return this.request("POST", `${API}/user/tokens`, { ...o, json: body }); }
	listTokens(o = {}) { return this.request("GET", `${API}/user/tokens`, o); }
	revokeToken(id, o = {}) {
		return this.request("DELETE", `${API}/user/tokens/${encodeURIComponent(id)}`, o).then(() => {});
	}

	// review and merge
	listBranches(repo, o = {}) {
		return this.request("GET", `${repoPath(repo)}/branches${query({ namespace: o.namespace })}`, o);
	}
	getCommit(repo, ref, o = {}) {
		return this.request("GET", `${repoPath(repo)}/commits/${refPath(ref)}${query({ namespace: o.namespace })}`, o);
	}
	compare(repo, base, head, o = {}) {
		return this.request("GET",
			`${repoPath(repo)}/compare/${refPath(base)}...${refPath(head)}${query({ namespace: o.namespace })}`, o);
	}
	/** 201: the merge; 204 (nothing to merge): null. A conflict is a SandboxdError 409 whose body has `files`. */
	merge(repo, body, o = {}) { return this.request("POST", `${repoPath(repo)}/merges`, { ...o, json: body }); }
	deleteRef(repo, ref, o = {}) {
		return this.request("DELETE", `${repoPath(repo)}/git/refs/${refPath(ref)}${query({ namespace: o.namespace })}`, o)
			.then(() => {});
	}

	// sandboxes, as raw answers (Sandbox below wraps them)
	listSandboxes(repo, o = {}) { return this.request("GET", `${repoPath(repo)}/diffinery/sandboxes`, o); }
	/** GET /api/v3/user/sandboxes: one page of the caller's own sandboxes on every repository. */
	listMySandboxes(o = {}) {
		return this.request("GET", `${API}/user/sandboxes${query({ state: o.state, per_page: o.perPage, page: o.page })}`, o);
	}
	/** GET /api/v3/sandboxes/{id}: a sandbox by its id alone, with its `repository`. */
	getSandbox(id, o = {}) { return this.request("GET", `${API}/sandboxes/${encodeURIComponent(id)}`, o); }
}

// ---- sandboxes ---------------------------------------------------------------------------------

const CREATE_FIELDS = ["ref", "image", "depth", "filter", "cpus", "memoryMiB", "diskMiB", "egress", "secrets"];

function clientOf(opts) {
	return opts.client ?? new Client(opts);
}

function execBody(cmd, opts) {
	if (typeof cmd !== "string") throw new TypeError("cmd must be a string");
	const b = { cmd };
	if (opts.cwd !== undefined) b.cwd = opts.cwd;
	if (opts.env !== undefined) b.env = opts.env;
	if (opts.timeoutMs !== undefined) b.timeoutMs = opts.timeoutMs;
	return b;
}

/** A sandbox: a container with the repository cloned at /workspace/repo. */
export class Sandbox {
	constructor(client, repo, info) {
		this.client = client;
		this.repo = repo;
		this.id = info.id;
		this.info = info;
		this.base = `${repoPath(repo)}/diffinery/sandboxes/${encodeURIComponent(info.id)}`;
		this.files = new Files(this);
		this.previews = new Previews(this);
		this.commands = new Commands(this);
	}

	/** POST …/sandboxes: a new sandbox on `repo` ("owner/name"); returns once it runs. */
	static async create(opts) {
		if (!opts || !opts.repo) throw new TypeError('Sandbox.create needs {repo: "owner/name"}');
		const client = clientOf(opts);
		const body = {};
		for (const k of CREATE_FIELDS) if (opts[k] !== undefined) body[k] = opts[k];
		const info = await client.request("POST", `${repoPath(opts.repo)}/diffinery/sandboxes`,
			{ json: body, signal: opts.signal });
		return new Sandbox(client, opts.repo, info);
	}

	/**
	 * An existing sandbox by id: by the id alone (GET /api/v3/sandboxes/{id}, which names its
	 * repository), or under {repo}. It must exist and be the caller's (or an admin's).
	 */
	static async connect(id, opts = {}) {
		const client = clientOf(opts);
		if (!opts.repo) {
			const info = await client.getSandbox(id, { signal: opts.signal });
			return new Sandbox(client, info.repository, info);
		}
		const info = await client.request("GET",
			`${repoPath(opts.repo)}/diffinery/sandboxes/${encodeURIComponent(id)}`, { signal: opts.signal });
		return new Sandbox(client, opts.repo, info);
	}

	/**
	 * The caller's own sandboxes on every repository, newest first, each with `repository`
	 * (GET /api/v3/user/sandboxes, page after page); `state` filters.
	 */
	static async *mine(opts = {}) {
		const client = clientOf(opts);
		const perPage = opts.perPage ?? 100;
		for (let page = 1; ; page++) {
			const items = await client.listMySandboxes({ state: opts.state, perPage, page, signal: opts.signal });
			yield* items;
			if (items.length < perPage) return;
		}
	}

	/** The caller's sandboxes on `repo` (all of them for its admins). */
	static list(opts) {
		if (!opts || !opts.repo) throw new TypeError('Sandbox.list needs {repo: "owner/name"}');
		return clientOf(opts).listSandboxes(opts.repo, { signal: opts.signal });
	}

	/** GET …/sandboxes/{id}: state, clone, resources, idle_stop_at; kept in `info`. */
	async getInfo(o = {}) {
		this.info = await this.client.request("GET", this.base, o);
		return this.info;
	}

	/** Runs `bash -c cmd`; a non-zero exit is a result. With onStdout/onStderr it streams. */
	async exec(cmd, opts = {}) {
		if (opts.onStdout || opts.onStderr) {
			let stdout = "", stderr = "";
			for await (const ev of this.execStream(cmd, opts)) {
				if (ev.type === "stdout") { stdout += ev.data; opts.onStdout?.(ev.data); }
				else if (ev.type === "stderr") { stderr += ev.data; opts.onStderr?.(ev.data); }
				else if (ev.type === "result") return { ...ev.result, stdout, stderr };
			}
			throw new SandboxdError(200, "the exec stream ended without a result");
		}
		return this.client.request("POST", `${this.base}/exec`, { json: execBody(cmd, opts), signal: opts.signal });
	}

	/**
	 * The NDJSON stream: {type: "stdout"|"stderr", data}, {type: "keepalive"} (only with
	 * {keepalive: true}), and last {type: "result", result}. `{lines: true}` yields whole
	 * lines instead of chunks as they come.
	 */
	async *execStream(cmd, opts = {}) {
		const res = await this.client.raw("POST", `${this.base}/exec`, {
			json: execBody(cmd, opts), signal: opts.signal, headers: { accept: "application/x-ndjson" },
		});
		const partial = { stdout: "", stderr: "" };
		const decoder = new TextDecoder();
		let buf = "";
		for await (const chunk of res.body) {
			buf += decoder.decode(chunk, { stream: true });
			let nl;
			while ((nl = buf.indexOf("\n")) >= 0) {
				const line = buf.slice(0, nl);
				buf = buf.slice(nl + 1);
				if (line.trim() !== "") yield* event(parseJson(line, `POST ${this.base}/exec`));
			}
		}
		buf += decoder.decode();
		if (buf.trim() !== "") yield* event(parseJson(buf, `POST ${this.base}/exec`));

		function* event(o) {
			for (const s of ["stdout", "stderr"]) {
				if (typeof o[s] !== "string") continue;
				if (!opts.lines) { yield { type: s, data: o[s] }; continue; }
				const parts = (partial[s] + o[s]).split("\n");
				partial[s] = parts.pop();
				for (const l of parts) yield { type: s, data: l };
			}
			if (typeof o.stdout === "string" || typeof o.stderr === "string") return;
			if (o.keepalive) { if (opts.keepalive) yield { type: "keepalive" }; return; }
			if (typeof o.error === "string") throw new SandboxdError(res.status, o.error, o);
			if (opts.lines) {
				for (const s of ["stdout", "stderr"])
					if (partial[s] !== "") { yield { type: s, data: partial[s] }; partial[s] = ""; }
			}
			yield { type: "result", result: o };
		}
	}

	/** {detach: true}: 202 {execId} at once; the handle reads its output by offset. */
	async execDetached(cmd, opts = {}) {
		const r = await this.client.request("POST", `${this.base}/exec`,
			{ json: { ...execBody(cmd, opts), detach: true }, signal: opts.signal });
		return new ExecHandle(this, r.execId);
	}

	/** A detached exec's state and output since the byte offsets given. */
	getExec(execId, o = {}) {
		return this.client.request("GET",
			`${this.base}/execs/${encodeURIComponent(execId)}${query({ stdoutOffset: o.stdoutOffset, stderrOffset: o.stderrOffset })}`,
			o);
	}

	/** The sandbox's detached execs, newest first. */
	listExecs(o = {}) { return this.client.request("GET", `${this.base}/execs`, o); }

	/** Signals a detached exec's tree (TERM by default; KILL 5 s later). */
	killExec(execId, sig = "TERM", o = {}) {
		return this.client.request("POST", `${this.base}/execs/${encodeURIComponent(execId)}/kill`,
			{ ...o, json: { signal: sig } }).then(() => {});
	}

	/** PATCH …/{id} {idle_timeout_seconds}: the sandbox with its new idle_stop_at. */
	async setIdleTimeout(seconds, o = {}) {
		this.info = await this.client.request("PATCH", this.base, { ...o, json: { idle_timeout_seconds: seconds } });
		return this.info;
	}

	/** Counts as activity (204). */
	keepalive(o = {}) { return this.client.request("POST", `${this.base}/keepalive`, o).then(() => {}); }

	/** E2B's name for close. */
	kill(o = {}) { return this.close(o); }

	/** Stops and removes the container (204; again 204 when closed). {save: true} saves first. */
	close(o = {}) {
		const json = o.save ? { save: true } : undefined;
		return this.client.request("POST", `${this.base}/close`, { signal: o.signal, json }).then(() => {});
	}
}

/** E2B's names for the same calls, so that a script ports by changing its import. */
export class Commands {
	constructor(sandbox) { this.sandbox = sandbox; }

	/** exec; {background: true}: execDetached (an ExecHandle). */
	run(cmd, opts = {}) {
		return opts.background ? this.sandbox.execDetached(cmd, opts) : this.sandbox.exec(cmd, opts);
	}

	list(o = {}) { return this.sandbox.listExecs(o); }

	kill(execId, o = {}) { return this.sandbox.killExec(execId, "KILL", o); }
}

/** A detached exec: its output read by offset, so a lost connection loses nothing. */
export class ExecHandle {
	constructor(sandbox, execId) {
		this.sandbox = sandbox;
		this.execId = execId;
		this.stdoutOffset = 0;
		this.stderrOffset = 0;
	}

	/** The output written since the last poll; the offsets move on. */
	async poll(o = {}) {
		const r = await this.sandbox.getExec(this.execId,
			{ ...o, stdoutOffset: this.stdoutOffset, stderrOffset: this.stderrOffset });
		this.stdoutOffset = r.stdoutOffset;
		this.stderrOffset = r.stderrOffset;
		return r;
	}

	/** Polls every `intervalMs` (default 200) until the exec has exited; the whole output. */
	async wait(o = {}) {
		let stdout = "", stderr = "";
		for (;;) {
			const r = await this.poll(o);
			stdout += r.stdout;
			stderr += r.stderr;
			o.onStdout && r.stdout && o.onStdout(r.stdout);
			o.onStderr && r.stderr && o.onStderr(r.stderr);
			if (r.state === "exited") return { ...r, stdout, stderr };
			await sleep(o.intervalMs ?? 200, o.signal);
		}
	}

	kill(sig = "TERM", o = {}) { return this.sandbox.killExec(this.execId, sig, o); }
}

/** Files of a sandbox: JSON routes (base64) for small ones, raw streams for big ones. */
export class Files {
	constructor(sandbox) { this.sandbox = sandbox; }

	/** POST …/write: creates parent directories; {mode} numeric (0o755). */
	write(path, data, o = {}) {
		const json = { path, content: b64(toBytes(data)) };
		if (o.mode !== undefined) json.mode = o.mode;
		return this.sandbox.client.request("POST", `${this.sandbox.base}/write`, { signal: o.signal, json });
	}

	/** POST …/read: the file's bytes. */
	async read(path, o = {}) {
		const r = await this.sandbox.client.request("POST", `${this.sandbox.base}/read`, { signal: o.signal, json: { path } });
		return new Uint8Array(Buffer.from(r.content, "base64"));
	}

	/** The file as UTF-8 text. */
	async readText(path, o = {}) {
		return new TextDecoder().decode(await this.read(path, o));
	}

	/** POST …/list {path, depth?}: {path, entries, truncated}. */
	list(path, o = {}) {
		const json = { path };
		if (o.depth !== undefined) json.depth = o.depth;
		return this.sandbox.client.request("POST", `${this.sandbox.base}/list`, { signal: o.signal, json });
	}

	/** POST …/remove {path, recursive?}. */
	remove(path, o = {}) {
		const json = { path };
		if (o.recursive) json.recursive = true;
		return this.sandbox.client.request("POST", `${this.sandbox.base}/remove`, { signal: o.signal, json })
			.then(() => {});
	}

	/** PUT …/files/{path}: bytes or a stream (web ReadableStream, Node Readable, async iterable). */
	upload(path, data, o = {}) {
		let body = data;
		if (typeof data === "string" || data instanceof ArrayBuffer || ArrayBuffer.isView(data)) body = toBytes(data);
		return this.sandbox.client.request("PUT",
			`${this.sandbox.base}/files/${filePath(path)}${query({ mode: o.mode === undefined ? undefined : "0" + o.mode.toString(8) })}`,
			{ signal: o.signal, body, headers: { "content-type": "application/octet-stream" } });
	}

	/** GET …/files/{path}: the bytes as a web ReadableStream (Readable.fromWeb for a Node one). */
	async download(path, o = {}) {
		const res = await this.sandbox.client.raw("GET", `${this.sandbox.base}/files/${filePath(path)}`,
			{ signal: o.signal, headers: { accept: "application/octet-stream" } });
		return res.body;
	}
}

/** Previews: a sandbox's HTTP port at a URL a browser can open. */
export class Previews {
	constructor(sandbox) { this.sandbox = sandbox; }

	/** POST …/previews {port, ttl?}: {previewId, port, url, expires_at}. */
	create(port, o = {}) {
		const json = { port };
		if (o.ttl !== undefined) json.ttl = o.ttl;
		return this.sandbox.client.request("POST", `${this.sandbox.base}/previews`, { signal: o.signal, json });
	}

	list(o = {}) { return this.sandbox.client.request("GET", `${this.sandbox.base}/previews`, o); }

	delete(previewId, o = {}) {
		return this.sandbox.client.request("DELETE", `${this.sandbox.base}/previews/${encodeURIComponent(previewId)}`, o)
			.then(() => {});
	}
}
