/* fuzz_token.c: token_parse_authorization on the Authorization header (a C string) and
 * token_classify on the raw bytes. Invariants: a credential is always NUL-terminated within
 * the buffer; a Bearer credential is the header's own text; an opaque token is recognised
 * only with its prefix, length and checksum. The checksum is also recomputed here, after
 * token.h (CRC32 in six base62 digits), over a token built from the input: token_classify
 * must accept it and refuse it with any one character changed. */
#include <zlib.h>
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/token.h"
#include "sandboxd/common/banned.h"

static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const enum token_kind kinds[] = { TOKEN_PERSONAL, TOKEN_JOB, TOKEN_SANDBOX };
	char tok[TOKEN_LEN + 1];

	for (size_t k = 0; k < 3; k++) {
		FUZZ_CHECK(token_mint(kinds[k], tok) == 0);
		FUZZ_CHECK(strlen(tok) == TOKEN_LEN);
		FUZZ_CHECK(token_classify(tok, TOKEN_LEN) == kinds[k]);
	}
	return 0;
}

static void authorization(const uint8_t *data, size_t size)
{
	char *header = fuzz_cstr(data, size);
	size_t outsz = 1 + (size ? data[0] % 64 : 0) * 4;  /* small buffers too */
	char *out = malloc(outsz), *big = malloc(TOKEN_MAX + 1);
	enum auth_scheme scheme = (enum auth_scheme)-1;
	int rc;

	FUZZ_CHECK(out && big);
	rc = token_parse_authorization(header, &scheme, big, TOKEN_MAX + 1);
	if (rc == 0) {
		size_t n = strlen(big);

		FUZZ_CHECK(n <= TOKEN_MAX);
		FUZZ_CHECK(scheme == AUTH_NONE || scheme == AUTH_BEARER || scheme == AUTH_BASIC);
		if (scheme == AUTH_NONE)
			FUZZ_CHECK(header[0] == 0 && n == 0);
		else
			FUZZ_CHECK(n > 0);
		if (scheme == AUTH_BEARER)
			FUZZ_CHECK(strstr(header + 7, big) != NULL);
		token_classify(big, n);
	} else {
		FUZZ_CHECK(rc == ERR_INVALID);
	}
	/* The same header into a buffer of outsz bytes: never a byte past it. */
	rc = token_parse_authorization(header, &scheme, out, outsz);
	if (rc == 0)
		FUZZ_CHECK(strlen(out) < outsz);
	free(big);
	free(out);
	free(header);
}

/* A well-formed token of the kind picked by data[0], its random part made of the input. */
static void checksum(const uint8_t *data, size_t size)
{
	static const char *const prefixes[] = { "dfy_", "djt_", "dst_" };
	static const enum token_kind kinds[] = { TOKEN_PERSONAL, TOKEN_JOB, TOKEN_SANDBOX };
	char *tok;
	size_t k;
	uLong crc;

	if (size < 1 + TOKEN_RANDOM_LEN + 1)
		return;
	k = data[0] % 3;
	tok = malloc(TOKEN_LEN);
	FUZZ_CHECK(tok);
	memcpy(tok, prefixes[k], 4);
	for (size_t i = 0; i < TOKEN_RANDOM_LEN; i++)
		tok[4 + i] = b62[data[1 + i] % 62];
	crc = crc32(0L, (const Bytef *)tok, 4 + TOKEN_RANDOM_LEN);
	for (int i = TOKEN_CHECK_LEN - 1; i >= 0; i--) {
		tok[4 + TOKEN_RANDOM_LEN + i] = b62[crc % 62];
		crc /= 62;
	}
	FUZZ_CHECK(token_classify(tok, TOKEN_LEN) == kinds[k]);
	/* One character changed anywhere (CRC32 catches every single-byte error). */
	size_t at = data[1 + TOKEN_RANDOM_LEN] % TOKEN_LEN;
	char was = tok[at];
	tok[at] = b62[(size_t)(strchr(b62, was) ? strchr(b62, was) - b62 + 1 : 0) % 62];
	if (at < 4)
		tok[at] = was == '_' ? 'x' : (char)(was ^ 0x20);
	FUZZ_CHECK(token_classify(tok, TOKEN_LEN) == TOKEN_INVALID);
	free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *raw = fuzz_dup(data, size);
	enum token_kind kind = token_classify(raw, size);

	if (kind == TOKEN_PERSONAL || kind == TOKEN_JOB || kind == TOKEN_SANDBOX) {
		FUZZ_CHECK(size == TOKEN_LEN);
		FUZZ_CHECK(memcmp(raw, kind == TOKEN_PERSONAL ? "dfy_" :
				  kind == TOKEN_JOB ? "djt_" : "dst_", 4) == 0);
	} else if (kind == TOKEN_JWT) {
		FUZZ_CHECK(size <= TOKEN_MAX && memchr(raw, '.', size));
	} else {
		FUZZ_CHECK(kind == TOKEN_INVALID);
	}
	free(raw);
	authorization(data, size);
	checksum(data, size);
	return 0;
}
