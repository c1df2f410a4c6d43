/* randid.c: random identifiers (randid.h). */
#include <string.h>
#include <openssl/rand.h>
#include "sandboxd/err.h"
#include "sandboxd/randid.h"
#include "sandboxd/banned.h"

int randid(char *out, size_t outsz, const char *prefix, size_t nbytes)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[32];
	size_t p = strlen(prefix);

	if (outsz)
		out[0] = 0;
	if (nbytes > sizeof(rnd) || outsz < p + 2 * nbytes + 1 || RAND_bytes(rnd, (int)nbytes) != 1)
		return ERR_FAIL;
	memcpy(out, prefix, p);
	for (size_t i = 0; i < nbytes; i++) {
		out[p + 2 * i] = hex[rnd[i] >> 4];
		out[p + 2 * i + 1] = hex[rnd[i] & 15];
	}
	out[p + 2 * nbytes] = 0;
	return 0;
}
