/* sha256.c: SHA-256 and HMAC-SHA256 for the agent's handshake (see sha256.h). */
#include <string.h>
#include "sandboxd/common/sha256.h"
#include "sandboxd/common/banned.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return x >> n | x << (32 - n);
}

static void block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], v[8], t1, t2;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++)
		w[i] = w[i - 16] + (ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3) +
		       w[i - 7] + (ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10);
	memcpy(v, h, sizeof(v));
	for (int i = 0; i < 64; i++) {
		t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) +
		     ((v[4] & v[5]) ^ (~v[4] & v[6])) + K[i] + w[i];
		t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) +
		     ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		h[i] += v[i];
}

void sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(s->h, iv, sizeof(iv));
	s->bytes = 0;
	s->buf_len = 0;
}

void sha256_update(struct sha256 *s, const void *data, size_t n)
{
	const unsigned char *p = data;

	s->bytes += n;
	while (n) {
		size_t take = SHA256_BLOCK - s->buf_len < n ? SHA256_BLOCK - s->buf_len : n;

		if (s->buf_len == 0 && n >= SHA256_BLOCK) {
			block(s->h, p);
			take = SHA256_BLOCK;
		} else {
			memcpy(s->buf + s->buf_len, p, take);
			s->buf_len += take;
			if (s->buf_len == SHA256_BLOCK) {
				block(s->h, s->buf);
				s->buf_len = 0;
			}
		}
		p += take;
		n -= take;
	}
}

void sha256_final(struct sha256 *s, unsigned char out[SHA256_LEN])
{
	uint64_t bits = s->bytes * 8;
	unsigned char pad[SHA256_BLOCK + 8] = { 0x80 };
	size_t padlen = (s->buf_len < 56 ? 56 : 120) - s->buf_len;

	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_update(s, pad, padlen + 8);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (unsigned char)(s->h[i] >> (24 - 8 * j));
}

void hmac_sha256(const unsigned char *key, size_t key_len, const struct sha256_part *parts,
		 size_t nparts, unsigned char out[SHA256_LEN])
{
	unsigned char k[SHA256_BLOCK] = { 0 }, pad[SHA256_BLOCK], inner[SHA256_LEN];
	struct sha256 s;

	if (key_len > SHA256_BLOCK) {
		sha256_init(&s);
		sha256_update(&s, key, key_len);
		sha256_final(&s, k);
	} else if (key_len) {
		memcpy(k, key, key_len);
	}
	for (int i = 0; i < SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	for (size_t i = 0; i < nparts; i++)
		sha256_update(&s, parts[i].p, parts[i].n);
	sha256_final(&s, inner);
	for (int i = 0; i < SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, inner, sizeof(inner));
	sha256_final(&s, out);
	/* The key's traces: a compiler may not drop these stores. */
	explicit_bzero(k, sizeof(k));
	explicit_bzero(pad, sizeof(pad));
}
