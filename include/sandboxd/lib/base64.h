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

/* base64url: bytes needed for n bytes (no padding), plus the NUL. */
size_t base64url_encoded_size(size_t n);
void base64url_encode(const unsigned char *in, size_t n, char *out);
/* Decodes unpadded base64url into out (cap bytes; n / 4 * 3 + 2 always suffice). */
int base64url_decode(const char *in, size_t n, unsigned char *out, size_t cap, size_t *outlen)
	__attribute__((warn_unused_result));

#endif
