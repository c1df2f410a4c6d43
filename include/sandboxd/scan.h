/* scan.h: the secret scanner for pushed blobs (SPEC §5.4 push protection). Pure: no I/O,
 * no allocation, linear time in the bytes scanned.
 *
 * The rules (public, after gitleaks' rule set); "not preceded or followed by an
 * alphanumeric character" is abbreviated "bounded":
 *   "private key"        a PEM or PGP armour header `-----BEGIN ` + up to 100 characters of
 *                        [A-Z0-9 _-] + `PRIVATE KEY-----` or `PRIVATE KEY BLOCK-----` (so
 *                        plain, RSA, EC, DSA, OPENSSH, ENCRYPTED and PGP keys), that opens a
 *                        key: followed by one or two line breaks (LF, CRLF, or their escaped
 *                        forms `\n`, `\r\n` as JSON and source strings hold them; blanks
 *                        around them allowed, up to 64 each) and then a base64 or armour
 *                        header character [A-Za-z0-9+/], or (a key kept on one line) by
 *                        up to 64 blanks and 32 base64 characters. A header quoted alone,
 *                        as code and documentation quote it, is not a hit.
 *   "AWS access key id"  bounded (AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}, except the
 *                        documentation's example ids, which end in "EXAMPLE".
 *   "GitHub token"       bounded gh[pousr]_[A-Za-z0-9]{36} or github_pat_[A-Za-z0-9_]{82}.
 *   "sandboxd token"     bounded dfy_|djt_|dst_ + 42 base62 characters whose checksum is
 *                        valid (token_classify): a token with a wrong checksum, as tests and
 *                        docs write them, is not a hit.
 *
 * Binary blobs are skipped as git decides: a NUL byte in the first SCAN_BINARY_PROBE bytes.
 * Only secrets that start in the first SCAN_MAX_BYTES bytes are found (a secret may run past
 * that offset); the rest of a larger blob is not scanned, so the work per blob is bounded. */
#ifndef SANDBOXD_SCAN_H
#define SANDBOXD_SCAN_H
#include <stddef.h>

#define SCAN_MAX_BYTES ((size_t)32 << 20)
#define SCAN_BINARY_PROBE 8000

/* What was found and where, never the secret itself (nor its offset or length). */
struct scan_hit {
	const char *rule;  /* a static string naming the rule, e.g. "AWS access key id" */
	size_t line;       /* 1-based line on which the secret starts */
};

/* 1 if data[0..n) is binary (a NUL byte in its first SCAN_BINARY_PROBE bytes), 0 if not. */
int scan_is_binary(const unsigned char *data, size_t n);

/* Scans data[0..n) (data may be NULL when n is 0). Returns 1 if a secret was found, with
 * *hit describing the one that starts first; 0 if none was found (also for binary and empty
 * blobs), with *hit = {NULL, 0}. hit may be NULL when only the answer matters. */
int scan_buffer(const unsigned char *data, size_t n, struct scan_hit *hit);

#endif
