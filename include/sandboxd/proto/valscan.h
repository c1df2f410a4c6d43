/* valscan.h: a sandbox's own secrets found in what it pushes (SPEC.md §4 "Secrets", §5 item
 * 4; docs/decisions/0077). Push protection's rules (scan.h) know the shapes of well-known
 * credentials; the values of a repository's sandbox secrets have no shape, so a push that
 * comes from a sandbox (its token, or the save at its stop) is also searched for the values
 * of that sandbox's secrets, in the forms a build step writes them in, the forms masking
 * knows (capture.h):
 *   - the value itself;
 *   - percent-encoded as in a URL's userinfo (RFC 3986 unreserved characters kept, others
 *     %XX), with upper-case and with lower-case hex digits, when that differs;
 *   - base64 (RFC 4648): for each of the three alignments the value can have inside a longer
 *     base64 text (`Authorization: Basic` of "user:value", .npmrc's `_auth`, a Docker
 *     config.json), the characters that depend on the value's bytes alone.
 * Every form is at least VALSCAN_VALUE_MIN bytes long (a base64 part of an 8-byte value
 * has 10 characters).
 *
 * A hit names the secret (and the form, when it is not the value itself), never the value,
 * its offset or its length: "sandbox secret NPM_TOKEN", "sandbox secret NPM_TOKEN
 * (base64)", "sandbox secret NPM_TOKEN (percent-encoded)".
 *
 * The values travel from the worker to the pre-receive hook on a descriptor, one line per
 * secret, "NAME HEX\n" (valscan_encode, valscan_decode): no value in an environment or an
 * argument.
 *
 * Pure: no I/O. Memory from malloc, wiped when freed (every form is the secret). The search
 * is linear in the bytes searched: at each position one 8-byte key looked up in a 65536-bit
 * filter, and only on a filter hit a binary search among the forms' first 8 bytes. */
#ifndef SANDBOXD_VALSCAN_H
#define SANDBOXD_VALSCAN_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/err.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/proto/scan.h"

#define VALSCAN_SECRETS_MAX 16     /* SECRETS_PER_SANDBOX */
#define VALSCAN_NAME_MAX 128       /* SECRETS_NAME_MAX */
#define VALSCAN_VALUE_MIN 8        /* SECRETS_VALUE_MIN: shorter could not be told apart */
#define VALSCAN_VALUE_MAX 4096     /* SECRETS_VALUE_MAX */
#define VALSCAN_FORMS 6            /* the value, two percent-encodings, three base64 parts */
#define VALSCAN_FILTER_BITS 65536

struct valscan_form {
	unsigned char *s;          /* malloc'd */
	size_t len;                /* >= 8 */
	uint64_t head;             /* its first 8 bytes, as a number */
	const char *label;         /* what a hit names (one of its secret's labels) */
};

struct valscan {
	size_t nsecrets, nforms;
	char *labels[VALSCAN_SECRETS_MAX][3];          /* value, percent-encoded, base64 */
	struct valscan_form form[VALSCAN_SECRETS_MAX * VALSCAN_FORMS];  /* sorted by head */
	uint64_t filter[VALSCAN_FILTER_BITS / 64];
};

/* An empty set: nothing is found in anything. Allocates nothing. */
void valscan_init(struct valscan *v);
/* Wipes and frees every form; v is empty again. */
void valscan_free(struct valscan *v);

/* Adds secret name (an environment variable name of at most VALSCAN_NAME_MAX bytes) with
 * value[0..n) (any bytes, VALSCAN_VALUE_MIN to VALSCAN_VALUE_MAX of them) in each
 * of its forms. ERR_INVALID naming what is wrong (never quoting the value), also past
 * VALSCAN_SECRETS_MAX secrets; ERR_NOMEM. On failure v is as before the call. */
int valscan_add(struct valscan *v, const char *name, const void *value, size_t n,
		struct err *e) __attribute__((warn_unused_result));

/* 1 when data[0..n) holds a form of a secret of v, with *hit (may be NULL) naming the one
 * that starts first and the 1-based line it starts on; 0 when none does (also for an empty
 * v), hit then {NULL, 0}. */
int valscan_find(const struct valscan *v, const void *data, size_t n, struct scan_hit *hit)
	__attribute__((warn_unused_result));

/* Appends the line "NAME HEX\n" for a secret (HEX: value[0..n) in lower-case hex) to out.
 * 0, or ERR_TOOBIG when out is full, ERR_NOMEM. */
int valscan_encode(struct buf *out, const char *name, const void *value, size_t n)
	__attribute__((warn_unused_result));
/* Adds the secrets of text[0..n), lines as valscan_encode writes them (an empty text adds
 * none). ERR_INVALID naming the line and what is wrong with it; ERR_NOMEM. On failure v may
 * hold the secrets of the lines before the bad one: the caller frees it and refuses. */
int valscan_decode(struct valscan *v, const char *text, size_t n, struct err *e)
	__attribute__((warn_unused_result));

#endif
