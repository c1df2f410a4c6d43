"""The HTTP side of the SDK: URL and token, JSON in and out, errors, bounded retries.

Only the standard library (urllib): the SDK must install where no package index is
reachable. One Client may serve many sandboxes; it holds no connection between calls.
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, BinaryIO, Dict, Iterator, Mapping, Optional, Tuple, Union

from .errors import SandboxdError

# 429 (a cap: execs, parked calls, the agent's connections, the rate limit) and 503 (the
# database or an engine away) say "later", with Retry-After: tried again this many times,
# waiting what the server asks, at most RETRY_WAIT_MAX seconds each time.
RETRIES = 3
RETRY_WAIT_MAX = 30.0
USER_AGENT = "sandboxd-python/0.1.0"

Body = Union[None, bytes, BinaryIO]


def _quote_path(path: str) -> str:
    """A file path as the raw file routes take it: each segment percent-encoded, an
    absolute path starting with %2F (SPEC: the rest of the URL is the path)."""
    lead = "%2F" if path.startswith("/") else ""
    return lead + "/".join(urllib.parse.quote(p, safe="") for p in path.strip("/").split("/"))


class Client:
    """Where sandboxd is and who calls it.

    url: the service's base URL (http://127.0.0.1:8080); else $SANDBOXD_URL.
    token: a personal token (dfy_…) or a sandbox token; else $SANDBOXD_TOKEN.
    timeout: seconds for a call without its own (connect and each read).
    retries: how many times a 429 or 503 is tried again (RETRIES by default; 0: never).
    """

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None,
                 timeout: float = 60.0, retries: int = RETRIES):
        url = url or os.environ.get("SANDBOXD_URL")
        token = token or os.environ.get("SANDBOXD_TOKEN")
        if not url:
            raise ValueError("no URL: pass url= or set SANDBOXD_URL")
        if not token:
            raise ValueError("no token: pass token= or set SANDBOXD_TOKEN")
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"url must be http:// or https:// with a host, not {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries

    def __repr__(self) -> str:
        return f"Client(url={self.url!r})"    # never the token

    # -- the one place a request is made ------------------------------------------------

    def open(self, method: str, path: str, *, json_body: Any = None, body: Body = None,
             headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
             length: Optional[int] = None):
        """Sends one request and answers the open response (the caller reads and closes it);
        raises SandboxdError for any status >= 400, after the retries of 429 and 503."""
        h = {"Authorization": f"Bearer {self.token}", "User-Agent": USER_AGENT,
             "Accept": "application/json"}
        data: Body = body
        if json_body is not None:
            data = json.dumps(json_body).encode()
            h["Content-Type"] = "application/json"
        if headers:
            h.update(headers)
        if length is not None:
            h["Content-Length"] = str(length)
        rewindable = data is None or isinstance(data, bytes)
        attempt = 0
        while True:
            req = urllib.request.Request(self.url + path, data=data, headers=h, method=method)
            try:
                return urllib.request.urlopen(req, timeout=timeout or self.timeout)
            except urllib.error.HTTPError as e:
                err = self._error(e, method, path)
                if (err.status in (429, 503) and attempt < self.retries and rewindable):
                    attempt += 1
                    time.sleep(min(err.retry_after if err.retry_after is not None else 1.0,
                                   RETRY_WAIT_MAX))
                    continue
                raise err from None
            except urllib.error.URLError as e:
                raise SandboxdError(0, f"{method} {path}: {e.reason}", method=method,
                                    path=path) from None
            except (TimeoutError, OSError) as e:
                raise SandboxdError(0, f"{method} {path}: {e}", method=method,
                                    path=path) from None

    @staticmethod
    def _error(e: urllib.error.HTTPError, method: str, path: str) -> SandboxdError:
        raw = e.read(65536)
        e.close()
        body: Any = None
        text = raw.decode("utf-8", "replace").strip()
        try:
            body = json.loads(raw)
        except ValueError:
            pass
        if isinstance(body, dict):
            text = str(body.get("error") or body.get("message") or text)
        retry_after = None
        ra = e.headers.get("Retry-After") if e.headers else None
        if ra:
            try:
                retry_after = float(ra)
            except ValueError:
                pass
        return SandboxdError(e.code, text or e.reason, body, retry_after, method, path)

    def call(self, method: str, path: str, json_body: Any = None,
             timeout: Optional[float] = None) -> Any:
        """A JSON call: the decoded answer (None for 204)."""
        with self.open(method, path, json_body=json_body, timeout=timeout) as r:
            raw = r.read()
        return _decode(raw, method, path) if raw else None

    def lines(self, method: str, path: str, json_body: Any = None,
              timeout: Optional[float] = None) -> Iterator[Dict[str, Any]]:
        """An NDJSON answer, one decoded object a line, as the lines arrive."""
        r = self.open(method, path, json_body=json_body, timeout=timeout,
                      headers={"Accept": "application/x-ndjson"})
        with r:
            if "ndjson" not in (r.headers.get("Content-Type") or ""):
                # Refused before the command started: an ordinary JSON answer.
                yield _decode(r.read(), method, path)
                return
            for line in r:
                line = line.strip()
                if line:
                    yield _decode(line, method, path)

    # -- what is not a sandbox's ------------------------------------------------------

    def user(self) -> Dict[str, Any]:
        """The caller's account (GET /api/v3/user)."""
        return self.call("GET", "/api/v3/user")

    def repo(self, repo: str) -> Dict[str, Any]:
        """A repository, "owner/name"."""
        return self.call("GET", f"/api/v3/repos/{_repo_path(repo)}")

    def create_repo(self, name: str, visibility: str = "private",
                    **fields: Any) -> Dict[str, Any]:
        """A repository of the caller's (POST /api/v3/user/repos)."""
        return self.call("POST", "/api/v3/user/repos",
                         {"name": name, "visibility": visibility, **fields})

    def git_url(self, repo: str, **fields: Any) -> Dict[str, Any]:
        """A short-lived git URL for repo (POST …/git-urls; fields as the API guide's)."""
        return self.call("POST", f"/api/v3/repos/{_repo_path(repo)}/git-urls", fields)


def _decode(raw: bytes, method: str, path: str) -> Any:
    """A JSON answer (or line), or a SandboxdError naming what came instead: whatever
    answers in the server's place (a proxy's HTML page, a cut line) is not a result."""
    try:
        return json.loads(raw)
    except ValueError:
        head = raw[:80].decode("utf-8", "replace")
        raise SandboxdError(0, f"{method} {path}: the answer is not JSON: {head!r}",
                            method=method, path=path) from None


def _repo_path(repo: str) -> str:
    parts = repo.split("/")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"repo must be 'owner/name', not {repo!r}")
    return "/".join(urllib.parse.quote(p, safe="") for p in parts)


def split_ref(spec: str) -> Tuple[str, Optional[str]]:
    """'owner/name@ref' as (repo, ref)."""
    repo, _, ref = spec.partition("@")
    return repo, ref or None
