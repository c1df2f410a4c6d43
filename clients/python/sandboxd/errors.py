"""Errors of the sandboxd SDK: one class, carrying what the server said."""
from __future__ import annotations

from typing import Any, Optional


class SandboxdError(Exception):
    """A call the server refused or could not answer.

    status: the HTTP status (0 when no answer came: a connection error or a time-out).
    message: the server's text ({"error"} inside a sandbox, {"message"} outside), else why.
    body: the decoded JSON answer when there was one.
    retry_after: seconds of Retry-After when the server gave it (429, 503).
    """

    def __init__(self, status: int, message: str, body: Any = None,
                 retry_after: Optional[float] = None, method: str = "", path: str = ""):
        super().__init__(f"{status} {message}" if status else message)
        self.status = status
        self.message = message
        self.body = body
        self.retry_after = retry_after
        self.method = method
        self.path = path
