/* gitcred.c: the sandbox token in a clone's git configuration (gitcred.h). */
#include <string.h>
#include <strings.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/proto/gitcred.h"
#include "sandboxd/common/banned.h"

/* Base64 of "x-access-token:" + a token is 84 characters; a user name of up to ~60 more
 * is allowed. */
#define B64_MAX 256

static int b64char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/' || c == '=';
}

/* The token in the base64 credential at p[0..n), if it is one. */
static int decode_one(const char *p, size_t n, char out[TOKEN_LEN + 1])
{
	unsigned char dec[B64_MAX];
	size_t len = 0;

	if (n == 0 || n > B64_MAX || n % 4 || base64_decode(p, n, dec, &len))
		return 0;
	const unsigned char *colon = memchr(dec, ':', len);
	if (!colon || (size_t)(dec + len - colon - 1) != TOKEN_LEN)
		return 0;
	if (token_classify((const char *)colon + 1, TOKEN_LEN) != TOKEN_SANDBOX)
		return 0;
	memcpy(out, colon + 1, TOKEN_LEN);
	out[TOKEN_LEN] = 0;
	return 1;
}

int gitcred_token(const char *text, size_t n, char out[TOKEN_LEN + 1])
{
	static const char key[] = "authorization:";
	const size_t klen = sizeof(key) - 1;

	out[0] = 0;
	for (size_t i = 0; i + klen <= n; i++) {
		if (strncasecmp(text + i, key, klen))
			continue;
		size_t j = i + klen;
		while (j < n && text[j] == ' ')
			j++;
		if (n - j < 6 || strncasecmp(text + j, "basic ", 6))
			continue;
		j += 6;
		while (j < n && text[j] == ' ')
			j++;
		size_t k = j;
		while (k < n && k - j <= B64_MAX && b64char((unsigned char)text[k]))
			k++;
		if (decode_one(text + j, k - j, out))
			return 1;
	}
	return 0;
}
