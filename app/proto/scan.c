/* scan.c: finding secrets in pushed blobs: one pass over the bytes for every rule, a
 * two-byte prefilter on the rules' fixed prefixes, a constant lookahead per candidate. */
#include <stdint.h>
#include <string.h>
#include "sandboxd/proto/scan.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/common/banned.h"

/* Character classes, as bits: a segment of a rule names the union it accepts. */
enum {
	C_D = 1 << 0,       /* 0-9 */
	C_U = 1 << 1,       /* A-Z */
	C_L = 1 << 2,       /* a-z */
	C_XL = 1 << 3,      /* a-f */
	C_XU = 1 << 4,      /* A-F */
	C_US = 1 << 5,      /* _ */
	C_DASH = 1 << 6,    /* - */
	C_DOT = 1 << 7,     /* . */
	C_PLUS = 1 << 8,    /* + */
	C_SLASH = 1 << 9,   /* / */
	C_EQ = 1 << 10,     /* = */
	C_B32 = 1 << 11,    /* A-Z 2-7 (base32) */
	C_BECH = 1 << 12,   /* bech32, upper case */
	C_BLANK = 1 << 13,  /* space, tab */
};
#define ALNUM (C_D | C_U | C_L)
#define ALPHA (C_U | C_L)
#define HEXL (C_D | C_XL)
#define HEX (C_D | C_XL | C_XU)
#define WORD (ALNUM | C_US)
#define WD (WORD | C_DASH)
#define B64 (ALNUM | C_PLUS | C_SLASH)

/* One piece of a rule after its prefix: a literal, or min..max characters of a class
 * (taken greedily: rules are written so that no piece needs to give characters back). */
struct seg {
	uint16_t cls, min, max;
	const char *lit;
};

enum { LB = 1, RB = 2, NOT_EXAMPLE = 4 };

struct rule {
	unsigned char family;   /* index into families[] */
	const char *prefix;     /* at least two bytes, case-sensitive */
	unsigned flags;         /* LB: no alphanumeric before; RB: none after */
	int (*match)(const unsigned char *d, size_t n, size_t i);  /* instead of seg[] */
	struct seg seg[7];      /* up to the first empty one */
};

enum family {
	F_PEM, F_AWS, F_GITHUB, F_SANDBOXD, F_GITLAB, F_SLACK, F_SLACK_HOOK, F_STRIPE, F_GOOGLE,
	F_GCP_SA, F_NPM, F_PYPI, F_AZURE, F_TWILIO, F_SENDGRID, F_OPENAI, F_ANTHROPIC,
	F_SHOPIFY, F_DOPPLER, F_HF, F_DO, F_DATABRICKS, F_AGE, F_POSTMAN, F_PULUMI, F_SENTRY,
	F_LINEAR, F_VAULT, F_GRAFANA, F_SQUARE, F_DYNATRACE, F_PSCALE, F_RUBYGEMS, F_SHIPPO,
	F_PPLX, F_NOTION, F_BREVO, F_HEROKU, F_FLY, F_ALIBABA, F_ATLASSIAN, F_1PASSWORD,
	F_ARTIFACTORY, F_EASYPOST, F_NEWRELIC, F_COUNT
};

static const char *const families[F_COUNT] = {
	[F_PEM] = "private key", [F_AWS] = "AWS access key id", [F_GITHUB] = "GitHub token",
	[F_SANDBOXD] = "sandboxd token", [F_GITLAB] = "GitLab token",
	[F_SLACK] = "Slack token", [F_SLACK_HOOK] = "Slack webhook URL",
	[F_STRIPE] = "Stripe key", [F_GOOGLE] = "Google API key",
	[F_GCP_SA] = "GCP service account key", [F_NPM] = "npm token", [F_PYPI] = "PyPI token",
	[F_AZURE] = "Azure storage account key", [F_TWILIO] = "Twilio API key",
	[F_SENDGRID] = "SendGrid API key", [F_OPENAI] = "OpenAI API key",
	[F_ANTHROPIC] = "Anthropic API key", [F_SHOPIFY] = "Shopify token",
	[F_DOPPLER] = "Doppler token", [F_HF] = "Hugging Face token",
	[F_DO] = "DigitalOcean token", [F_DATABRICKS] = "Databricks token",
	[F_AGE] = "age secret key", [F_POSTMAN] = "Postman API key",
	[F_PULUMI] = "Pulumi token", [F_SENTRY] = "Sentry token", [F_LINEAR] = "Linear API key",
	[F_VAULT] = "HashiCorp Vault token", [F_GRAFANA] = "Grafana token",
	[F_SQUARE] = "Square token", [F_DYNATRACE] = "Dynatrace token",
	[F_PSCALE] = "PlanetScale token", [F_RUBYGEMS] = "RubyGems token",
	[F_SHIPPO] = "Shippo token", [F_PPLX] = "Perplexity API key",
	[F_NOTION] = "Notion token", [F_BREVO] = "Brevo API key",
	[F_HEROKU] = "Heroku API key", [F_FLY] = "Fly.io token",
	[F_ALIBABA] = "Alibaba access key id", [F_ATLASSIAN] = "Atlassian API token",
	[F_1PASSWORD] = "1Password service account token",
	[F_ARTIFACTORY] = "Artifactory API key", [F_EASYPOST] = "EasyPost API key",
	[F_NEWRELIC] = "New Relic key",
};

static uint16_t cls_of[256];

static int in(unsigned char c, unsigned cls)
{
	return (cls_of[c] & cls) != 0;
}

static int is_alnum(unsigned char c)
{
	return in(c, ALNUM);
}

/* d[i..n) starts with the string s. */
static int has(const unsigned char *d, size_t n, size_t i, const char *s)
{
	size_t len = strlen(s);

	return i <= n && n - i >= len && memcmp(d + i, s, len) == 0;
}

/* len characters of class cls at d[i..], all within n. */
static int run(const unsigned char *d, size_t n, size_t i, size_t len, unsigned cls)
{
	if (i > n || n - i < len)
		return 0;
	for (size_t k = 0; k < len; k++)
		if (!in(d[i + k], cls))
			return 0;
	return 1;
}

/* No alphanumeric character touches d[i..j) on either side. */
static int bounded(const unsigned char *d, size_t n, size_t i, size_t j)
{
	return (i == 0 || !is_alnum(d[i - 1])) && (j >= n || !is_alnum(d[j]));
}

static size_t skip_blanks(const unsigned char *d, size_t n, size_t i)
{
	for (size_t k = 0; k < 64 && i < n && in(d[i], C_BLANK); k++)
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

/* What may stand between `-----BEGIN ` and `PRIVATE KEY` (gitleaks: [ A-Z0-9_-]). */
static int is_pem_type(unsigned char c)
{
	return in(c, C_U | C_D | C_US | C_DASH) || c == ' ';
}

static int private_key(const unsigned char *d, size_t n, size_t i)
{
	size_t j = i + strlen("-----BEGIN "), k, nbreaks = 0;

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
		return run(d, n, j, 32, B64);
	return j < n && in(d[j], B64);
}

static int sandboxd_token(const unsigned char *d, size_t n, size_t i)
{
	enum token_kind kind;

	if (n - i < TOKEN_LEN || !bounded(d, n, i, i + TOKEN_LEN))
		return 0;
	kind = token_classify((const char *)d + i, TOKEN_LEN);
	return kind == TOKEN_PERSONAL || kind == TOKEN_JOB || kind == TOKEN_SANDBOX;
}

/* OpenAI: sk-(proj|svcacct|admin)-<58 or 74>T3BlbkFJ<58 or 74> of [A-Za-z0-9_-], or the
 * older sk-<20 alnum>T3BlbkFJ<20 alnum>; "T3BlbkFJ" is base64 of "OpenAI". */
static int openai_key(const unsigned char *d, size_t n, size_t i)
{
	static const char *const kinds[] = { "sk-proj-", "sk-svcacct-", "sk-admin-" };
	static const size_t lens[] = { 58, 74 };

	if (i > 0 && is_alnum(d[i - 1]))
		return 0;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		size_t j = i + strlen(kinds[k]);

		if (!has(d, n, i, kinds[k]))
			continue;
		for (size_t a = 0; a < 2; a++) {
			size_t m = j + lens[a];

			if (!run(d, n, j, lens[a], WD) || !has(d, n, m, "T3BlbkFJ"))
				continue;
			for (size_t b = 0; b < 2; b++)
				if (run(d, n, m + 8, lens[b], WD) &&
				    (m + 8 + lens[b] >= n || !is_alnum(d[m + 8 + lens[b]])))
					return 1;
		}
		return 0;
	}
	return run(d, n, i + 3, 20, ALNUM) && has(d, n, i + 23, "T3BlbkFJ") &&
	       run(d, n, i + 31, 20, ALNUM) && bounded(d, n, i, i + 51);
}

#define S(c, lo, hi) { (c), (lo), (hi), NULL }
#define L(s) { 0, 0, 0, (s) }
#define FIXED(f, p, c, len) { (f), (p), LB | RB, NULL, { S((c), (len), (len)) } }

static const struct rule rules[] = {
	{ F_PEM, "-----BEGIN ", 0, private_key, { { 0 } } },
	{ F_AWS, "AKIA", LB | RB | NOT_EXAMPLE, NULL, { S(C_B32, 16, 16) } },
	{ F_AWS, "ASIA", LB | RB | NOT_EXAMPLE, NULL, { S(C_B32, 16, 16) } },
	{ F_AWS, "ABIA", LB | RB | NOT_EXAMPLE, NULL, { S(C_B32, 16, 16) } },
	{ F_AWS, "ACCA", LB | RB | NOT_EXAMPLE, NULL, { S(C_B32, 16, 16) } },
	{ F_AWS, "A3T", LB | RB | NOT_EXAMPLE, NULL, { S(C_U | C_D, 1, 1), S(C_B32, 16, 16) } },
	FIXED(F_GITHUB, "ghp_", ALNUM, 36),
	FIXED(F_GITHUB, "gho_", ALNUM, 36),
	FIXED(F_GITHUB, "ghu_", ALNUM, 36),
	FIXED(F_GITHUB, "ghs_", ALNUM, 36),
	FIXED(F_GITHUB, "ghr_", ALNUM, 36),
	FIXED(F_GITHUB, "github_pat_", WORD, 82),
	{ F_SANDBOXD, "dfy_", 0, sandboxd_token, { { 0 } } },
	{ F_SANDBOXD, "djt_", 0, sandboxd_token, { { 0 } } },
	{ F_SANDBOXD, "dst_", 0, sandboxd_token, { { 0 } } },
	/* GitLab: classic tokens are 20 characters, routable ones 27 to 300 then ".xx…". */
	{ F_GITLAB, "glpat-", LB | RB, NULL, { S(WD, 20, 300) } },
	{ F_GITLAB, "gldt-", LB | RB, NULL, { S(WD, 20, 300) } },
	{ F_GITLAB, "glrt-", LB | RB, NULL, { S(WD, 20, 300) } },
	{ F_GITLAB, "glcbt-", LB | RB, NULL, { S(WD, 20, 300) } },
	{ F_GITLAB, "glft-", LB | RB, NULL, { S(WD, 20, 300) } },
	{ F_GITLAB, "glsoat-", LB | RB, NULL, { S(WD, 20, 300) } },
	{ F_GITLAB, "glffct-", LB | RB, NULL, { S(WD, 20, 300) } },
	{ F_GITLAB, "glimt-", LB | RB, NULL, { S(WD, 25, 300) } },
	{ F_GITLAB, "glagent-", LB | RB, NULL, { S(WD, 50, 300) } },
	{ F_GITLAB, "gloas-", LB | RB, NULL, { S(WD, 64, 300) } },
	FIXED(F_GITLAB, "glptt-", HEXL, 40),
	{ F_GITLAB, "GR1348941", LB | RB, NULL, { S(WD, 20, 300) } },
	/* Slack: bot, user, workspace, legacy, configuration and app-level tokens. */
	{ F_SLACK, "xoxb-", LB | RB, NULL, { S(C_D, 8, 14), L("-"), S(ALNUM | C_DASH, 10, 255) } },
	{ F_SLACK, "xoxp-", LB | RB, NULL, { S(C_D, 10, 13), L("-"), S(C_D, 10, 13), L("-"),
					     S(C_D, 10, 13), L("-"), S(ALNUM | C_DASH, 28, 34) } },
	{ F_SLACK, "xoxe-", LB | RB, NULL, { S(C_D, 1, 1), L("-"), S(ALNUM, 146, 146) } },
	{ F_SLACK, "xoxe.xoxp-", LB | RB, NULL, { S(C_D, 1, 1), L("-"), S(ALNUM, 163, 166) } },
	{ F_SLACK, "xoxe.xoxb-", LB | RB, NULL, { S(C_D, 1, 1), L("-"), S(ALNUM, 163, 166) } },
	{ F_SLACK, "xoxa-", LB | RB, NULL, { S(ALNUM | C_DASH, 8, 50) } },
	{ F_SLACK, "xoxr-", LB | RB, NULL, { S(ALNUM | C_DASH, 8, 50) } },
	{ F_SLACK, "xoxo-", LB | RB, NULL, { S(C_D, 1, 20), L("-"), S(C_D, 1, 20), L("-"),
					     S(C_D, 1, 20), L("-"), S(HEX, 1, 255) } },
	{ F_SLACK, "xoxs-", LB | RB, NULL, { S(C_D, 1, 20), L("-"), S(C_D, 1, 20), L("-"),
					     S(C_D, 1, 20), L("-"), S(HEX, 1, 255) } },
	{ F_SLACK, "xapp-", LB | RB, NULL, { S(C_D, 1, 1), L("-"), S(ALNUM, 1, 64), L("-"),
					     S(C_D, 1, 20), L("-"), S(ALNUM, 1, 128) } },
	{ F_SLACK_HOOK, "hooks.slack.com/services/", 0, NULL, { S(B64, 43, 56) } },
	{ F_SLACK_HOOK, "hooks.slack.com/workflows/", 0, NULL, { S(B64, 43, 56) } },
	{ F_SLACK_HOOK, "hooks.slack.com/triggers/", 0, NULL, { S(B64, 43, 56) } },
	/* Stripe: gitleaks takes 10 characters; real keys have 24 or more, and 10 would match
	 * names such as sk_test_validation. */
	{ F_STRIPE, "sk_live_", LB | RB, NULL, { S(ALNUM, 24, 99) } },
	{ F_STRIPE, "sk_test_", LB | RB, NULL, { S(ALNUM, 24, 99) } },
	{ F_STRIPE, "sk_prod_", LB | RB, NULL, { S(ALNUM, 24, 99) } },
	{ F_STRIPE, "rk_live_", LB | RB, NULL, { S(ALNUM, 24, 99) } },
	{ F_STRIPE, "rk_test_", LB | RB, NULL, { S(ALNUM, 24, 99) } },
	{ F_STRIPE, "rk_prod_", LB | RB, NULL, { S(ALNUM, 24, 99) } },
	FIXED(F_GOOGLE, "AIza", WD, 35),
	/* A service-account JSON file: its key id is 40 hex digits (its key is a PEM key). */
	{ F_GCP_SA, "\"private_key_id\"", 0, NULL, { S(C_BLANK, 0, 8), L(":"), S(C_BLANK, 0, 8),
						     L("\""), S(HEXL, 40, 40), L("\"") } },
	FIXED(F_NPM, "npm_", ALNUM, 36),
	{ F_PYPI, "pypi-AgEIcHlwaS5vcmc", RB, NULL, { S(WD, 50, 1000) } },
	{ F_PYPI, "pypi-AgENdGVzdC5weXBpLm9yZw", RB, NULL, { S(WD, 50, 1000) } },
	{ F_AZURE, "AccountKey=", 0, NULL, { S(B64, 86, 86), L("==") } },
	FIXED(F_TWILIO, "SK", HEX, 32),
	{ F_SENDGRID, "SG.", LB | RB, NULL, { S(WD, 22, 22), L("."), S(WD, 43, 43) } },
	{ F_OPENAI, "sk-", 0, openai_key, { { 0 } } },
	{ F_ANTHROPIC, "sk-ant-api03-", LB | RB, NULL, { S(WD, 93, 93), L("AA") } },
	{ F_ANTHROPIC, "sk-ant-admin01-", LB | RB, NULL, { S(WD, 93, 93), L("AA") } },
	FIXED(F_SHOPIFY, "shpat_", HEX, 32),
	FIXED(F_SHOPIFY, "shpca_", HEX, 32),
	FIXED(F_SHOPIFY, "shppa_", HEX, 32),
	FIXED(F_SHOPIFY, "shpss_", HEX, 32),
	FIXED(F_DOPPLER, "dp.pt.", ALNUM, 43),
	FIXED(F_DOPPLER, "dp.sa.", ALNUM, 43),
	FIXED(F_DOPPLER, "dp.ct.", ALNUM, 43),
	FIXED(F_HF, "hf_", ALPHA, 34),
	FIXED(F_HF, "api_org_", ALPHA, 34),
	FIXED(F_DO, "dop_v1_", HEXL, 64),
	FIXED(F_DO, "doo_v1_", HEXL, 64),
	FIXED(F_DO, "dor_v1_", HEXL, 64),
	FIXED(F_DATABRICKS, "dapi", HEXL, 32),
	{ F_AGE, "AGE-SECRET-KEY-1", RB, NULL, { S(C_BECH, 58, 58) } },
	{ F_POSTMAN, "PMAK-", LB | RB, NULL, { S(HEX, 24, 24), L("-"), S(HEX, 34, 34) } },
	FIXED(F_PULUMI, "pul-", HEXL, 40),
	FIXED(F_SENTRY, "sntryu_", HEXL, 64),
	{ F_SENTRY, "sntrys_eyJpYXQiO", LB, NULL, { S(B64 | C_EQ | C_US, 60, 1000) } },
	FIXED(F_LINEAR, "lin_api_", ALNUM, 40),
	{ F_VAULT, "hvs.", LB | RB, NULL, { S(WD, 90, 120) } },
	{ F_VAULT, "hvb.", LB | RB, NULL, { S(WD, 138, 300) } },
	{ F_GRAFANA, "glsa_", LB | RB, NULL, { S(ALNUM, 32, 32), L("_"), S(HEX, 8, 8) } },
	{ F_GRAFANA, "glc_", LB | RB, NULL, { S(B64, 32, 400), S(C_EQ, 0, 3) } },
	{ F_GRAFANA, "eyJrIjoi", LB | RB, NULL, { S(ALNUM, 70, 400), S(C_EQ, 0, 3) } },
	{ F_SQUARE, "sq0atp-", LB | RB, NULL, { S(WD, 22, 60) } },
	FIXED(F_SQUARE, "sq0csp-", WD, 43),
	{ F_DYNATRACE, "dt0c01.", LB | RB, NULL, { S(ALNUM, 24, 24), L("."), S(ALNUM, 64, 64) } },
	{ F_PSCALE, "pscale_tkn_", LB | RB, NULL, { S(WD | C_EQ | C_DOT, 32, 64) } },
	{ F_PSCALE, "pscale_pw_", LB | RB, NULL, { S(WD | C_EQ | C_DOT, 32, 64) } },
	{ F_PSCALE, "pscale_oauth_", LB | RB, NULL, { S(WD | C_EQ | C_DOT, 32, 64) } },
	FIXED(F_RUBYGEMS, "rubygems_", HEXL, 48),
	FIXED(F_SHIPPO, "shippo_live_", HEX, 40),
	FIXED(F_SHIPPO, "shippo_test_", HEX, 40),
	FIXED(F_PPLX, "pplx-", ALNUM, 48),
	{ F_NOTION, "ntn_", LB | RB, NULL, { S(C_D, 11, 11), S(ALNUM, 35, 35) } },
	{ F_BREVO, "xkeysib-", LB | RB, NULL, { S(HEXL, 64, 64), L("-"), S(ALNUM, 16, 16) } },
	FIXED(F_HEROKU, "HRKU-AA", WD, 58),
	FIXED(F_FLY, "fo1_", WD, 43),
	FIXED(F_ALIBABA, "LTAI", ALNUM, 20),
	FIXED(F_ATLASSIAN, "ATATT3", WD | C_EQ, 186),
	{ F_1PASSWORD, "ops_eyJ", LB, NULL, { S(B64, 250, 2000), S(C_EQ, 0, 3) } },
	FIXED(F_ARTIFACTORY, "AKCp", ALNUM, 69),
	FIXED(F_EASYPOST, "EZAK", ALNUM, 54),
	FIXED(F_EASYPOST, "EZTK", ALNUM, 54),
	FIXED(F_NEWRELIC, "NRAK-", ALNUM, 27),
	FIXED(F_NEWRELIC, "NRII-", ALNUM | C_DASH, 32),
	FIXED(F_NEWRELIC, "NRJS-", HEXL, 19),
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

/* The prefilter: a bit per pair of bytes that starts some rule's prefix (8 KiB, so it
 * stays in the first-level cache), and the rules bucketed by their first byte. */
static unsigned char bigram[65536 / 8];
static unsigned char order[NRULES];
static unsigned char second[NRULES];   /* the second byte of order[k]'s prefix */
static unsigned char plen[NRULES];     /* the length of rules[r]'s prefix */
static unsigned short bstart[257];
static int ready;

static void init(void)
{
	size_t k = 0;

	for (int c = 0; c < 256; c++) {
		uint16_t m = 0;

		if (c >= '0' && c <= '9')
			m |= C_D;
		if (c >= 'A' && c <= 'Z')
			m |= C_U | C_B32;
		if (c >= 'a' && c <= 'z')
			m |= C_L;
		if (c >= 'a' && c <= 'f')
			m |= C_XL;
		if (c >= 'A' && c <= 'F')
			m |= C_XU;
		if (c >= '2' && c <= '7')
			m |= C_B32;
		if (c && strchr("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", c))
			m |= C_BECH;
		m |= c == '_' ? C_US : c == '-' ? C_DASH : c == '.' ? C_DOT : c == '+' ? C_PLUS
		     : c == '/' ? C_SLASH : c == '=' ? C_EQ : c == ' ' || c == '\t' ? C_BLANK : 0;
		cls_of[c] = m;
	}
	for (int c = 0; c < 256; c++) {
		bstart[c] = (unsigned short)k;
		for (size_t r = 0; r < NRULES; r++) {
			const unsigned char *p = (const unsigned char *)rules[r].prefix;
			unsigned x = p[0] | (unsigned)p[1] << 8;

			if (p[0] != c)
				continue;
			plen[r] = (unsigned char)strlen(rules[r].prefix);
			second[k] = p[1];
			order[k++] = (unsigned char)r;
			bigram[x >> 3] |= (unsigned char)(1u << (x & 7));
		}
	}
	bstart[256] = (unsigned short)k;
	ready = 1;
}

/* Rule r matches at d[i] (its prefix's first two bytes already do). */
static int rule_at(size_t ri, const unsigned char *d, size_t n, size_t i)
{
	const struct rule *r = &rules[ri];
	size_t j = i + plen[ri];

	if (n - i < plen[ri] || memcmp(d + i + 2, r->prefix + 2, plen[ri] - 2u))
		return 0;
	if (r->match)
		return r->match(d, n, i);
	if ((r->flags & LB) && i > 0 && is_alnum(d[i - 1]))
		return 0;
	for (const struct seg *s = r->seg; s < r->seg + 7 && (s->lit || s->max); s++) {
		size_t k = 0;

		if (s->lit) {
			if (!has(d, n, j, s->lit))
				return 0;
			j += strlen(s->lit);
			continue;
		}
		while (k < s->max && j + k < n && in(d[j + k], s->cls))
			k++;
		if (k < s->min)
			return 0;
		j += k;
	}
	if ((r->flags & RB) && j < n && is_alnum(d[j]))
		return 0;
	/* AKIAIOSFODNN7EXAMPLE and its kin, all over AWS's documentation. */
	return !(r->flags & NOT_EXAMPLE) || j - i < 7 || memcmp(d + j - 7, "EXAMPLE", 7) != 0;
}

/* 1 when the two bytes at p start some rule's prefix. */
static inline unsigned pair(const unsigned char *p)
{
	unsigned x = p[0] | (unsigned)p[1] << 8;

	return (bigram[x >> 3] >> (x & 7)) & 1u;
}

/* The first rule matching at a position in [from, to) of d[0..n); *at is that position. */
static const struct rule *scan_span(const unsigned char *d, size_t n, size_t from, size_t to,
				    size_t *at)
{
	size_t end = n < 2 ? 0 : to < n - 1 ? to : n - 1;  /* a pair needs d[i + 1] */

	for (size_t i = from; i < end; i++) {
		unsigned x;

		/* Four positions a step while none starts a prefix's first two bytes: nearly
		 * every position of ordinary text, and the loads of one step do not wait on
		 * each other. */
		while (i + 4 <= end && !(pair(d + i) | pair(d + i + 1) | pair(d + i + 2) |
					 pair(d + i + 3)))
			i += 4;
		if (i >= end)
			break;
		x = d[i] | (unsigned)d[i + 1] << 8;
		if (!(bigram[x >> 3] & (1u << (x & 7))))
			continue;
		for (unsigned k = bstart[d[i]]; k < bstart[d[i] + 1]; k++)
			if (second[k] == d[i + 1] && rule_at(order[k], d, n, i)) {
				*at = i;
				return &rules[order[k]];
			}
	}
	return NULL;
}

const char *scan_window(const unsigned char *d, size_t n, size_t from, size_t to, size_t *at)
{
	const struct rule *r;

	if (!ready)
		init();
	r = n ? scan_span(d, n, from, to, at) : NULL;
	return r ? families[r->family] : NULL;
}

size_t scan_lines(const unsigned char *d, size_t n)
{
	const unsigned char *p = d, *end = d + n;
	size_t lines = 0;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		lines++;
		p++;
	}
	return lines;
}

/* 1 for UTF-16LE, 2 for UTF-16BE, 0 for neither; *skip is the byte-order mark's length.
 * Without a mark: text in the ASCII range has NUL in every odd (LE) or even (BE) byte. */
int scan_utf16_kind(const unsigned char *d, size_t n, size_t *skip)
{
	size_t probe = (n < 512 ? n : 512) & ~(size_t)1, zero[2] = { 0, 0 };

	*skip = 0;
	if (n >= 2 && ((d[0] == 0xff && d[1] == 0xfe) || (d[0] == 0xfe && d[1] == 0xff))) {
		*skip = 2;
		return d[0] == 0xff ? 1 : 2;
	}
	if (probe < 16)
		return 0;
	for (size_t i = 0; i < probe; i++)
		zero[i & 1] += d[i] == 0;
	if (zero[1] == probe / 2 && zero[0] == 0)
		return 1;
	if (zero[0] == probe / 2 && zero[1] == 0)
		return 2;
	return 0;
}

/* Scans UTF-16 text as ASCII, a chunk at a time through a stack buffer; consecutive
 * chunks overlap by SCAN_LOOKAHEAD so that a secret across a chunk's end is seen whole. */
static const struct rule *scan_utf16(const unsigned char *d, size_t n, int kind,
				     size_t *line)
{
	enum { CHUNK = 16384 };
	unsigned char buf[CHUNK];
	size_t units = n / 2, u = 0, lines = 1, at;

	while (u < units) {
		size_t m = units - u < CHUNK ? units - u : CHUNK, keep;
		const struct rule *r;

		for (size_t k = 0; k < m; k++) {
			const unsigned char *p = d + 2 * (u + k);
			unsigned cu = kind == 1 ? p[0] | (unsigned)p[1] << 8
						: p[1] | (unsigned)p[0] << 8;

			buf[k] = cu < 0x80 ? (unsigned char)cu : 0x80;
		}
		keep = u + m == units ? m : m - SCAN_LOOKAHEAD;
		if ((r = scan_span(buf, m, 0, keep, &at))) {
			*line = lines + scan_lines(buf, at);
			return r;
		}
		lines += scan_lines(buf, keep);
		u += keep;
	}
	return NULL;
}

int scan_buffer(const unsigned char *data, size_t n, struct scan_hit *hit)
{
	const struct rule *r = NULL;
	size_t at = 0, line = 0, skip;
	int kind;

	if (hit) {
		hit->rule = NULL;
		hit->line = 0;
	}
	if (n == 0)
		return 0;
	if (!ready)
		init();
	/* Every byte, binary or not: every rule is certain enough for binary files too. */
	if ((r = scan_span(data, n, 0, n, &at)))
		line = 1 + scan_lines(data, at);
	else if ((kind = scan_utf16_kind(data, n, &skip)))
		r = scan_utf16(data + skip, n - skip, kind, &line);
	if (!r)
		return 0;
	if (hit) {
		hit->rule = families[r->family];
		hit->line = line;
	}
	return 1;
}

const char *scan_rule_name(size_t i)
{
	return i < F_COUNT ? families[i] : NULL;
}
