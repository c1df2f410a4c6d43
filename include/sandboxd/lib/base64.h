/* base64.h: standard base64 (RFC 4648 §4) with padding, and base64url (§5) without it,
 * as JOSE uses it. Decoding is strict: only the alphabet, padding only where the variant
 * has it and only at the end, no whitespace, and the unused bits of the last character
 * zero (one encoding per value). */
#ifndef SANDBOXD_BASE64_H
#define SANDBOXD_BASE64_H
#include <stddef.h>

/* Bytes needed to encode n bytes, plus the NUL. */
size_t base64_encoded_size(size_t n);
/* Writes the encoding of in[0..n) and a NUL into out (base64_encoded_size(n) bytes). */
void base64_encode(const unsigned char *in, size_t n, char *out);
/* Decodes in[0..n) into out (at least n / 4 * 3 bytes); sets *outlen. ERR_INVALID on
 * anything that is not canonical base64. */
int base64_decode(const char *in, size_t n, unsigned char *out, size_t *outlen)
	__attribute__((warn_unused_result));

/* The base64 characters that depend on in[0..n) alone when a bytes (0, 1 or 2) come before
 * it in what is encoded: whatever those bytes are, the encoding holds this run. tmp holds
 * n + 2 bytes, enc base64_encoded_size(n + 2); the run is enc + *start, *len characters. */
void base64_run(const void *in, size_t n, size_t a, char *tmp, char *enc, size_t *start,
		size_t *len);

/* base64url: bytes needed for n bytes (no padding), plus the NUL. */
size_t base64url_encoded_size(size_t n);
void base64url_encode(const unsigned char *in, size_t n, char *out);
/* Decodes unpadded base64url into out (cap bytes; n / 4 * 3 + 2 always suffice). */
int base64url_decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *outlen)
	__attribute__((warn_unused_result));

#endif
