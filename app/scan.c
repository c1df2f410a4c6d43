/* scan.c: finding secrets in pushed blobs, one pass, constant lookahead per position. */
#include <string.h>
#include "sandboxd/scan.h"
#include "sandboxd/token.h"
#include "sandboxd/banned.h"

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int is_upper(unsigned char c)
{
	return c >= 'A' && c <= 'Z';
}

static int is_alnum(unsigned char c)
{
	return is_digit(c) || is_upper(c) || (c >= 'a' && c <= 'z');
}

static int is_base32(unsigned char c)
{
	return is_upper(c) || (c >= '2' && c <= '7');
}

static int is_word(unsigned char c)
{
	return is_alnum(c) || c == '_';
}

static int is_base64(unsigned char c)
{
	return is_alnum(c) || c == '+' || c == '/';
}

static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* What may stand between `-----BEGIN ` and `PRIVATE KEY` (gitleaks: [ A-Z0-9_-]). */
static int is_pem_type(unsigned char c)
{
	return is_upper(c) || is_digit(c) || c == ' ' || c == '_' || c == '-';
}

/* d[i..n) starts with the string s. */
static int has(const unsigned char *d, size_t n, size_t i, const char *s)
{
	size_t len = strlen(s);

	return i <= n && n - i >= len && memcmp(d + i, s, len) == 0;
}

/* len characters of class at d[i..], all within n. */
static int run(const unsigned char *d, size_t n, size_t i, size_t len,
	       int (*cls)(unsigned char))
{
	if (i > n || n - i < len)
		return 0;
	for (size_t k = 0; k < len; k++)
		if (!cls(d[i + k]))
			return 0;
	return 1;
}

/* The secret d[i..i+len) stands alone: no alphanumeric character touches either end. */
static int bounded(const unsigned char *d, size_t n, size_t i, size_t len)
{
	return (i == 0 || !is_alnum(d[i - 1])) && (i + len >= n || !is_alnum(d[i + len]));
}

static size_t skip_blanks(const unsigned char *d, size_t n, size_t i)
{
	for (size_t k = 0; k < 64 && i < n && is_blank(d[i]); k++)
		i++;
	return i;
}

/* The length of the line break at d[i], real or escaped as in a JSON or source string. */
static size_t line_break(const unsigned char *d, size_t n, size_t i)
{
	static const char *const breaks[] = { "\n", "\r\n", "\\n", "\\r\\n" };

	for (size_t k = 0; k < sizeof(breaks) / sizeof(breaks[0]); k++)
		if (has(d, n, i, breaks[k]))
			return strlen(breaks[k]);
	return 0;
}

static int private_key(const unsigned char *d, size_t n, size_t i)
{
	size_t j = i + strlen("-----BEGIN "), k, nbreaks = 0;

	if (!has(d, n, i, "-----BEGIN "))
		return 0;
	for (k = 0; !has(d, n, j + k, "PRIVATE KEY"); k++)
		if (k == 100 || j + k >= n || !is_pem_type(d[j + k]))
			return 0;
	j += k + strlen("PRIVATE KEY");
	if (has(d, n, j, " BLOCK"))
		j += strlen(" BLOCK");
	if (!has(d, n, j, "-----"))
		return 0;
	j += strlen("-----");
	/* A key follows: one or two line breaks (PGP armour may leave a blank line), then
	 * base64 or an armour header such as "Proc-Type:" or "Version:"; or, for a key kept
	 * on one line (environment variables), a key line's worth of base64 at once. */
	for (;;) {
		size_t b;

		j = skip_blanks(d, n, j);
		b = line_break(d, n, j);
		if (!b || nbreaks == 2)
			break;
		j += b;
		nbreaks++;
	}
	if (nbreaks == 0)
		return run(d, n, j, 32, is_base64);
	return j < n && is_base64(d[j]);
}

static int aws_key_id(const unsigned char *d, size_t n, size_t i)
{
	static const char *const prefixes[] = { "AKIA", "ASIA", "ABIA", "ACCA" };
	int prefix = 0;

	if (n - i < 20 || !bounded(d, n, i, 20))
		return 0;
	for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++)
		if (has(d, n, i, prefixes[k]))
			prefix = 1;
	if (has(d, n, i, "A3T") && (is_upper(d[i + 3]) || is_digit(d[i + 3])))
		prefix = 1;
	if (!prefix || !run(d, n, i + 4, 16, is_base32))
		return 0;
	/* AKIAIOSFODNN7EXAMPLE and its kin, all over AWS's documentation. */
	return memcmp(d + i + 13, "EXAMPLE", 7) != 0;
}

static int github_token(const unsigned char *d, size_t n, size_t i)
{
	if (has(d, n, i, "github_pat_"))
		return run(d, n, i + 11, 82, is_word) && bounded(d, n, i, 93);
	return has(d, n, i, "gh") && n - i >= 4 && d[i + 2] && strchr("pousr", d[i + 2]) &&
	       d[i + 3] == '_' && run(d, n, i + 4, 36, is_alnum) && bounded(d, n, i, 40);
}

static int sandboxd_token(const unsigned char *d, size_t n, size_t i)
{
	enum token_kind kind;

	if (!(has(d, n, i, "dfy_") || has(d, n, i, "djt_") || has(d, n, i, "dst_")))
		return 0;
	if (n - i < TOKEN_LEN || !bounded(d, n, i, TOKEN_LEN))
		return 0;
	kind = token_classify((const char *)d + i, TOKEN_LEN);
	return kind == TOKEN_PERSONAL || kind == TOKEN_JOB || kind == TOKEN_SANDBOX;
}

int scan_is_binary(const unsigned char *data, size_t n)
{
	if (n == 0)
		return 0;
	return memchr(data, 0, n < SCAN_BINARY_PROBE ? n : SCAN_BINARY_PROBE) != NULL;
}

int scan_buffer(const unsigned char *data, size_t n, struct scan_hit *hit)
{
	size_t limit = n < SCAN_MAX_BYTES ? n : SCAN_MAX_BYTES, line = 1;
	const char *rule = NULL;

	if (hit) {
		hit->rule = NULL;
		hit->line = 0;
	}
	if (n == 0 || scan_is_binary(data, n))
		return 0;
	/* Every rule starts with a fixed character: one switch per byte, and each check looks
	 * at most a couple of hundred bytes ahead, so the pass is linear. */
	for (size_t i = 0; i < limit && !rule; i++) {
		switch (data[i]) {
		case '\n':
			line++;
			break;
		case '-':
			if (private_key(data, n, i))
				rule = "private key";
			break;
		case 'A':
			if (aws_key_id(data, n, i))
				rule = "AWS access key id";
			break;
		case 'g':
			if (github_token(data, n, i))
				rule = "GitHub token";
			break;
		case 'd':
			if (sandboxd_token(data, n, i))
				rule = "sandboxd token";
			break;
		}
	}
	if (!rule)
		return 0;
	if (hit) {
		hit->rule = rule;
		hit->line = line;
	}
	return 1;
}
