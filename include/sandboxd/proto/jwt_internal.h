/* jwt_internal.h: internal to app/proto/jwt.c and app/proto/jwt_p256.c, not for callers
 * (they include jwt.h): the helpers of the P-256 half that the token half uses too. */
#ifndef SANDBOXD_JWT_INTERNAL_H
#define SANDBOXD_JWT_INTERNAL_H
#include <stddef.h>
#include <openssl/evp.h>
#include "sandboxd/common/err.h"

#define SIG_LEN 64 /* an ES256 signature in the JOSE form R||S, bytes */

/* 0 when k is an EC key on the named curve P-256; ERR_INVALID (saying what it is instead)
 * otherwise, and when k is NULL. Explicit curve parameters are refused. */
int jwt_check_p256(EVP_PKEY *k, struct err *e) __attribute__((warn_unused_result));
/* jwt_es256_verify for a key already known to be P-256 (jwt_check_p256). */
int jwt_es256_verify_p256(EVP_PKEY *k, const void *msg, size_t n, const unsigned char *sig,
			  size_t siglen, struct err *e) __attribute__((warn_unused_result));

#endif
