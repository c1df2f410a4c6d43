/* scan.h: the secret scanner for pushed blobs and messages (SPEC §5.4 push protection).
 * Pure: no I/O, no allocation (one fixed stack buffer for UTF-16), linear time in the bytes
 * scanned with a constant lookahead per position (at most SCAN_LOOKAHEAD bytes).
 *
 * The rules are the high-confidence ones of gitleaks' default configuration, written as our
 * own matchers: each has a fixed prefix (and a fixed structure, a checksum or both), so a
 * hit is a secret, not a guess; none needs a keyword near it or an entropy threshold.
 * scan_rule_name() lists the families; "bounded" below means that no ASCII letter or digit
 * touches the secret on that side:
 *   "private key"        `-----BEGIN ` + up to 100 of [A-Z0-9 _-] + `PRIVATE KEY-----` (or
 *                        `PRIVATE KEY BLOCK-----`) that opens a key: one or two line breaks
 *                        (LF, CRLF, or their escaped forms `\n`, `\r\n`; blanks around them,
 *                        up to 64 each), then a base64 or armour header character; or up to
 *                        64 blanks and 32 base64 characters (a key kept on one line). A
 *                        header quoted alone, as code and documentation quote it, is not a hit.
 *   "AWS access key id"  bounded (AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}, except ids
 *                        ending in "EXAMPLE" (AWS's documentation).
 *   "sandboxd token"     bounded dfy_|djt_|dst_ + 42 base62 characters whose checksum is
 *                        valid (token_classify): a wrong checksum, as tests write them, is not.
 *   and GitHub, GitLab, Slack (tokens and webhook URLs), Stripe, Google API keys, GCP
 *   service-account keys (`"private_key_id": "<40 hex>"`), npm, PyPI, Azure storage account
 *   keys (`AccountKey=<86 base64>==`), Twilio, SendGrid, OpenAI, Anthropic, Shopify,
 *   Doppler, Hugging Face, DigitalOcean, Databricks, age, Postman, Pulumi, Sentry, Linear,
 *   HashiCorp Vault, Grafana, Square, Dynatrace, PlanetScale, RubyGems, Shippo, Perplexity,
 *   Notion, Brevo, Heroku, Fly.io, Alibaba, Atlassian, 1Password, Artifactory, EasyPost and
 *   New Relic: the exact shapes are in the table at the top of scan.c.
 *
 * Every byte of a blob is scanned, binary or not: every rule is high-confidence, so a NUL
 * byte (or any other sign of a binary file) does not turn the scan off. A blob that is
 * UTF-16 (a byte-order mark, or NUL in every other byte of its start) is scanned a second
 * time as text, its code units below 128 taken as ASCII. Compressed data (gzip, zip) is
 * scanned as the bytes it is, not inflated. */
#ifndef SANDBOXD_SCAN_H
#define SANDBOXD_SCAN_H
#include <stddef.h>

/* The longest any rule looks ahead of the position where a secret starts. */
#define SCAN_LOOKAHEAD 2400

/* What was found and where, never the secret itself (nor its offset or length). */
struct scan_hit {
	const char *rule;  /* a static string naming the rule's family, e.g. "AWS access key id" */
	size_t line;       /* 1-based line on which the secret starts */
};

/* Scans data[0..n) (data may be NULL when n is 0). Returns 1 if a secret was found, with
 * *hit describing the one that starts first (in the bytes as they are; for UTF-16, a secret
 * in the decoded text is reported only when the bytes hold none); 0 if none was found (also
 * for an empty blob), with *hit = {NULL, 0}. hit may be NULL when only the answer matters. */
int scan_buffer(const unsigned char *data, size_t n, struct scan_hit *hit)
	__attribute__((warn_unused_result));

/* The scan of a window of a longer stream (scanstream.h): the first secret starting at a
 * position in [from, to) of d[0..n), d[0..from) serving only as the context before it (a
 * rule bounded on the left looks at one byte) and d[to..n) as what follows (a secret may
 * run up to SCAN_LOOKAHEAD bytes past its start: a window ending sooner than that after to
 * is taken as the stream's end). The rule's family name with *at its position, or NULL. */
const char *scan_window(const unsigned char *d, size_t n, size_t from, size_t to, size_t *at)
	__attribute__((warn_unused_result));

/* How scan_buffer decides that a blob is UTF-16 text, from its first bytes (it looks at
 * no more than SCAN_UTF16_PROBE of them): 1 little-endian, 2 big-endian, 0 neither, with
 * *skip the byte-order mark's length. */
#define SCAN_UTF16_PROBE 512
int scan_utf16_kind(const unsigned char *d, size_t n, size_t *skip)
	__attribute__((warn_unused_result));

/* The newlines in d[0..n): a hit's line is one more than those before it. */
size_t scan_lines(const unsigned char *d, size_t n);

/* The name of the i-th rule family (0-based), or NULL past the last: the strings that
 * scan_hit.rule points at. */
const char *scan_rule_name(size_t i);

#endif
