// workflow.mjs: the example workflow (tests/integration/t_workflow.sh) through sandboxd's
// /mcp with the official MCP TypeScript SDK client: a sandbox on the standard image at a
// feature branch, npm ci, the failing snapshot test, the snapshot updated, committed and
// pushed, then the Python package installed in a venv and its pytest run.
// Prints "ok NAME" or "not ok NAME :: DETAIL" per check, and "sandbox ID" once it has one.
// Environment: SANDBOXD_URL, MCP_TOKEN, MCP_OWNER, MCP_REPO, MCP_BRANCH.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const env = process.env;
const owner = env.MCP_OWNER, repo = env.MCP_REPO, branch = env.MCP_BRANCH;
let failed = 0;

function check(name, cond, detail) {
	if (cond) {
		console.log(`ok ${name}`);
	} else {
		failed++;
		console.log(`not ok ${name} :: ${JSON.stringify(detail ?? null).slice(0, 600)}`);
	}
}

async function main() {
	const transport = new StreamableHTTPClientTransport(new URL('/mcp', env.SANDBOXD_URL),
		{ requestInit: { headers: { Authorization: `Bearer ${env.MCP_TOKEN}` } } });
	const client = new Client({ name: 'sandboxd-it-workflow', version: '1.0.0' });
	await client.connect(transport);

	let res = await client.callTool({ name: 'sandbox_create',
					  arguments: { owner, repo, ref: branch, image: 'standard' } });
	const box = res.structuredContent ?? {};
	check('sandbox_create at the feature branch on standard', !res.isError &&
	      box.ref === branch && box.image === 'standard', res);
	if (!box.id)
		return;
	console.log(`sandbox ${box.id}`);
	const run = async (command, cwd) => {
		const r = await client.callTool({ name: 'sandbox_exec', arguments:
			{ owner, repo, sandbox_id: box.id, command, ...(cwd ? { cwd } : {}),
			  timeout_seconds: 600 } });
		return r.isError ? { exitCode: -1, stdout: '', stderr: JSON.stringify(r) } : r.structuredContent;
	};

	let r = await run('npm ci', 'web');
	check('npm ci exits 0', r.exitCode === 0, r);
	r = await run('npm test', 'web');
	check('npm test exits 1 showing the failing snapshot', r.exitCode === 1 &&
	      r.stderr.includes('snapshot mismatch in __snapshots__/greet.txt') &&
	      r.stderr.includes('+ received: "Hello, world!\\n"'), r);
	r = await run('npm test -- -u && npm test', 'web');
	check('the snapshot updated, npm test passes', r.exitCode === 0 &&
	      r.stdout.includes('1 snapshot passed'), r);
	r = await run(`git commit -qam "update the greeting snapshot (mcp)" && git push -q origin HEAD:${branch}`);
	check(`committed and pushed to ${branch}`, r.exitCode === 0, r);
	r = await run('python3 -m venv --system-site-packages .venv && ' +
		      '.venv/bin/pip install -q --no-build-isolation --no-index -e . && ' +
		      '.venv/bin/python -m pytest -q', 'calc');
	check('venv, pip install -e and pytest pass offline', r.exitCode === 0 &&
	      r.stdout.includes('1 passed'), r);
	res = await client.callTool({ name: 'sandbox_close', arguments: { owner, repo, sandbox_id: box.id } });
	check('sandbox_close', !res.isError, res);
	await client.close();
}

main().then(() => process.exit(failed ? 1 : 0), (e) => {
	console.log(`not ok the workflow ran to its end :: ${String(e?.stack ?? e)}`);
	process.exit(1);
});
