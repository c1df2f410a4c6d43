#!/usr/bin/python3
"""giturl.py: an owner-signed sandboxd git URL made with PyJWT, no sandboxd code involved.

The same claims as `sandboxctl git-url` (README, "Git URLs"): an ES256 JWT whose header
names the key by its RFC 7638 thumbprint, carried as the password of the URL.

    python3 examples/giturl.py kid        --key KEY.pem
    python3 examples/giturl.py public-key --key KEY.pem           # PEM for POST /user/keys
    python3 examples/giturl.py proof      --key KEY.pem --login LOGIN
    python3 examples/giturl.py url        --key KEY.pem --repo OWNER/NAME \\
        [--scope git:read|git:write]... [--ttl SECONDS] [--kind normal|ephemeral] \\
        [--policy 'PATTERN=no-push|no-force-push[,...]']... [--url BASE] [--issued-at UNIX]

KEY.pem is a P-256 private key (PKCS#8 or SEC1 PEM): `openssl genpkey -algorithm EC
-pkeyopt ec_paramgen_curve:P-256 -out KEY.pem` or `sandboxctl key generate --out KEY.pem`.
Needs Debian's python3-jwt and python3-cryptography (run it with /usr/bin/python3).
"""
import argparse
import base64
import hashlib
import json
import os
import sys
import time

import jwt  # PyJWT
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

AUDIENCE = "sandboxd"                          # a git URL's aud
PROOF_AUDIENCE = "sandboxd:key-registration"   # a key registration proof's aud
PROOF_TTL = 300                                # the longest proof the service takes
MAX_TTL = 3600                                 # the longest git URL it takes
OPS = ("no-push", "no-force-push")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def load_key(path: str) -> ec.EllipticCurvePrivateKey:
    with open(path, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        sys.exit(f"giturl.py: {path} is not a P-256 private key")
    return key


def kid_of(key: ec.EllipticCurvePrivateKey) -> str:
    """RFC 7638 thumbprint: the required JWK members, sorted, no whitespace, SHA-256."""
    pub = key.public_key().public_numbers()
    jwk = {"crv": "P-256", "kty": "EC",
           "x": b64url(pub.x.to_bytes(32, "big")), "y": b64url(pub.y.to_bytes(32, "big"))}
    text = json.dumps(jwk, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(text.encode()).digest())


def sign(key, claims: dict) -> str:
    # PyJWT's ES256 is the JOSE form: SHA-256, signature as raw R||S (64 bytes), base64url.
    return jwt.encode(claims, key, algorithm="ES256", headers={"typ": "JWT", "kid": kid_of(key)})


def policy(arg: str) -> dict:
    pattern, eq, ops = arg.rpartition("=")
    given = ops.split(",")
    if not eq or not pattern or any(op not in OPS for op in given):
        raise argparse.ArgumentTypeError("must be PATTERN=no-push|no-force-push[,...]")
    return {"pattern": pattern, "ops": [op for op in OPS if op in given]}


def main() -> int:
    p = argparse.ArgumentParser(description="owner-signed sandboxd git URLs with PyJWT")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("kid", "public-key", "proof", "url"):
        s = sub.add_parser(name)
        s.add_argument("--key", required=True, help="P-256 private key, PEM")
        if name == "proof":
            s.add_argument("--login", required=True, help="the account that registers the key")
        if name == "url":
            s.add_argument("--repo", required=True, help="OWNER/NAME (OWNER: the key's account)")
            s.add_argument("--scope", action="append", choices=("git:read", "git:write"))
            s.add_argument("--ttl", type=int, default=900)
            s.add_argument("--kind", choices=("normal", "ephemeral"), default="normal")
            s.add_argument("--policy", action="append", type=policy, default=[])
            s.add_argument("--url", default=os.environ.get("SANDBOXD_PUBLIC_URL"),
                           help="the service's base URL (default $SANDBOXD_PUBLIC_URL)")
            s.add_argument("--issued-at", type=int, default=None)
    a = p.parse_args()
    key = load_key(a.key)
    now = int(time.time())

    if a.cmd == "kid":
        print(kid_of(key))
    elif a.cmd == "public-key":
        print(key.public_key().public_bytes(serialization.Encoding.PEM,
              serialization.PublicFormat.SubjectPublicKeyInfo).decode(), end="")
    elif a.cmd == "proof":
        # POST /api/v3/user/keys {public_key, proof}: proof of the private half, for LOGIN
        print(sign(key, {"aud": PROOF_AUDIENCE, "sub": a.login, "iat": now, "exp": now + PROOF_TTL}))
    else:
        owner, slash, name = a.repo.partition("/")
        if not owner or not slash or not name or "/" in name:
            p.error("--repo must be OWNER/NAME")
        if not 1 <= a.ttl <= MAX_TTL:
            p.error(f"--ttl must be 1 to {MAX_TTL} seconds")
        if not a.url or not a.url.startswith(("http://", "https://")):
            p.error("--url (or SANDBOXD_PUBLIC_URL) must be the service's http(s) URL")
        iat = now if a.issued_at is None else a.issued_at
        scopes = [s for s in ("git:read", "git:write") if s in (a.scope or ["git:read"])]
        claims = {"iss": owner, "aud": AUDIENCE, "repo": a.repo, "scopes": scopes,
                  "kind": a.kind, "iat": iat, "exp": iat + a.ttl}
        if a.policy:
            claims["ref_policies"] = a.policy   # the first matching pattern decides
        proto, _, rest = a.url.partition("://")
        print(f"{proto}://x-token:{sign(key, claims)}@{rest.rstrip('/')}/{a.repo}.git")
    return 0


if __name__ == "__main__":
    sys.exit(main())
