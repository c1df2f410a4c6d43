/* randid.c: random identifiers (randid.h). */
#include <string.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include "sandboxd/common/err.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/lib/randid.h"
#include "sandboxd/common/banned.h"

int randid(char *out, size_t outsz, const char *prefix, size_t nbytes)
{
	unsigned char rnd[32];
	size_t p = strlen(prefix);

	if (outsz)
		out[0] = 0;
	if (nbytes > sizeof(rnd) || outsz < p + 2 * nbytes + 1 || RAND_bytes(rnd, (int)nbytes) != 1)
		return ERR_FAIL;
	memcpy(out, prefix, p);
	hex_encode(out + p, rnd, nbytes);
	OPENSSL_cleanse(rnd, sizeof(rnd));
	return 0;
}
