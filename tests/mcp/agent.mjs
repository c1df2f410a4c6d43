// agent.mjs: an agent's whole cycle against sandboxd's /mcp with the official MCP
// TypeScript SDK client over its streamable HTTP transport, and each error path.
// Prints "ok NAME" or "not ok NAME :: DETAIL" per check; t_mcp.sh records them.
// Environment: SANDBOXD_URL, MCP_TOKEN (the repository's owner), MCP_OTHER_TOKEN (a
// collaborator with write), MCP_JOB_TOKEN, MCP_OWNER, MCP_REPO, MCP_ARCHIVED (a repository
// of the owner that is archived), MCP_ARCHIVED_TEXT (REST's text for it), MCP_PREVIEW_DOMAIN
// (SANDBOXD_PREVIEW_DOMAIN).
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const env = process.env;
const url = new URL('/mcp', env.SANDBOXD_URL);
const owner = env.MCP_OWNER, repo = env.MCP_REPO;
let failed = 0;

function check(name, cond, detail) {
	if (cond) {
		console.log(`ok ${name}`);
	} else {
		failed++;
		console.log(`not ok ${name} :: ${JSON.stringify(detail ?? null).slice(0, 600)}`);
	}
}

async function connect(token) {
	const headers = token ? { Authorization: `Bearer ${token}` } : {};
	const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
	const client = new Client({ name: 'sandboxd-it', version: '1.0.0' });
	await client.connect(transport);
	return { client, transport };
}

async function refused(name, token, status) {
	try {
		const { client } = await connect(token);
		await client.close();
		check(name, false, 'connected');
	} catch (e) {
		check(name, e.code === status || String(e).includes(String(status)), String(e));
	}
}

const text = (res) => res.content?.map((c) => c.text).join('') ?? '';
const isError = (res, want) => res.isError === true && text(res).includes(want);

async function main() {
	await refused('no token: the client gets 401', null, 401);
	await refused('a wrong token: 401', 'dfy_notavalidtoken', 401);

	const { client, transport } = await connect(env.MCP_TOKEN);
	check('connects and initializes', client.getServerVersion()?.name === 'sandboxd',
	      client.getServerVersion());
	check('the latest protocol version is agreed', transport.protocolVersion === '2025-11-25',
	      transport.protocolVersion);
	check('the server offers tools', !!client.getServerCapabilities()?.tools,
	      client.getServerCapabilities());
	await client.ping();
	check('ping answers', true);

	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name).sort();
	check('lists the eight tools', JSON.stringify(names) === JSON.stringify(
		['sandbox_close', 'sandbox_create', 'sandbox_exec', 'sandbox_list', 'sandbox_list_files',
		 'sandbox_preview', 'sandbox_read_file', 'sandbox_write_file']),
	      names);
	const exec = tools.find((t) => t.name === 'sandbox_exec');
	check('sandbox_exec declares its required arguments',
	      JSON.stringify(exec?.inputSchema?.required) ===
	      JSON.stringify(['owner', 'repo', 'sandbox_id', 'command']), exec?.inputSchema);
	check('every tool has an input and an output schema',
	      tools.every((t) => t.inputSchema?.type === 'object' && t.outputSchema?.type === 'object'),
	      tools);

	// create
	let res = await client.callTool({ name: 'sandbox_create', arguments: { owner, repo } });
	const id = res.structuredContent?.id;
	check('sandbox_create answers {id, ref}', !res.isError && /^sb_[0-9a-f]{24}$/.test(id) &&
	      res.structuredContent.ref === 'main', res);
	check('the text content is the same object',
	      JSON.parse(text(res)).id === id, text(res));
	const box = { owner, repo, sandbox_id: id };
	const run = (command, more = {}) =>
		client.callTool({ name: 'sandbox_exec', arguments: { ...box, command, ...more } });

	// exec
	res = await run('echo hello; echo oops >&2; exit 3');
	const r = res.structuredContent ?? {};
	check('exec: stdout, stderr and exit code apart', !res.isError && r.exitCode === 3 &&
	      r.stdout === 'hello\n' && r.stderr === 'oops\n' && r.timedOut === false &&
	      r.stdoutBytes === 6, res);
	res = await run('pwd; echo "$GREETING"', { cwd: '/tmp', env: { GREETING: 'hi there' },
						  timeout_seconds: 30 });
	check('exec: cwd, env and timeout_seconds', res.structuredContent?.stdout === '/tmp\nhi there\n', res);
	res = await run('sleep 30', { timeout_seconds: 1 });
	check('exec: past timeout_seconds, 124 and timedOut', res.structuredContent?.exitCode === 124 &&
	      res.structuredContent?.timedOut === true, res);
	res = await run('git config --list; cat .git/config');
	check('exec: the sandbox token is masked', !res.isError &&
	      !/dst_/.test(res.structuredContent?.stdout) && res.structuredContent?.stdout.includes('***'),
	      res.structuredContent?.stdout);

	// write and read, text and binary
	const words = 'héllo wörld ✓\n';
	res = await client.callTool({ name: 'sandbox_write_file',
				      arguments: { ...box, path: 'notes/hello.txt', content: words } });
	check('write_file: {ok, path, size} in bytes', res.structuredContent?.ok === true &&
	      res.structuredContent?.size === Buffer.byteLength(words), res);
	res = await client.callTool({ name: 'sandbox_read_file', arguments: { ...box, path: 'notes/hello.txt' } });
	check('read_file: text comes back as text', res.structuredContent?.content === words &&
	      res.structuredContent?.encoding === undefined, res);
	res = await client.callTool({ name: 'sandbox_write_file',
				      arguments: { ...box, path: 'run.sh', content: '#!/bin/sh\necho ran\n', mode: 493 } });
	check('write_file with mode 0755', res.structuredContent?.ok === true, res);
	res = await run('./run.sh');
	check('the script written is runnable', res.structuredContent?.stdout === 'ran\n', res);
	await run("printf '\\000\\377\\376abc' > blob.bin");
	res = await client.callTool({ name: 'sandbox_read_file', arguments: { ...box, path: 'blob.bin' } });
	check('read_file: binary comes back as base64', res.structuredContent?.encoding === 'base64' &&
	      Buffer.from(res.structuredContent.content, 'base64').equals(Buffer.from([0, 255, 254, 97, 98, 99])),
	      res);

	// list files (the SDK checks each result against the tool's outputSchema)
	const ls = (args) => client.callTool({ name: 'sandbox_list_files', arguments: { ...box, ...args } });
	res = await ls({ path: 'notes' });
	const ents = res.structuredContent?.entries ?? [];
	check('list_files: a directory\'s entries with type, size, mode and mtime', !res.isError &&
	      res.structuredContent.path === 'notes' && res.structuredContent.truncated === false &&
	      JSON.stringify(ents.map((e) => [e.name, e.path, e.type, e.size, e.mode])) ===
	      JSON.stringify([['hello.txt', '/workspace/repo/notes/hello.txt', 'file',
			       Buffer.byteLength(words), 420]]) &&
	      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(ents[0]?.mtime), res);
	await run('ln -s run.sh link.sh');
	res = await ls({ depth: 2 });
	const all = res.structuredContent?.entries ?? [];
	const at = (p) => all.find((e) => e.path === `/workspace/repo/${p}`)?.type;
	check('list_files: the repository by default, to depth 2, a link as a link',
	      res.structuredContent?.path === '.' && at('notes') === 'dir' &&
	      at('notes/hello.txt') === 'file' && at('link.sh') === 'symlink' && at('.git/HEAD') === 'file',
	      res);
	res = await ls({ path: 'nope' });
	check('list_files: a missing directory, the REST text', isError(res, 'no such file: nope'), res);
	res = await ls({ depth: 9 });
	check('list_files: depth out of range, isError naming it',
	      isError(res, "argument 'depth' must be an integer from 1 to 8"), res);
	await run('rm link.sh');

	// preview: a URL for a port; a page served there comes back through it (nginx, with the
	// preview's host name; Node does not resolve *.localhost itself)
	await run("nohup perl -MIO::Socket::INET -e '" +
		  '$s = IO::Socket::INET->new(LocalPort => 3000, Listen => 5, ReuseAddr => 1) or die; ' +
		  'while ($c = $s->accept) { while (<$c>) { last if /^\\r?$/ } ' +
		  'print $c "HTTP/1.1 200 OK\\r\\nContent-Length: 22\\r\\nConnection: close\\r\\n\\r\\n' +
		  "served in the sandbox\\n\"; close $c }' >/dev/null 2>&1 &");
	res = await client.callTool({ name: 'sandbox_preview', arguments: { ...box, port: 3000 } });
	const pv = res.structuredContent ?? {};
	const pvUrl = `http://${pv.previewId}.${env.MCP_PREVIEW_DOMAIN}:${url.port}/`;
	check('sandbox_preview answers {url, previewId, port, expires_at}', !res.isError &&
	      /^[a-z2-7]{26}$/.test(pv.previewId) && pv.port === 3000 && pv.url === pvUrl &&
	      !Number.isNaN(Date.parse(pv.expires_at)), res);
	const viaPreview = () => new Promise((resolve) => {
		const req = http.get({ host: '127.0.0.1', port: url.port, path: '/',
				       headers: { Host: new URL(pvUrl).host } }, (r) => {
			let body = '';
			r.on('data', (d) => { body += d; });
			r.on('end', () => resolve({ status: r.statusCode, body }));
		});
		req.on('error', (e) => resolve({ status: 0, body: String(e) }));
	});
	let page = await viaPreview();
	for (let i = 0; i < 100 && page.status !== 200; i++) {
		await new Promise((r) => setTimeout(r, 100));
		page = await viaPreview();
	}
	check('the preview URL serves the page of the sandbox',
	      page.status === 200 && page.body === 'served in the sandbox\n', page);
	res = await client.callTool({ name: 'sandbox_preview', arguments: { ...box, port: 0 } });
	check('sandbox_preview: port out of range is refused naming it',
	      isError(res, "argument 'port' must be an integer from 1 to 65535"), res);
	res = await client.callTool({ name: 'sandbox_preview',
				      arguments: { ...box, port: 3000, ttl_seconds: 86401 } });
	check('sandbox_preview: ttl_seconds over the maximum is refused naming it',
	      isError(res, "argument 'ttl_seconds' must be an integer from 1 to 86400"), res);

	// push from inside, as the creator
	res = await run('git checkout -q -b from-mcp && git add notes run.sh && ' +
			'git commit -qm "from mcp" && git push -q origin HEAD 2>&1');
	check('git push from the sandbox works', res.structuredContent?.exitCode === 0, res);
	console.log(`pushed ${id}`);

	// error paths
	res = await run('');
	check('an empty command is refused', isError(res, "argument 'command'"), res);
	res = await client.callTool({ name: 'sandbox_exec', arguments: { ...box } });
	check('a missing argument: isError naming it', isError(res, "missing argument 'command'"), res);
	res = await client.callTool({ name: 'sandbox_exec', arguments: { ...box, command: 'true', timeout_seconds: 99999 } });
	check('timeout_seconds out of range: isError', isError(res, 'timeout_seconds'), res);
	res = await client.callTool({ name: 'sandbox_read_file', arguments: { ...box, path: 'nope.txt' } });
	check('a missing file: the REST text', isError(res, 'no such file: nope.txt'), res);
	res = await client.callTool({ name: 'sandbox_create', arguments: { owner, repo, ref: 'no-such-ref' } });
	check('unknown ref', isError(res, 'unknown ref'), res);
	res = await client.callTool({ name: 'sandbox_create', arguments: { owner, repo: env.MCP_ARCHIVED } });
	check('archived repository: the REST text', isError(res, env.MCP_ARCHIVED_TEXT), res);
	try {
		await client.callTool({ name: 'sandbox_teleport', arguments: {} });
		check('an unknown tool is a protocol error', false, 'no error');
	} catch (e) {
		check('an unknown tool is a protocol error (-32602)', e.code === -32602, String(e));
	}

	const other = await connect(env.MCP_OTHER_TOKEN);
	res = await other.client.callTool({ name: 'sandbox_exec', arguments: { ...box, command: 'id' } });
	check("another user's call: not your sandbox", isError(res, 'not your sandbox'), res);
	await other.client.close();
	const job = await connect(env.MCP_JOB_TOKEN);
	res = await job.client.callTool({ name: 'sandbox_create', arguments: { owner, repo } });
	check("a job token can't start sandboxes",
	      isError(res, "job and sandbox tokens can't start sandboxes"), res);
	await job.client.close();

	// close
	res = await client.callTool({ name: 'sandbox_close', arguments: box });
	check('sandbox_close answers {closed: true}', res.structuredContent?.closed === true, res);
	res = await client.callTool({ name: 'sandbox_close', arguments: box });
	check('closing again answers the same', res.structuredContent?.closed === true, res);
	res = await run('true');
	check('a closed sandbox: the REST text', isError(res, 'sandbox is closed'), res);
	await client.close();
}

try {
	await main();
} catch (e) {
	failed++;
	console.log(`not ok the cycle ran to its end :: ${JSON.stringify(String(e?.stack ?? e))}`);
}
process.exit(failed ? 1 : 0);
