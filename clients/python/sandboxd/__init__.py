"""sandboxd: short-lived Linux sandboxes with a git repository cloned in them.

    from sandboxd import Sandbox
    with Sandbox.create(repo="owner/name", ref="main") as sb:
        r = sb.exec("make test", timeout_ms=600_000)
        print(r.exit_code, r.stdout)

URL and token from arguments, else $SANDBOXD_URL and $SANDBOXD_TOKEN.
"""
from .client import Client, split_ref
from .errors import SandboxdError
from .sandbox import DetachedExec, DetachedOutput, ExecResult, Files, Sandbox, StreamEvent

__all__ = ["Client", "DetachedExec", "DetachedOutput", "ExecResult", "Files", "Sandbox",
           "SandboxdError", "StreamEvent", "split_ref"]
__version__ = "0.1.0"
