// Types of index.js, written by hand beside it (docs/decisions/0092-js-sdk.md); checked by
// `tsc --noEmit` with test/types-check.ts, which uses every export.

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call (and a retry's wait). */
  signal?: AbortSignal;
}

export interface ClientOptions {
  /** The service's base URL, e.g. http://127.0.0.1:8080; default: SANDBOXD_URL. */
  url?: string;
  /** A personal token (dfy_…); default: SANDBOXD_TOKEN. */
  token?: string;
  /** How many times a 429 or 503 answer is tried again (default 3). */
  retries?: number;
  /** The wait before a retry when the answer has no Retry-After, doubled each time (default 1000). */
  retryWaitMs?: number;
  /** A Retry-After longer than this is not waited for: the error is thrown (default 60000). */
  maxRetryWaitMs?: number;
  /** Another fetch (tests, proxies); default: the global one. */
  fetch?: typeof globalThis.fetch;
}

/** Any answer of the service that is not a success. */
export class SandboxdError extends Error {
  /** The HTTP status. */
  status: number;
  /** The server's text: its `{"error"}` inside a sandbox, else its `{"message"}`. */
  message: string;
  /** The whole answer body, parsed when it was JSON (a merge conflict's `files`). */
  body: unknown;
  headers: Headers | null;
  constructor(status: number, message: string, body?: unknown, headers?: Headers | null);
}
export class AuthenticationError extends SandboxdError {}
export class NotFoundError extends SandboxdError {}
export class RateLimitError extends SandboxdError {}

export type Visibility = "public" | "private";

export interface Account {
  login: string;
  kind: "user" | "agent";
  site_admin: boolean;
  disabled: boolean;
  name: string | null;
  email: string | null;
  created_at: string;
}

export interface Repository {
  owner: string;
  name: string;
  full_name: string;
  visibility: Visibility;
  default_branch: string;
  archived: boolean;
  clone_url: string;
  created_at: string;
  sandbox_image?: string | null;
}

export interface SandboxImage {
  name: string;
  image: string;
  default: boolean;
  size: number;
  packages: { name: string; version: string }[];
}

export interface RefPolicy {
  pattern: string;
  ops: ("no-push" | "no-force-push")[];
}

export interface GitUrlRequest {
  scopes: ("git:read" | "git:write")[];
  ttl?: number;
  kind?: "normal" | "ephemeral";
  ref_policies?: RefPolicy[];
}

export interface TokenRequest {
  scope: "read" | "write";
  expires_in?: number;
  note?: string;
}

export interface NewToken {
  id: string | number;
  token: string;
  scope: "read" | "write";
  expires_at: string | null;
}

export interface TokenInfo {
  id: string | number;
  scope: "read" | "write";
  [field: string]: unknown;
}

export interface NamespaceOption extends CallOptions {
  /** "ephemeral": the ephemeral namespace's refs, named as their clients see them. */
  namespace?: "ephemeral";
}

export interface Branch {
  name: string;
  commit: { sha: string };
  protected: boolean;
}

export interface FileChange {
  filename: string;
  status: string;
  additions: number;
  deletions: number;
  patch?: string;
}

export interface Commit {
  sha: string;
  commit: { message: string; author: { name: string; email: string; date: string } };
  parents: { sha: string }[];
  files: FileChange[];
}

export interface Comparison {
  status: "ahead" | "behind" | "diverged" | "identical";
  ahead_by: number;
  behind_by: number;
  merge_base_commit: { sha: string };
  commits: unknown[];
  files: FileChange[];
}

export interface MergeRequest {
  base: string;
  head: string;
  namespace?: "ephemeral";
  commit_message?: string;
}

export interface MergeResult {
  sha: string;
  fast_forward: boolean;
  commit: { message: string; author: unknown; parents: { sha: string }[] };
}

/** The service at one URL with one token: every REST route as a thin method. */
export class Client {
  constructor(opts?: ClientOptions);
  readonly url: string;
  readonly token: string | null;
  retries: number;
  /**
   * On Node's own fetch: an Agent of its undici whose headers and body timeouts (300 s by
   * default) are 62 min, so that an attached exec of up to 1 h gets its answer; else null.
   */
  readonly dispatcher: object | null;

  /** One call: the Response of a success, else a thrown SandboxdError (429/503 retried). */
  raw(method: string, path: string, opts?: RequestOptions): Promise<Response>;
  /** One call with a JSON answer (null for 204). */
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<T>;

  getUser(o?: CallOptions): Promise<Account>;
  listImages(o?: CallOptions): Promise<SandboxImage[]>;

  createRepo(body: { name: string; visibility?: Visibility; default_branch?: string }, o?: CallOptions): Promise<Repository>;
  getRepo(repo: string, o?: CallOptions): Promise<Repository>;
  listRepos(o?: CallOptions & { perPage?: number; page?: number }): Promise<Repository[]>;
  updateRepo(repo: string, body: { archived?: boolean; default_branch?: string; visibility?: Visibility; name?: string; sandbox_image?: string | null }, o?: CallOptions): Promise<Repository>;
  deleteRepo(repo: string, o?: CallOptions): Promise<void>;

  createGitUrl(repo: string, body: GitUrlRequest, o?: CallOptions): Promise<{ url: string; expires_at: string }>;
  createToken(body: TokenRequest, o?: CallOptions): Promise<NewToken>;
  listTokens(o?: CallOptions): Promise<TokenInfo[]>;
  revokeToken(id: string | number, o?: CallOptions): Promise<void>;

  listBranches(repo: string, o?: NamespaceOption): Promise<Branch[]>;
  getCommit(repo: string, ref: string, o?: NamespaceOption): Promise<Commit>;
  compare(repo: string, base: string, head: string, o?: NamespaceOption): Promise<Comparison>;
  /** The merge (201), or null when there was nothing to merge (204). */
  merge(repo: string, body: MergeRequest, o?: CallOptions): Promise<MergeResult | null>;
  deleteRef(repo: string, ref: string, o?: NamespaceOption): Promise<void>;

  listSandboxes(repo: string, o?: CallOptions): Promise<SandboxInfo[]>;
  listMySandboxes(o?: CallOptions & { state?: SandboxState; perPage?: number; page?: number }): Promise<SandboxOfRepository[]>;
  getSandbox(id: string, o?: CallOptions): Promise<SandboxOfRepository>;
}

export interface RequestOptions extends CallOptions {
  /** Sent as JSON with Content-Type: application/json. */
  json?: unknown;
  /** A body as is; a stream is sent once (no retry). */
  body?: string | Uint8Array | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;
  headers?: Record<string, string>;
}

export type SandboxState = "starting" | "ready" | "closed" | "stopped" | "failed";

export interface SandboxInfo {
  id: string;
  ref: string;
  state: SandboxState;
  created_at: string;
  commit?: string | null;
  end_reason?: string | null;
  saved_ref?: string | null;
  image?: string;
  resources?: { cpus: number; memoryMiB: number; diskMiB: number };
  egress?: string;
  clone?: { state: "pending" | "done" | "failed"; error?: string };
  last_used_at?: string;
  idle_stop_at?: string;
}

/** The create fields of SPEC §4, and where to find the service. */
export interface SandboxCreateOptions extends ClientOptions, CallOptions {
  /** "owner/name". */
  repo: string;
  /** A branch, a tag or a commit SHA; default: the default branch. */
  ref?: string;
  /** An image name of GET /api/v3/sandbox-images. */
  image?: string;
  depth?: number;
  filter?: "blob:none";
  cpus?: number;
  memoryMiB?: number;
  diskMiB?: number;
  egress?: "none" | "web" | "open";
  /** Names of the repository's sandbox secrets to put in every exec's environment. */
  secrets?: string[];
  /** A client to use instead of one made from url/token. */
  client?: Client;
}

export interface SandboxConnectOptions extends ClientOptions, CallOptions {
  /** Omitted: the sandbox is found by its id alone (GET /api/v3/sandboxes/{id}). */
  repo?: string;
  client?: Client;
}

export interface SandboxListOptions extends ClientOptions, CallOptions {
  repo: string;
  client?: Client;
}

export interface MySandboxesOptions extends ClientOptions, CallOptions {
  state?: SandboxState;
  perPage?: number;
  client?: Client;
}

/** A sandbox as the routes by id answer it: with its repository ("owner/name"). */
export interface SandboxOfRepository extends SandboxInfo {
  repository: string;
}

export interface ExecOptions extends CallOptions {
  /** Relative to /workspace/repo, or absolute. */
  cwd?: string;
  env?: Record<string, string>;
  /** Default 600000, at most 3600000. */
  timeoutMs?: number;
}

export interface ExecRunOptions extends ExecOptions {
  /** Streams, calling this with each piece of stdout as it arrives. */
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
  stdoutBytes?: number;
  stderrBytes?: number;
}

/** The stream's last line: the result without stdout/stderr. */
export type ExecStreamResult = Omit<ExecResult, "stdout" | "stderr">;

export type ExecEvent =
  | { type: "stdout"; data: string }
  | { type: "stderr"; data: string }
  | { type: "keepalive" }
  | { type: "result"; result: ExecStreamResult };

export interface ExecStreamOptions extends ExecOptions {
  /** Yield whole lines (without "\n") instead of chunks as they come. */
  lines?: boolean;
  /** Yield {type: "keepalive"} events too. */
  keepalive?: boolean;
}

export interface DetachedExec {
  state: "running" | "exited";
  exitCode?: number;
  timedOut?: boolean;
  killed?: boolean;
  stdout: string;
  stderr: string;
  stdoutOffset: number;
  stderrOffset: number;
  durationMs: number;
}

export interface DetachedExecSummary {
  execId: string;
  cmd: string;
  state: "running" | "exited";
  exitCode?: number;
  timedOut?: boolean;
  killed?: boolean;
  startedAt: string;
  durationMs: number;
}

export type KillSignal = "TERM" | "KILL" | "INT" | "HUP";

export class Sandbox {
  readonly client: Client;
  /** "owner/name". */
  readonly repo: string;
  readonly id: string;
  /** The last answer about the sandbox (create, connect, getInfo, setIdleTimeout). */
  info: SandboxInfo;
  readonly files: Files;
  readonly previews: Previews;
  /** E2B's names: commands.run (exec, or execDetached with {background: true}), list, kill. */
  readonly commands: Commands;

  /** A handle on a known id without any call (connect checks the id first); `info` holds only the id until getInfo(). */
  constructor(client: Client, repo: string, info: SandboxInfo | { id: string });
  static create(opts: SandboxCreateOptions): Promise<Sandbox>;
  static connect(id: string, opts?: SandboxConnectOptions): Promise<Sandbox>;
  static list(opts: SandboxListOptions): Promise<SandboxInfo[]>;
  /** The caller's own sandboxes on every repository, newest first, page after page. */
  static mine(opts?: MySandboxesOptions): AsyncGenerator<SandboxOfRepository, void, undefined>;

  getInfo(o?: CallOptions): Promise<SandboxInfo>;
  exec(cmd: string, opts?: ExecRunOptions): Promise<ExecResult>;
  execStream(cmd: string, opts?: ExecStreamOptions): AsyncGenerator<ExecEvent, void, undefined>;
  execDetached(cmd: string, opts?: ExecOptions): Promise<ExecHandle>;
  getExec(execId: string, o?: CallOptions & { stdoutOffset?: number; stderrOffset?: number }): Promise<DetachedExec>;
  listExecs(o?: CallOptions): Promise<DetachedExecSummary[]>;
  killExec(execId: string, sig?: KillSignal, o?: CallOptions): Promise<void>;
  setIdleTimeout(seconds: number, o?: CallOptions): Promise<SandboxInfo>;
  keepalive(o?: CallOptions): Promise<void>;
  close(o?: CallOptions & { save?: boolean }): Promise<void>;
  /** E2B's name for close. */
  kill(o?: CallOptions & { save?: boolean }): Promise<void>;
}

export class Commands {
  run(cmd: string, opts: ExecRunOptions & { background: true }): Promise<ExecHandle>;
  run(cmd: string, opts?: ExecRunOptions & { background?: false }): Promise<ExecResult>;
  list(o?: CallOptions): Promise<DetachedExecSummary[]>;
  /** KILL at once (E2B's kill). */
  kill(execId: string, o?: CallOptions): Promise<void>;
}

export class ExecHandle {
  readonly sandbox: Sandbox;
  readonly execId: string;
  stdoutOffset: number;
  stderrOffset: number;
  /** The output written since the last poll; the offsets move on. */
  poll(o?: CallOptions): Promise<DetachedExec>;
  /** Polls until the exec has exited; the whole output since the handle's offsets. */
  wait(o?: CallOptions & { intervalMs?: number; onStdout?: (d: string) => void; onStderr?: (d: string) => void }): Promise<DetachedExec>;
  kill(sig?: KillSignal, o?: CallOptions): Promise<void>;
}

export interface FileEntry {
  name: string;
  path: string;
  type: "file" | "dir" | "symlink" | "other";
  size: number;
  mode: number;
  mtime: string;
}

export type FileData = string | Uint8Array | ArrayBuffer | ArrayBufferView;

export class Files {
  write(path: string, data: FileData, o?: CallOptions & { mode?: number }): Promise<{ ok: true; path: string; size: number }>;
  read(path: string, o?: CallOptions): Promise<Uint8Array>;
  readText(path: string, o?: CallOptions): Promise<string>;
  list(path: string, o?: CallOptions & { depth?: number }): Promise<{ path: string; entries: FileEntry[]; truncated: boolean }>;
  remove(path: string, o?: CallOptions & { recursive?: boolean }): Promise<void>;
  /** Raw upload: bytes, or a stream sent as it is read (never retried). */
  upload(
    path: string,
    data: FileData | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | Blob,
    o?: CallOptions & { mode?: number },
  ): Promise<{ path: string; size: number }>;
  /** Raw download as a web stream of bytes. */
  download(path: string, o?: CallOptions): Promise<ReadableStream<Uint8Array>>;
}

export interface Preview {
  previewId: string;
  port: number;
  url: string;
  expires_at: string;
}

export class Previews {
  create(port: number, o?: CallOptions & { ttl?: number }): Promise<Preview>;
  list(o?: CallOptions): Promise<Preview[]>;
  delete(previewId: string, o?: CallOptions): Promise<void>;
}
