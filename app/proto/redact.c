/* redact.c: masking this service's credentials in stored text (redact.h). */
#include <string.h>
#include "sandboxd/proto/redact.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/common/banned.h"

static int b64url(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

static size_t run(const char *s, size_t i, size_t n)
{
	size_t j = i;

	while (j < n && b64url((unsigned char)s[j]))
		j++;
	return j - i;
}

/* The length of the JWT at s[i..n), or 0: "eyJ…" "." "eyJ…" "." signature. */
static size_t jwt_at(const char *s, size_t i, size_t n)
{
	size_t h, p, g;

	if (n - i < 3 || memcmp(s + i, "eyJ", 3))
		return 0;
	h = run(s, i, n);
	if (i + h >= n || s[i + h] != '.')
		return 0;
	size_t pi = i + h + 1;
	if (n - pi < 3 || memcmp(s + pi, "eyJ", 3))
		return 0;
	p = run(s, pi, n);
	if (pi + p >= n || s[pi + p] != '.')
		return 0;
	g = run(s, pi + p + 1, n);
	return g >= REDACT_JWT_SIG_MIN ? h + 1 + p + 1 + g : 0;
}

/* The length of the opaque token at s[i..n), or 0. */
static size_t token_at(const char *s, size_t i, size_t n)
{
	if (n - i < TOKEN_LEN || s[i] != 'd' || s[i + 3] != '_' ||
	    !(memcmp(s + i, "dfy_", 4) == 0 || memcmp(s + i, "djt_", 4) == 0 ||
	      memcmp(s + i, "dst_", 4) == 0))
		return 0;
	enum token_kind k = token_classify(s + i, TOKEN_LEN);
	return k == TOKEN_PERSONAL || k == TOKEN_JOB || k == TOKEN_SANDBOX ? TOKEN_LEN : 0;
}

size_t redact_tokens(char *s, size_t n)
{
	size_t r = 0, w = 0;

	while (r < n) {
		size_t k = 0;
		if (s[r] == 'd')
			k = token_at(s, r, n);
		else if (s[r] == 'e')
			k = jwt_at(s, r, n);
		if (k) {
			memcpy(s + w, REDACT_MASK, sizeof(REDACT_MASK) - 1);
			w += sizeof(REDACT_MASK) - 1;
			r += k;
		} else {
			s[w++] = s[r++];
		}
	}
	if (w < n)
		s[w] = 0;
	return w;
}
