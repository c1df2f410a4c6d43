#!/usr/bin/env node
// giturl.mjs: an owner-signed sandboxd git URL made with jose (npm), no sandboxd code involved.
//
// The same claims as `sandboxctl git-url` (README, "Git URLs"): an ES256 JWT whose header
// names the key by its RFC 7638 thumbprint, carried as the password of the URL.
//
//   node examples/giturl.mjs kid        --key KEY.pem
//   node examples/giturl.mjs public-key --key KEY.pem           # PEM for POST /user/keys
//   node examples/giturl.mjs proof      --key KEY.pem --login LOGIN
//   node examples/giturl.mjs url        --key KEY.pem --repo OWNER/NAME \
//       [--scope git:read|git:write]... [--ttl SECONDS] [--kind normal|ephemeral] \
//       [--policy 'PATTERN=no-push|no-force-push[,...]']... [--url BASE] [--issued-at UNIX]
//
// KEY.pem is a P-256 private key (PKCS#8 or SEC1 PEM). `npm ci` in examples/ installs the
// pinned jose (package-lock.json).
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SignJWT, exportJWK, calculateJwkThumbprint } from 'jose';

const AUDIENCE = 'sandboxd';                        // a git URL's aud
const PROOF_AUDIENCE = 'sandboxd:key-registration'; // a key registration proof's aud
const PROOF_TTL = 300;                              // the longest proof the service takes
const MAX_TTL = 3600;                               // the longest git URL it takes
const OPS = ['no-push', 'no-force-push'];

function die(msg) {
  process.stderr.write(`giturl.mjs: ${msg}\n`);
  process.exit(2);
}

const [cmd, ...rest] = process.argv.slice(2);
if (!['kid', 'public-key', 'proof', 'url'].includes(cmd))
  die('usage: giturl.mjs kid|public-key|proof|url --key KEY.pem [...] (see the top of this file)');
const options = {
  key: { type: 'string' }, login: { type: 'string' }, repo: { type: 'string' },
  scope: { type: 'string', multiple: true }, ttl: { type: 'string', default: '900' },
  kind: { type: 'string', default: 'normal' }, policy: { type: 'string', multiple: true },
  url: { type: 'string' }, 'issued-at': { type: 'string' },
};
let a;
try {
  a = parseArgs({ args: rest, options }).values;
} catch (err) {
  die(err.message);
}
a.url ??= process.env.SANDBOXD_PUBLIC_URL;
if (!a.key) die('--key is required');

const key = createPrivateKey(readFileSync(a.key));
if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails.namedCurve !== 'prime256v1')
  die(`${a.key} is not a P-256 private key`);
const jwk = await exportJWK(createPublicKey(key));
const kid = await calculateJwkThumbprint(jwk, 'sha256'); // RFC 7638
// jose's ES256 is the JOSE form: SHA-256, signature as raw R||S (64 bytes), base64url.
const sign = (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid }).sign(key);
const now = Math.floor(Date.now() / 1000);

if (cmd === 'kid') {
  console.log(kid);
} else if (cmd === 'public-key') {
  process.stdout.write(createPublicKey(key).export({ type: 'spki', format: 'pem' }));
} else if (cmd === 'proof') {
  // POST /api/v3/user/keys {public_key, proof}: proof of the private half, for LOGIN
  if (!a.login) die('proof needs --login');
  console.log(await sign({ aud: PROOF_AUDIENCE, sub: a.login, iat: now, exp: now + PROOF_TTL }));
} else {
  const m = /^([^/]+)\/([^/]+)$/.exec(a.repo ?? '');
  if (!m) die('--repo must be OWNER/NAME');
  const ttl = Number(a.ttl);
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL) die(`--ttl must be 1 to ${MAX_TTL} seconds`);
  if (!/^https?:\/\//.test(a.url ?? '')) die("--url (or SANDBOXD_PUBLIC_URL) must be the service's http(s) URL");
  if (!['normal', 'ephemeral'].includes(a.kind)) die('--kind must be normal or ephemeral');
  const iat = a['issued-at'] === undefined ? now : Number(a['issued-at']);
  if (!Number.isInteger(iat) || iat < 0) die('--issued-at must be a Unix time');
  const given = a.scope ?? ['git:read'];
  if (given.some((s) => s !== 'git:read' && s !== 'git:write')) die('--scope must be git:read or git:write');
  const claims = {
    iss: m[1], aud: AUDIENCE, repo: a.repo,
    scopes: ['git:read', 'git:write'].filter((s) => given.includes(s)),
    kind: a.kind, iat, exp: iat + ttl,
  };
  const policies = (a.policy ?? []).map((p) => {
    const eq = p.lastIndexOf('=');
    const ops = p.slice(eq + 1).split(',');
    if (eq < 1 || ops.some((op) => !OPS.includes(op))) die('--policy must be PATTERN=no-push|no-force-push[,...]');
    return { pattern: p.slice(0, eq), ops: OPS.filter((op) => ops.includes(op)) };
  });
  if (policies.length) claims.ref_policies = policies; // the first matching pattern decides
  const [proto, base] = a.url.split('://');
  console.log(`${proto}://x-token:${await sign(claims)}@${base.replace(/\/+$/, '')}/${a.repo}.git`);
}
