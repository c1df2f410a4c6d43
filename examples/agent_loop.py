#!/usr/bin/python3
"""agent_loop.py: an agent's loop with the Python SDK (clients/python).

    SANDBOXD_URL=http://127.0.0.1:8080 SANDBOXD_TOKEN=dfy_… \\
        python3 examples/agent_loop.py OWNER/NAME [BRANCH [NEW_BRANCH]]

(or AGENT_REPO, AGENT_BRANCH, AGENT_NEW_BRANCH in the environment; AGENT_TEST_CMD is the
test command, default `bash test.sh`). One trip: a sandbox at BRANCH, the tests run, a fix
written with the files API, the tests run again, the fix committed and pushed to
NEW_BRANCH from inside the sandbox, the compare BRANCH...NEW_BRANCH printed, the sandbox
closed by the `with` block (also when a step fails). Exit 0 when the fix passed and was
pushed.

The "model" is a stand-in: it reads lines `FAIL <path>: want '<text>'` in the failing
output and writes <text> to <path>. A real agent asks its model for the patch there.
"""
import os
import re
import sys
import time
import urllib.parse

# The SDK straight from this clone (standard library only, nothing to install). With the
# package installed (`pip install --no-index --no-build-isolation clients/python`, see its
# README), drop this line: `from sandboxd import …` finds it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
from sandboxd import Client, Sandbox, SandboxdError  # noqa: E402

args = sys.argv[1:]
repo = args[0] if len(args) > 0 else os.environ.get("AGENT_REPO")
branch = args[1] if len(args) > 1 else os.environ.get("AGENT_BRANCH", "main")
new_branch = args[2] if len(args) > 2 else os.environ.get("AGENT_NEW_BRANCH",
                                                         f"agent/fix-{int(time.time() * 1000)}")
test_cmd = os.environ.get("AGENT_TEST_CMD", "bash test.sh")
if not repo:
    sys.exit("usage: agent_loop.py OWNER/NAME [BRANCH [NEW_BRANCH]] (SANDBOXD_URL, SANDBOXD_TOKEN set)")


def propose_fix(output):
    """The stand-in model: the failing output in, the files to write out [(path, text)]."""
    return [(m[1], m[2] + "\n") for m in re.finditer(r"^FAIL (\S+): want '(.*)'$", output, re.M)]


def run_tests(sb):
    """Runs the tests and says how they went; a non-zero exit is a result, never raised."""
    r = sb.exec(test_cmd, timeout_ms=120_000)          # cwd: /workspace/repo
    print(f"tests: {'passed' if r.exit_code == 0 else 'failed'} (exit {r.exit_code})")
    for line in (r.stdout + r.stderr).rstrip().split("\n"):
        print(f"  | {line}")
    return r


def fix_and_push(client, sb):
    first = run_tests(sb)
    if first.exit_code == 0:
        print("nothing to fix")
        return
    fix = propose_fix(first.stdout + first.stderr)
    if not fix:
        raise RuntimeError("the model had no fix for this output")
    for path, text in fix:
        sb.files.write(path, text)                  # relative to /workspace/repo
        print(f"fix: wrote {path}")
    if run_tests(sb).exit_code != 0:
        raise RuntimeError("the tests still fail after the fix")

    # Commit and push from inside: the sandbox's git credential pushes as you, under the
    # repository's ref policies. Each exec is its own `bash -c`; env= passes the author
    # and the branch name (no quoting of our strings into the command line).
    env = {"GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "agent@example.test",
           "GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "agent@example.test",
           "NEW_BRANCH": new_branch}
    push = sb.exec("git add -A && git commit -qm 'Fix the failing tests' && "
                   'git push -q origin "HEAD:refs/heads/$NEW_BRANCH" && git rev-parse HEAD',
                   env=env)
    if push.exit_code != 0:
        raise RuntimeError(f"commit or push failed: {push.stderr.strip()}")
    print(f"pushed {new_branch} at {push.stdout.strip()}")

    # What a reviewer sees: the new branch against the one the sandbox started from.
    # Client.call reaches any route of the API guide (here docs/api/forge.md's compare).
    q = urllib.parse.quote
    cmp = client.call("GET", f"/api/v3/repos/{q(repo, safe='/')}/compare/"
                             f"{q(branch, safe='/')}...{q(new_branch, safe='/')}")
    print(f"compare {branch}...{new_branch}: {cmp['status']}, ahead by {cmp['ahead_by']}, "
          f"behind by {cmp['behind_by']}, {len(cmp['files'])} file(s) changed")
    for c in cmp["commits"]:
        print(f"  commit {c['sha'][:12]} {c['commit']['message'].splitlines()[0]}")
    for f in cmp["files"]:
        print(f"  {f['status']} {f['filename']} +{f['additions']} -{f['deletions']}")


def agent_loop(client):
    # The repository is cloned at `branch` into /workspace/repo before the first exec runs;
    # leaving the `with` block closes the sandbox, whatever happened inside.
    with Sandbox.create(repo, ref=branch, client=client) as sb:
        print(f"sandbox {sb.id} on {repo} at {branch}")
        fix_and_push(client, sb)
    print(f"closed {sb.id}")


try:
    agent_loop(Client())        # URL and token from SANDBOXD_URL and SANDBOXD_TOKEN
except SandboxdError as e:
    # A refusal of the service carries its status and its text, as the API guide gives it.
    sys.exit(f"agent-loop: {e.status} {e.message}")
except (RuntimeError, ValueError) as e:
    sys.exit(f"agent-loop: {e}")
