"""Sandboxes: create, run commands, files, previews, close (docs/api/sandboxes.md)."""
from __future__ import annotations

import base64
import time
import urllib.parse
from dataclasses import dataclass
from typing import (Any, BinaryIO, Dict, Iterator, List, Mapping, Optional, Union)

from .client import Client, _decode, _quote_path, _repo_path
from .errors import SandboxdError

# Seconds past an exec's own limit that a call waits for its answer: the service ends a
# command 5 s past its limit and answers after its grace; this covers that and the way.
EXEC_MARGIN_S = 60.0
DEFAULT_EXEC_TIMEOUT_MS = 600_000


@dataclass
class ExecResult:
    """A finished command. A non-zero exit is a result, not an error."""
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    duration_ms: int

    @classmethod
    def from_json(cls, o: Mapping[str, Any], stdout: str = "", stderr: str = "") -> "ExecResult":
        return cls(exit_code=int(o.get("exitCode", -1)), stdout=o.get("stdout", stdout),
                   stderr=o.get("stderr", stderr), timed_out=bool(o.get("timedOut")),
                   truncated=bool(o.get("truncated")), duration_ms=int(o.get("durationMs", 0)))


@dataclass
class StreamEvent:
    """One line of a streamed exec: kind "stdout" or "stderr" with its text, or "result"
    (the last) with the ExecResult (whose stdout and stderr are the streamed text joined)."""
    kind: str
    text: str = ""
    result: Optional[ExecResult] = None


@dataclass
class DetachedOutput:
    """What a read of a detached exec gave: the state, the output from the offsets asked
    and the offsets to ask next."""
    state: str
    stdout: str
    stderr: str
    stdout_offset: int
    stderr_offset: int
    exit_code: Optional[int] = None
    timed_out: bool = False
    killed: bool = False
    duration_ms: int = 0


def _exec_body(cmd: str, cwd: Optional[str], env: Optional[Mapping[str, str]],
               timeout_ms: Optional[int], detach: bool = False) -> Dict[str, Any]:
    body: Dict[str, Any] = {"cmd": cmd}
    if cwd is not None:
        body["cwd"] = cwd
    if env is not None:
        body["env"] = dict(env)
    if timeout_ms is not None:
        body["timeoutMs"] = timeout_ms
    if detach:
        body["detach"] = True
    return body


def _wait_s(timeout_ms: Optional[int]) -> float:
    return (timeout_ms or DEFAULT_EXEC_TIMEOUT_MS) / 1000 + EXEC_MARGIN_S


class DetachedExec:
    """A command started with Sandbox.start: read its output by offset, wait, kill."""

    def __init__(self, sandbox: "Sandbox", exec_id: str):
        self.sandbox = sandbox
        self.id = exec_id
        self.stdout_offset = 0
        self.stderr_offset = 0

    def __repr__(self) -> str:
        return f"DetachedExec({self.id!r})"

    def read(self, stdout_offset: Optional[int] = None,
             stderr_offset: Optional[int] = None) -> DetachedOutput:
        """Output since the offsets (by default, since the last read) and the state."""
        so = self.stdout_offset if stdout_offset is None else stdout_offset
        se = self.stderr_offset if stderr_offset is None else stderr_offset
        o = self.sandbox.client.call(
            "GET", f"{self.sandbox.path}/execs/{self.id}?stdoutOffset={so}&stderrOffset={se}")
        self.stdout_offset, self.stderr_offset = o["stdoutOffset"], o["stderrOffset"]
        return DetachedOutput(state=o["state"], stdout=o.get("stdout", ""),
                              stderr=o.get("stderr", ""), stdout_offset=o["stdoutOffset"],
                              stderr_offset=o["stderrOffset"], exit_code=o.get("exitCode"),
                              timed_out=bool(o.get("timedOut")), killed=bool(o.get("killed")),
                              duration_ms=int(o.get("durationMs", 0)))

    def wait(self, timeout: float = 600.0, poll: float = 0.5) -> ExecResult:
        """Reads until the command has exited; its whole output from where reads stood."""
        out: List[str] = []
        err: List[str] = []
        deadline = time.monotonic() + timeout
        while True:
            r = self.read()
            out.append(r.stdout)
            err.append(r.stderr)
            if r.state == "exited" and not r.stdout and not r.stderr:
                return ExecResult(r.exit_code if r.exit_code is not None else -1,
                                  "".join(out), "".join(err), r.timed_out, False, r.duration_ms)
            if r.state == "exited":
                continue        # more may be left past the 1 MiB a read gives
            if time.monotonic() > deadline:
                raise TimeoutError(f"exec {self.id} still running after {timeout} s")
            time.sleep(poll)

    def kill(self, signal: str = "TERM") -> None:
        """Signals the command's whole tree (TERM, KILL, INT, HUP)."""
        self.sandbox.client.call("POST", f"{self.sandbox.path}/execs/{self.id}/kill",
                                 {"signal": signal})


class Files:
    """A sandbox's files. Paths are relative to /workspace/repo, or absolute."""

    def __init__(self, sandbox: "Sandbox"):
        self.sandbox = sandbox

    def read(self, path: str) -> bytes:
        """The file's bytes (raw: no base64 on the way)."""
        with self.sandbox.client.open("GET", f"{self.sandbox.path}/files/{_quote_path(path)}",
                                      headers={"Accept": "application/octet-stream"}) as r:
            return r.read()

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read(path).decode(encoding)

    def write(self, path: str, data: Union[str, bytes], mode: Optional[int] = None) -> Dict[str, Any]:
        """Writes the whole file (made with its directories); answers {path, size}."""
        return self._put(path, data.encode() if isinstance(data, str) else bytes(data), mode)

    def upload(self, path: str, source: BinaryIO, size: int,
               mode: Optional[int] = None) -> Dict[str, Any]:
        """Streams size bytes of an open binary file to path (not held in memory)."""
        return self._put(path, source, mode, length=size, timeout=max(60.0, size / 1e6))

    def _put(self, path: str, body: Union[bytes, BinaryIO], mode: Optional[int],
             length: Optional[int] = None, timeout: Optional[float] = None) -> Dict[str, Any]:
        """PUT …/files/{path} (?mode= in octal when given): the raw route, {path, size}."""
        q = "" if mode is None else f"?mode=0{mode:o}"
        with self.sandbox.client.open("PUT", f"{self.sandbox.path}/files/{_quote_path(path)}{q}",
                                      body=body, length=length, timeout=timeout,
                                      headers={"Content-Type": "application/octet-stream"}) as r:
            return _decode(r.read(), "PUT", f"{self.sandbox.path}/files/{path}")

    def download(self, path: str, target: BinaryIO) -> int:
        """Streams the file into an open binary file; answers how many bytes."""
        with self.sandbox.client.open("GET", f"{self.sandbox.path}/files/{_quote_path(path)}",
                                      headers={"Accept": "application/octet-stream"}) as r:
            n = 0
            while True:
                chunk = r.read(1 << 16)
                if not chunk:
                    return n
                target.write(chunk)
                n += len(chunk)

    def list(self, path: str = ".", depth: int = 1) -> List[Dict[str, Any]]:
        """Entries under path: {name, path, type, size, mode, mtime}, sorted by path."""
        return self.sandbox.client.call("POST", f"{self.sandbox.path}/list",
                                        {"path": path, "depth": depth})["entries"]

    def remove(self, path: str, recursive: bool = False) -> None:
        self.sandbox.client.call("POST", f"{self.sandbox.path}/remove",
                                 {"path": path, "recursive": recursive})

    def read_b64(self, path: str) -> bytes:
        """The file through the JSON route (POST …/read), for files of a few MiB."""
        o = self.sandbox.client.call("POST", f"{self.sandbox.path}/read", {"path": path})
        return base64.b64decode(o["content"])


class Sandbox:
    """A sandbox on a repository. Made by Sandbox.create, found again by Sandbox.connect;
    a context manager that closes it."""

    def __init__(self, client: Client, repo: str, info: Mapping[str, Any]):
        self.client = client
        self.repo = repo
        self.id: str = info["id"]
        self.info: Dict[str, Any] = dict(info)
        self.path = f"/api/v3/repos/{_repo_path(repo)}/diffinery/sandboxes/{self.id}"
        self.files = Files(self)

    def __repr__(self) -> str:
        return f"Sandbox({self.id!r}, repo={self.repo!r})"

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @classmethod
    def create(cls, repo: str, ref: Optional[str] = None, *, client: Optional[Client] = None,
               url: Optional[str] = None, token: Optional[str] = None,
               **fields: Any) -> "Sandbox":
        """A new sandbox on repo ("owner/name") at ref (default: the default branch).
        Other fields as the create takes them: image, depth, filter, cpus, memoryMiB,
        diskMiB, egress, isolation, secrets."""
        c = client or Client(url, token)
        body = {k: v for k, v in fields.items() if v is not None}
        if ref is not None:
            body["ref"] = ref
        info = c.call("POST", f"/api/v3/repos/{_repo_path(repo)}/diffinery/sandboxes", body,
                      timeout=max(c.timeout, 180.0))
        return cls(c, repo, info)

    @classmethod
    def connect(cls, sandbox_id: str, repo: Optional[str] = None, *,
                client: Optional[Client] = None, url: Optional[str] = None,
                token: Optional[str] = None) -> "Sandbox":
        """A sandbox made before, as it is now: by its id alone (GET /api/v3/sandboxes/{id},
        which says its repository), or by its id and repository."""
        c = client or Client(url, token)
        if repo is None:
            info = c.call("GET", f"/api/v3/sandboxes/{urllib.parse.quote(sandbox_id, safe='')}")
            return cls(c, str(info["repository"]), info)
        info = c.call("GET", f"/api/v3/repos/{_repo_path(repo)}/diffinery/sandboxes/"
                             f"{urllib.parse.quote(sandbox_id, safe='')}")
        return cls(c, repo, info)

    @classmethod
    def mine(cls, state: Optional[str] = None, *, client: Optional[Client] = None,
             url: Optional[str] = None, token: Optional[str] = None,
             per_page: int = 100) -> Iterator[Dict[str, Any]]:
        """The caller's own sandboxes on every repository, newest first (each with its
        repository), page after page; state: starting, ready, closed, stopped or failed."""
        c = client or Client(url, token)
        page = 1
        while True:
            q = {"per_page": str(per_page), "page": str(page)}
            if state is not None:
                q["state"] = state
            items = c.call("GET", "/api/v3/user/sandboxes?" + urllib.parse.urlencode(q))
            yield from items
            if len(items) < per_page:
                return
            page += 1

    @classmethod
    def list(cls, repo: str, *, client: Optional[Client] = None, url: Optional[str] = None,
             token: Optional[str] = None) -> List[Dict[str, Any]]:
        """The repository's sandboxes the caller may see."""
        c = client or Client(url, token)
        return c.call("GET", f"/api/v3/repos/{_repo_path(repo)}/diffinery/sandboxes")

    def refresh(self) -> Dict[str, Any]:
        """The sandbox as it is now (state, clone, idle_stop_at…), kept in .info."""
        self.info = self.client.call("GET", self.path)
        return self.info

    @property
    def state(self) -> str:
        return str(self.info.get("state"))

    def exec(self, cmd: str, *, cwd: Optional[str] = None,
             env: Optional[Mapping[str, str]] = None,
             timeout_ms: Optional[int] = None) -> ExecResult:
        """Runs cmd (bash -c) to its end and answers its result."""
        o = self.client.call("POST", f"{self.path}/exec", _exec_body(cmd, cwd, env, timeout_ms),
                             timeout=_wait_s(timeout_ms))
        return ExecResult.from_json(o)

    def exec_stream(self, cmd: str, *, cwd: Optional[str] = None,
                    env: Optional[Mapping[str, str]] = None,
                    timeout_ms: Optional[int] = None) -> Iterator[StreamEvent]:
        """Runs cmd and yields its output as it comes, then the result; an error after the
        command started raises SandboxdError(500, the server's text)."""
        out: List[str] = []
        err: List[str] = []
        for o in self.client.lines("POST", f"{self.path}/exec",
                                   _exec_body(cmd, cwd, env, timeout_ms),
                                   timeout=_wait_s(timeout_ms)):
            if "stdout" in o and "exitCode" not in o:
                out.append(o["stdout"])
                yield StreamEvent("stdout", o["stdout"])
            elif "stderr" in o and "exitCode" not in o:
                err.append(o["stderr"])
                yield StreamEvent("stderr", o["stderr"])
            elif o.get("keepalive"):
                continue
            elif "exitCode" in o:
                yield StreamEvent("result", result=ExecResult.from_json(o, "".join(out), "".join(err)))
                return
            elif "error" in o:
                raise SandboxdError(500, str(o["error"]), o, method="POST", path=f"{self.path}/exec")
        raise SandboxdError(0, "the stream ended without a result", method="POST",
                            path=f"{self.path}/exec")

    def start(self, cmd: str, *, cwd: Optional[str] = None,
              env: Optional[Mapping[str, str]] = None,
              timeout_ms: Optional[int] = None) -> DetachedExec:
        """Starts cmd detached: it runs on after this call; read it by offset."""
        o = self.client.call("POST", f"{self.path}/exec",
                             _exec_body(cmd, cwd, env, timeout_ms, detach=True))
        return DetachedExec(self, o["execId"])

    def execs(self) -> List[Dict[str, Any]]:
        """The sandbox's detached execs, newest first."""
        return self.client.call("GET", f"{self.path}/execs")

    def keepalive(self) -> None:
        """Counts as activity: the idle stop moves away."""
        self.client.call("POST", f"{self.path}/keepalive")

    def set_idle_timeout(self, seconds: int) -> Dict[str, Any]:
        """This sandbox's own idle limit (60..86400 s)."""
        self.info = self.client.call("PATCH", self.path, {"idle_timeout_seconds": seconds})
        return self.info

    def preview(self, port: int, ttl: Optional[int] = None) -> Dict[str, Any]:
        """A URL for a server listening on port inside: {previewId, port, url, expires_at}."""
        body: Dict[str, Any] = {"port": port}
        if ttl is not None:
            body["ttl"] = ttl
        return self.client.call("POST", f"{self.path}/previews", body)

    def previews(self) -> List[Dict[str, Any]]:
        return self.client.call("GET", f"{self.path}/previews")

    def delete_preview(self, preview_id: str) -> None:
        self.client.call("DELETE", f"{self.path}/previews/{preview_id}")

    def close(self, save: Optional[bool] = None) -> None:
        """Ends the sandbox (its container goes); closing a closed one is not an error."""
        try:
            self.client.call("POST", f"{self.path}/close", None if save is None else {"save": save})
        except SandboxdError as e:
            if e.status != 410:
                raise
        self.info["state"] = "closed"
