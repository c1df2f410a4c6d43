// Compiled by `tsc --noEmit` only (never run): a user's TypeScript against index.d.ts, so a
// type that does not fit the README's examples fails the check.
import {
  Client, Sandbox, SandboxdError, NotFoundError, AuthenticationError, RateLimitError,
  type ExecResult, type ExecEvent, type FileEntry, type Preview, type MergeResult,
} from "../index.js";

async function usage(): Promise<void> {
  const ac = new AbortController();
  const sbx = await Sandbox.create({ repo: "acme/website", ref: "main", image: "minimal", signal: ac.signal });
  const id: string = sbx.id;
  const state: string = sbx.info.state;
  const r: ExecResult = await sbx.exec("make test", { cwd: "src", env: { CI: "1" }, timeoutMs: 60_000, signal: ac.signal });
  const code: number = r.exitCode;
  const more = await sbx.exec("ls", { onStdout: (d: string) => process.stdout.write(d) });
  for await (const ev of sbx.execStream("ls", { lines: true })) {
    const e: ExecEvent = ev;
    if (e.type === "stdout") console.log(e.data);
    else if (e.type === "result") console.log(e.result.exitCode);
  }
  const viaE2b: ExecResult = await sbx.commands.run("ls", { cwd: "src" });
  const bg = await sbx.commands.run("sleep 9", { background: true });
  await sbx.commands.kill(bg.execId);
  await sbx.commands.list();
  const h = await sbx.execDetached("sleep 1");
  const out = await h.wait({ intervalMs: 100 });
  const polled = await h.poll();
  await sbx.killExec(h.execId, "KILL");
  const execs = await sbx.listExecs();
  await sbx.files.write("a.txt", "hi", { mode: 0o644 });
  const bytes: Uint8Array = await sbx.files.read("a.txt");
  const text: string = await sbx.files.readText("a.txt");
  const entries: FileEntry[] = (await sbx.files.list(".", { depth: 2 })).entries;
  await sbx.files.remove("a.txt", { recursive: false });
  const up = await sbx.files.upload("big.bin", new Uint8Array(8));
  const stream: ReadableStream<Uint8Array> = await sbx.files.download("big.bin");
  const p: Preview = await sbx.previews.create(8080, { ttl: 60 });
  await sbx.previews.delete(p.previewId);
  await sbx.setIdleTimeout(600);
  await sbx.keepalive();
  await sbx.close({ save: false });
  const again = await Sandbox.connect(id, { repo: "acme/website", url: "http://x", token: "t" });
  const byId: Sandbox = await Sandbox.connect(id);
  for await (const s of Sandbox.mine({ state: "ready", perPage: 10 })) { const r: string = s.repository; void r; }
  void byId;
  const client = new Client({ url: "http://x", token: "t", retries: 2 });
  const handle = new Sandbox(client, "acme/website", { id });
  await handle.keepalive();
  const m: MergeResult | null = await client.merge("acme/website", { base: "main", head: "work" });
  await client.compare("acme/website", "main", "work", { namespace: "ephemeral" });
  const tok = await client.createToken({ scope: "read" });
  await client.revokeToken(tok.id);
  const url = (await client.createGitUrl("acme/website", { scopes: ["git:read"], ttl: 60 })).url;
  try {
    await client.getRepo("acme/nope");
  } catch (e) {
    if (e instanceof NotFoundError || e instanceof AuthenticationError || e instanceof RateLimitError) {
      const s: number = e.status;
    }
    if (e instanceof SandboxdError) console.log(e.status, e.message, e.body);
  }
  void [state, viaE2b, code, more, out, polled, execs, bytes, text, entries, up, stream, again, m, url];
}
void usage;
