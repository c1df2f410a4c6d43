/* fuzz_keyproof.c: giturl_key_proof_check, the parser of the proof that POST /user/keys
 * takes from any write-scoped caller. The input is checked as a proof against a key made at
 * start-up, in a buffer of exactly its size (no NUL): it must never be accepted, since no
 * input is signed by that key. Then a proof made for a login taken from the input is
 * accepted for that login, refused for another, and refused with any one byte changed (at a
 * position and to a value the input chooses): every byte is signed or is the signature. */
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/common/banned.h"

#define NOW INT64_C(1800000000)

static EVP_PKEY *key;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct err e;

	FUZZ_CHECK(jwt_key_generate(&key, &e) == 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_dup(data, size), login[40], *proof = NULL;
	struct err e;
	size_t n = 0;

	if (!key)
		LLVMFuzzerInitialize(NULL, NULL);
	FUZZ_CHECK(giturl_key_proof_check(key, in, size, "alice", NOW, &e) == ERR_INVALID);
	/* A login of the input's letters and digits (1..39). */
	for (size_t i = 0; i < size && n < sizeof(login) - 1; i++)
		if ((data[i] >= 'a' && data[i] <= 'z') || (data[i] >= '0' && data[i] <= '9'))
			login[n++] = (char)data[i];
	if (n == 0)
		login[n++] = 'x';
	login[n] = 0;
	FUZZ_CHECK(giturl_key_proof_make(key, login, NOW, &proof, &e) == 0);
	size_t len = strlen(proof);
	FUZZ_CHECK(giturl_key_proof_check(key, proof, len, login, NOW, &e) == 0);
	FUZZ_CHECK(giturl_key_proof_check(key, proof, len, "someone-else", NOW, &e) == ERR_INVALID);
	if (size >= 2) {
		size_t at = ((size_t)data[0] << 8 | data[1]) % len;
		char was = proof[at];
		proof[at] = (char)(data[size - 1] == (uint8_t)was ? was ^ 1 : data[size - 1]);
		FUZZ_CHECK(giturl_key_proof_check(key, proof, len, login, NOW, &e) == ERR_INVALID);
		proof[at] = was;
		FUZZ_CHECK(giturl_key_proof_check(key, proof, len - 1, login, NOW, &e) == ERR_INVALID);
	}
	free(proof);
	free(in);
	return 0;
}
