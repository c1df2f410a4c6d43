"""The Python SDK against a real stack (tests/integration/t_sdk_python.sh sets it up).

Environment: SANDBOXD_URL, SANDBOXD_TOKEN (a write token of SDK_TEST_OWNER), SDK_TEST_REPO
("owner/name", a private repository with a file x holding "x" on main), and
SDK_TEST_OTHER_TOKEN (another writer of the repository).
"""
import io
import os
import threading
import unittest
import http.server

from sandboxd import Client, ExecResult, Sandbox, SandboxdError, split_ref

REPO = os.environ.get("SDK_TEST_REPO", "")
OTHER = os.environ.get("SDK_TEST_OTHER_TOKEN", "")


def refused(test, fn, status, message):
    """fn() raises SandboxdError with exactly this status and text."""
    with test.assertRaises(SandboxdError) as cm:
        fn()
    test.assertEqual((cm.exception.status, cm.exception.message), (status, message))
    return cm.exception


class T1Client(unittest.TestCase):
    def test_env_and_arguments(self):
        c = Client()
        self.assertEqual(c.url, os.environ["SANDBOXD_URL"].rstrip("/"))
        self.assertNotIn(c.token, repr(c))
        with self.assertRaisesRegex(ValueError, "no token: pass token= or set SANDBOXD_TOKEN"):
            env = dict(os.environ)
            try:
                del os.environ["SANDBOXD_TOKEN"]
                Client()
            finally:
                os.environ.clear()
                os.environ.update(env)
        with self.assertRaisesRegex(ValueError, "url must be http:// or https://"):
            Client(url="ftp://x", token="t")

    def test_user(self):
        self.assertEqual(Client().user()["login"], REPO.split("/")[0])

    def test_bad_token(self):
        refused(self, lambda: Client(token="dfy_nothing").user(), 401, "bad credentials")

    def test_repo(self):
        self.assertEqual(Client().repo(REPO)["full_name"], REPO)
        refused(self, lambda: Client().repo(REPO + "-none"), 404, "repository not found")
        with self.assertRaisesRegex(ValueError, "repo must be 'owner/name'"):
            Client().repo("nope")

    def test_create_repo(self):
        import uuid
        name = "made-" + uuid.uuid4().hex[:8]
        r = Client().create_repo(name)
        self.assertEqual((r["full_name"], r["visibility"]), (f"{REPO.split('/')[0]}/{name}", "private"))
        refused(self, lambda: Client().create_repo(REPO.split("/")[1]), 409,
                f"repository {REPO} already exists")

    def test_git_url(self):
        g = Client().git_url(REPO, scopes=["git:read"], ttl=60)
        self.assertRegex(g["url"], r"^https?://")
        self.assertIn(f"/{REPO}.git", g["url"])
        import subprocess    # the URL is one git uses as it is
        out = subprocess.run(["git", "ls-remote", g["url"], "main"], capture_output=True, text=True,
                             timeout=60, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
        self.assertEqual((out.returncode, out.stdout.endswith("\trefs/heads/main\n")), (0, True), out.stderr)
        refused(self, lambda: Client().git_url(REPO, scopes=["git:read"], ttl=7200), 400,
                "field 'ttl' must be an integer between 1 and 3600")

    def test_split_ref(self):
        self.assertEqual(split_ref("o/r@v1"), ("o/r", "v1"))
        self.assertEqual(split_ref("o/r"), ("o/r", None))

    def test_no_server(self):
        e = refused_any(self, lambda: Client(url="http://127.0.0.1:9", token="t").user())
        self.assertEqual(e.status, 0)
        self.assertIn("GET /api/v3/user", e.message)


def refused_any(test, fn):
    with test.assertRaises(SandboxdError) as cm:
        fn()
    return cm.exception


class T2Retries(unittest.TestCase):
    """429 and 503 tried again after Retry-After, a bounded number of times: a server of the
    test's own, since the stack cannot be made to answer 503 on demand."""

    def serve(self, answers):
        calls = []

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                calls.append(self.path)
                status, body, headers = answers[min(len(calls), len(answers)) - 1]
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.HTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return Client(url=f"http://127.0.0.1:{srv.server_port}", token="t"), calls

    def test_retried_then_answered(self):
        busy = (429, b'{"error":"too many execs running in this sandbox (16)"}', {"Retry-After": "0"})
        c, calls = self.serve([busy, (503, b'{"message":"database unavailable"}', {"Retry-After": "0"}),
                               (200, b'{"login":"x"}', {})])
        self.assertEqual(c.user(), {"login": "x"})
        self.assertEqual(len(calls), 3)

    def test_gives_up(self):
        c, calls = self.serve([(503, b'{"message":"docker unavailable"}', {"Retry-After": "0"})])
        e = refused(self, c.user, 503, "docker unavailable")
        self.assertEqual(e.retry_after, 0.0)
        self.assertEqual(len(calls), 4)    # the call and 3 more

    def test_not_json(self):
        c, _ = self.serve([(200, b"<html>a proxy's page</html>", {})])
        e = refused_any(self, c.user)
        self.assertEqual(e.status, 0)
        self.assertEqual(e.message, "GET /api/v3/user: the answer is not JSON: \"<html>a proxy's page</html>\"")

    def test_no_retry_of_other_errors(self):
        c, calls = self.serve([(404, b'{"message":"repository not found"}', {})])
        refused(self, lambda: c.repo("a/b"), 404, "repository not found")
        self.assertEqual(len(calls), 1)


class T3Sandbox(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sb = Sandbox.create(REPO)

    @classmethod
    def tearDownClass(cls):
        cls.sb.close()

    def test_created(self):
        self.assertRegex(self.sb.id, r"^sb_[0-9a-f]{24}$")
        self.assertEqual(self.sb.state, "ready")
        self.assertEqual(self.sb.info["ref"], "main")

    def test_create_refused(self):
        refused(self, lambda: Sandbox.create(REPO, ref="no-such-ref"), 422, "unknown ref")
        refused(self, lambda: Sandbox.create(REPO, image="no-such-image"), 422, "unknown image")
        refused(self, lambda: Sandbox.create(REPO + "-none"), 404, "repository not found")

    def test_exec(self):
        r = self.sb.exec("cat x; echo to-err >&2; exit 3")
        self.assertIsInstance(r, ExecResult)
        self.assertEqual((r.exit_code, r.stdout, r.stderr, r.timed_out, r.truncated),
                         (3, "x\n", "to-err\n", False, False))
        self.assertGreaterEqual(r.duration_ms, 0)

    def test_exec_cwd_env_timeout(self):
        r = self.sb.exec('pwd; echo "$GREETING"', cwd="/tmp", env={"GREETING": "hi there"})
        self.assertEqual(r.stdout, "/tmp\nhi there\n")
        r = self.sb.exec("sleep 30", timeout_ms=1000)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.exit_code, 124)
        refused(self, lambda: self.sb.exec("true", cwd="no-such-dir"), 400,
                "no such directory: no-such-dir")

    def test_exec_stream(self):
        events = list(self.sb.exec_stream("echo one; sleep 0.3; echo two >&2; echo three; exit 5"))
        kinds = [e.kind for e in events]
        self.assertEqual(kinds[-1], "result")
        res = events[-1].result
        self.assertEqual((res.exit_code, res.stdout, res.stderr), (5, "one\nthree\n", "two\n"))
        self.assertEqual("".join(e.text for e in events if e.kind == "stdout"), "one\nthree\n")

    def test_detached(self):
        d = self.sb.start("echo a; sleep 1; echo b; exit 7")
        self.assertRegex(d.id, r"^ex_[0-9a-f]{24}$")
        r = d.wait(timeout=60)
        self.assertEqual((r.exit_code, r.stdout), (7, "a\nb\n"))
        again = d.read(0, 0)
        self.assertEqual((again.state, again.stdout, again.stdout_offset), ("exited", "a\nb\n", 4))
        self.assertIn(d.id, [x["execId"] for x in self.sb.execs()])
        long = self.sb.start("sleep 300")
        long.kill("KILL")
        r = long.wait(timeout=60)
        self.assertEqual(r.exit_code, 137)
        refused(self, lambda: self.sb.client.call("GET", f"{self.sb.path}/execs/ex_{'0' * 24}"),
                404, f"no such exec: ex_{'0' * 24}")

    def test_files(self):
        f = self.sb.files
        self.assertEqual(f.write("dir/a b.txt", "hello\n")["size"], 6)
        self.assertEqual(f.read_text("dir/a b.txt"), "hello\n")
        blob = bytes(range(256)) * 4
        f.write("/tmp/blob.bin", blob, mode=0o755)
        self.assertEqual(f.read("/tmp/blob.bin"), blob)
        self.assertEqual(self.sb.exec("stat -c %a /tmp/blob.bin").stdout, "755\n")
        self.assertEqual(f.read_b64("dir/a b.txt"), b"hello\n")
        names = [(e["name"], e["type"]) for e in f.list("dir")]
        self.assertEqual(names, [("a b.txt", "file")])
        f.remove("dir", recursive=True)
        refused(self, lambda: f.read("dir/a b.txt"), 404, "no such file: dir/a b.txt")
        refused(self, lambda: f.list("nope"), 404, "no such file: nope")

    def test_upload_download(self):
        data = os.urandom(3 << 20)
        self.assertEqual(self.sb.files.upload("big.bin", io.BytesIO(data), len(data))["size"], len(data))
        out = io.BytesIO()
        self.assertEqual(self.sb.files.download("big.bin", out), len(data))
        self.assertEqual(out.getvalue(), data)

    def test_keepalive_idle_preview(self):
        self.sb.keepalive()
        self.assertIn("idle_stop_at", self.sb.set_idle_timeout(600))
        refused(self, lambda: self.sb.set_idle_timeout(5), 400,
                "field 'idle_timeout_seconds' must be an integer between 60 and 86400")
        p = self.sb.preview(3000)
        self.assertEqual(p["port"], 3000)
        self.assertIn(p["previewId"], [x["previewId"] for x in self.sb.previews()])
        self.sb.delete_preview(p["previewId"])
        refused(self, lambda: self.sb.preview(0), 400,
                "field 'port' must be an integer between 1 and 65535")

    def test_connect_and_list(self):
        again = Sandbox.connect(self.sb.id, REPO)
        self.assertEqual((again.id, again.state), (self.sb.id, "ready"))
        self.assertIn(self.sb.id, [s["id"] for s in Sandbox.list(REPO)])
        refused(self, lambda: Sandbox.connect("sb_" + "0" * 24, REPO), 404, "sandbox not found")
        by_id = Sandbox.connect(self.sb.id)
        self.assertEqual((by_id.repo, by_id.path), (REPO, self.sb.path))
        self.assertEqual(by_id.exec("echo by-id").stdout, "by-id\n")
        refused(self, lambda: Sandbox.connect("sb_" + "0" * 24), 404, "sandbox not found")

    def test_mine(self):
        ready = list(Sandbox.mine("ready", per_page=1))
        self.assertIn(self.sb.id, [s["id"] for s in ready])
        self.assertTrue(all(s["state"] == "ready" and s["repository"] == REPO for s in ready))
        self.assertNotIn(self.sb.id, [s["id"] for s in Sandbox.mine("closed")])
        refused(self, lambda: list(Sandbox.mine("running")), 422,
                "query 'state' must be one of starting, ready, closed, stopped, failed")
        if OTHER:
            refused(self, lambda: Sandbox.connect(self.sb.id, REPO, token=OTHER), 403,
                    "not your sandbox")


class T4Close(unittest.TestCase):
    def test_context_manager_closes(self):
        with Sandbox.create(REPO) as sb:
            self.assertEqual(sb.exec("echo in").stdout, "in\n")
        self.assertEqual(sb.refresh()["state"], "closed")
        refused(self, lambda: sb.exec("true"), 410, "sandbox is closed")
        sb.close()    # again: not an error


if __name__ == "__main__":
    unittest.main()
