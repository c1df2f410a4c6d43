/* fuzz_gitcred.c: gitcred_token on arbitrary text (a sandbox's git configuration is its
 * user's to write). What it finds is always a sandbox token with a valid checksum, and a
 * miss leaves out empty. */
#include "fuzz.h"
#include "sandboxd/proto/gitcred.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1), out[TOKEN_LEN + 1];

	FUZZ_CHECK(text);
	memcpy(text, data, size);
	if (gitcred_token(text, size, out))
		FUZZ_CHECK(strlen(out) == TOKEN_LEN && token_classify(out, TOKEN_LEN) == TOKEN_SANDBOX);
	else
		FUZZ_CHECK(out[0] == 0);
	free(text);
	return 0;
}
