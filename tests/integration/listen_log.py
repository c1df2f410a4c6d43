#!/usr/bin/env python3
"""listen_log.py ADDR PORT LOG: a TCP listener that writes down whatever reaches it, for the
suites that show a credential going nowhere (t_save_leaks: the "elsewhere" a sandbox points
its git at). Each connection's first bytes (up to the end of the request's headers, 64 KiB
at most, two seconds at most) are appended to LOG, then a 404 closes it: a git client, a
proxy client (CONNECT or an absolute URL) and curl all show up the same way."""
import socket
import socketserver
import sys

addr, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.settimeout(2)
        data = b""
        try:
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = self.request.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        with open(log, "ab") as f:
            f.write(data + b"\n----\n")
        try:
            self.request.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        except OSError:
            pass


socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer((addr, port), Handler).serve_forever()
