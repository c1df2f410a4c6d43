#!/usr/bin/env python3
"""dns_stub.py ADDR ANSWER: a DNS server on ADDR:53 (UDP) for the egress suites' own
namespace. Every question of type A is answered with ANSWER, so a test can tell that a
sandbox's query reached this resolver and came back, without any other resolver involved.
Bytes from the sandbox are only echoed inside bounds; anything malformed is dropped."""
import socket
import struct
import sys

addr, answer = sys.argv[1], socket.inet_aton(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((addr, 53))
while True:
    q, peer = s.recvfrom(512)
    if len(q) < 17:
        continue
    qid, _flags, qd = struct.unpack("!HHH", q[:6])
    end = q.find(b"\0", 12)
    if qd != 1 or end < 0 or end + 5 > len(q):
        continue
    question = q[12:end + 5]
    head = struct.pack("!HHHHHH", qid, 0x8180, 1, 1, 0, 0)
    rr = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + answer
    s.sendto(head + question + rr, peer)
