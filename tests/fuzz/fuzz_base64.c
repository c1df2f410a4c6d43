/* fuzz_base64.c: base64_decode and base64url_decode on arbitrary bytes. Decoding is strict
 * (one encoding per value), so whatever decodes must encode back to exactly the input; and
 * the input taken as bytes must survive encode then decode in both variants. */
#include "fuzz.h"
#include "sandboxd/lib/base64.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

static void canonical(const char *in, size_t n, int url)
{
	size_t cap = n / 4 * 3 + 2, outlen = (size_t)-1;
	unsigned char *out = malloc(cap);
	char *again;
	int rc;

	FUZZ_CHECK(out);
	rc = url ? base64url_decode(in, n, out, cap, &outlen) : base64_decode(in, n, out, &outlen);
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID);  /* *outlen is not promised on failure */
		free(out);
		return;
	}
	FUZZ_CHECK(outlen <= cap);
	size_t esz = url ? base64url_encoded_size(outlen) : base64_encoded_size(outlen);
	FUZZ_CHECK(esz == n + 1);
	again = malloc(esz);
	FUZZ_CHECK(again);
	if (url)
		base64url_encode(out, outlen, again);
	else
		base64_encode(out, outlen, again);
	FUZZ_CHECK(memcmp(again, in, n) == 0 && again[n] == 0);
	free(again);
	free(out);
}

/* bytes -> encode -> decode is the identity. */
static void round_trip(const unsigned char *in, size_t n, int url)
{
	size_t esz = url ? base64url_encoded_size(n) : base64_encoded_size(n), outlen = 0;
	char *enc = malloc(esz);
	unsigned char *dec;
	size_t cap;

	FUZZ_CHECK(enc);
	if (url)
		base64url_encode(in, n, enc);
	else
		base64_encode(in, n, enc);
	FUZZ_CHECK(strlen(enc) == esz - 1);
	cap = url ? n : (esz - 1) / 4 * 3;  /* exactly what it needs: n, or n rounded up to 3 */
	dec = malloc(cap ? cap : 1);
	FUZZ_CHECK(dec);
	FUZZ_CHECK((url ? base64url_decode(enc, esz - 1, dec, cap, &outlen)
			: base64_decode(enc, esz - 1, dec, &outlen)) == 0);
	FUZZ_CHECK(outlen == n && memcmp(dec, in, n) == 0);
	free(dec);
	free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_dup(data, size);

	canonical(in, size, 0);
	canonical(in, size, 1);
	round_trip((const unsigned char *)in, size, 0);
	round_trip((const unsigned char *)in, size, 1);
	free(in);
	return 0;
}
