#!/usr/bin/env node
// agent-loop.mjs: an agent's loop with the TypeScript SDK (clients/js), from a clone of
// sandboxd with no install step (in a project of your own, import "@sandboxd/sdk").
//
//   SANDBOXD_URL=http://127.0.0.1:8080 SANDBOXD_TOKEN=dfy_… \
//     node examples/agent-loop.mjs OWNER/NAME [BRANCH [NEW_BRANCH]]
//
// (or AGENT_REPO, AGENT_BRANCH, AGENT_NEW_BRANCH in the environment; AGENT_TEST_CMD is the
// test command, default `bash test.sh`). One trip: a sandbox at BRANCH, the tests run, a
// fix written with the files API, the tests run again, the fix committed and pushed to
// NEW_BRANCH from inside the sandbox, the compare BRANCH...NEW_BRANCH printed, the sandbox
// closed (also when a step fails). Exit 0 when the fix passed and was pushed.
//
// The "model" is a stand-in: it reads lines `FAIL <path>: want '<text>'` in the failing
// output and writes <text> to <path>. A real agent asks its model for the patch there.
import { Sandbox, Client, SandboxdError } from "../clients/js/index.js";

const repo = process.argv[2] ?? process.env.AGENT_REPO;
const branch = process.argv[3] ?? process.env.AGENT_BRANCH ?? "main";
const newBranch = process.argv[4] ?? process.env.AGENT_NEW_BRANCH ?? `agent/fix-${Date.now()}`;
const testCmd = process.env.AGENT_TEST_CMD ?? "bash test.sh";
if (!repo) {
	console.error("usage: agent-loop.mjs OWNER/NAME [BRANCH [NEW_BRANCH]] (SANDBOXD_URL, SANDBOXD_TOKEN set)");
	process.exit(2);
}

// The stand-in model: the failing output in, the files to write out ([[path, text], …]).
function proposeFix(output) {
	return [...output.matchAll(/^FAIL (\S+): want '(.*)'$/gm)].map((m) => [m[1], `${m[2]}\n`]);
}

// Runs the tests and says how they went; a non-zero exit is a result here, never thrown.
async function runTests(sbx) {
	const r = await sbx.exec(testCmd, { timeoutMs: 120_000 }); // cwd: /workspace/repo
	console.log(`tests: ${r.exitCode === 0 ? "passed" : "failed"} (exit ${r.exitCode})`);
	for (const line of (r.stdout + r.stderr).trimEnd().split("\n")) console.log(`  | ${line}`);
	return r;
}

// One Client (URL and token from SANDBOXD_URL and SANDBOXD_TOKEN) for the sandbox and the
// review routes alike.
const client = new Client();
let sbx = null;
try {
	// The repository is cloned at `branch` into /workspace/repo before the first exec runs.
	sbx = await Sandbox.create({ repo, ref: branch, client });
	console.log(`sandbox ${sbx.id} on ${repo} at ${branch}`);

	const first = await runTests(sbx);
	if (first.exitCode === 0) {
		console.log("nothing to fix");
	} else {
		// Paths of the files API are relative to /workspace/repo.
		const fix = proposeFix(first.stdout + first.stderr);
		if (fix.length === 0) throw new Error("the model had no fix for this output");
		for (const [path, text] of fix) {
			await sbx.files.write(path, text);
			console.log(`fix: wrote ${path}`);
		}
		const second = await runTests(sbx);
		if (second.exitCode !== 0) throw new Error("the tests still fail after the fix");

		// Commit and push from inside: the sandbox's git credential pushes as you, under
		// the repository's ref policies. Each exec is its own `bash -c`; `env` passes the
		// author and the branch name (no quoting of our strings into the command line).
		const env = { GIT_AUTHOR_NAME: "agent", GIT_AUTHOR_EMAIL: "agent@example.test",
			GIT_COMMITTER_NAME: "agent", GIT_COMMITTER_EMAIL: "agent@example.test", NEW_BRANCH: newBranch };
		const push = await sbx.exec("git add -A && git commit -qm 'Fix the failing tests' && " +
			'git push -q origin "HEAD:refs/heads/$NEW_BRANCH" && git rev-parse HEAD', { env });
		if (push.exitCode !== 0) throw new Error(`commit or push failed: ${push.stderr.trim()}`);
		console.log(`pushed ${newBranch} at ${push.stdout.trim()}`);

		// What a reviewer sees: the new branch against the one the sandbox started from.
		const cmp = await client.compare(repo, branch, newBranch);
		console.log(`compare ${branch}...${newBranch}: ${cmp.status}, ahead by ${cmp.ahead_by}, ` +
			`behind by ${cmp.behind_by}, ${cmp.files.length} file(s) changed`);
		for (const c of cmp.commits) console.log(`  commit ${c.sha.slice(0, 12)} ${c.commit.message.split("\n")[0]}`);
		for (const f of cmp.files) console.log(`  ${f.status} ${f.filename} +${f.additions} -${f.deletions}`);
	}
} catch (err) {
	// A refusal of the service carries its status and its text, as the API guide gives it.
	if (err instanceof SandboxdError) console.error(`agent-loop: ${err.status} ${err.message}`);
	else console.error(`agent-loop: ${err.message}`);
	process.exitCode = 1;
} finally {
	// Always close: a sandbox left open holds a container until its idle stop.
	if (sbx) {
		await sbx.close().then(() => console.log(`closed ${sbx.id}`), (err) => {
			console.error(`agent-loop: close ${sbx.id}: ${err.message}`);
			process.exitCode = 1;
		});
	}
}
