/* sha256.h: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), small and self-contained, so
 * that sandboxd-agent (a static musl program without OpenSSL) and the worker compute the
 * agent's challenge-response with the same code. Pure; no allocation. Test vectors from
 * FIPS 180-4's examples and RFC 4231 in tests/unit/test_agentproto.c. */
#ifndef SANDBOXD_SHA256_H
#define SANDBOXD_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
#define SHA256_BLOCK 64

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;                /* hashed so far */
	unsigned char buf[SHA256_BLOCK];
	size_t buf_len;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
void sha256_final(struct sha256 *s, unsigned char out[SHA256_LEN]);

/* HMAC-SHA256 over the concatenation of parts[0..nparts) (each {pointer, length}). */
struct sha256_part {
	const void *p;
	size_t n;
};
void hmac_sha256(const unsigned char *key, size_t key_len, const struct sha256_part *parts,
		 size_t nparts, unsigned char out[SHA256_LEN]);

#endif
