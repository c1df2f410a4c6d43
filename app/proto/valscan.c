/* valscan.c: a sandbox's own secrets found in what it pushes (valscan.h). */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/common/hex.h"
#include "sandboxd/lib/base64.h"
#include "sandboxd/lib/query.h"
#include "sandboxd/proto/valscan.h"
#include "sandboxd/common/banned.h"

#define HEAD 8

enum { LABEL_VALUE, LABEL_PERCENT, LABEL_BASE64 };

void valscan_init(struct valscan *v)
{
	memset(v, 0, sizeof(*v));
}

static void form_free(struct valscan_form *f)
{
	if (f->s) {
		explicit_bzero(f->s, f->len);
		free(f->s);
	}
	memset(f, 0, sizeof(*f));
}

void valscan_free(struct valscan *v)
{
	for (size_t i = 0; i < v->nforms; i++)
		form_free(&v->form[i]);
	for (size_t i = 0; i < v->nsecrets; i++)
		for (int k = 0; k < 3; k++)
			free(v->labels[i][k]);
	valscan_init(v);
}

static uint64_t head_of(const unsigned char *s)
{
	uint64_t h;

	memcpy(&h, s, HEAD);
	return h;
}

/* The filter's bit for a head: the high bits of a multiplicative hash. */
static unsigned bit_of(uint64_t head)
{
	return (unsigned)((head * UINT64_C(0x9E3779B97F4A7C15)) >> 48);
}

static int valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > VALSCAN_NAME_MAX || (name[0] >= '0' && name[0] <= '9'))
		return 0;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}



/* One form into the set under construction (forms [first, v->nforms) are this secret's),
 * unless the secret has it already. 0, or ERR_NOMEM. */
static int add_form(struct valscan *v, size_t first, const char *s, size_t len,
		    const char *label)
{
	struct valscan_form *f;

	for (size_t i = first; i < v->nforms; i++)
		if (v->form[i].len == len && memcmp(v->form[i].s, s, len) == 0)
			return 0;
	f = &v->form[v->nforms];
	if (!(f->s = malloc(len)))
		return ERR_NOMEM;
	memcpy(f->s, s, len);
	f->len = len;
	f->head = head_of(f->s);
	f->label = label;
	v->nforms++;
	return 0;
}

/* Every form of value[0..n) (at least HEAD bytes each, for n >= VALSCAN_VALUE_MIN). */
static int add_forms(struct valscan *v, size_t first, char **labels, const unsigned char *value,
		     size_t n, char *tmp, char *enc)
{
	size_t m;
	int rc;

	if ((rc = add_form(v, first, (const char *)value, n, labels[LABEL_VALUE])))
		return rc;
	m = query_percent_encode(value, n, "0123456789ABCDEF", tmp);
	if ((rc = add_form(v, first, tmp, m, labels[LABEL_PERCENT])))
		return rc;
	m = query_percent_encode(value, n, "0123456789abcdef", tmp);
	if ((rc = add_form(v, first, tmp, m, labels[LABEL_PERCENT])))
		return rc;
	/* Inside any base64 text, whatever comes before the value (a = 0, 1, 2 modulo 3). */
	for (size_t a = 0; a < 3; a++) {
		size_t j, len;

		base64_run(value, n, a, tmp, enc, &j, &len);
		if ((rc = add_form(v, first, enc + j, len, labels[LABEL_BASE64])))
			return rc;
	}
	return 0;
}

static int by_head(const void *a, const void *b)
{
	const struct valscan_form *x = a, *y = b;

	return x->head < y->head ? -1 : x->head > y->head;
}

/* The filter and the order that valscan_find relies on, over every form. The sort is
 * stable for equal heads (insertion sort: at most 96 forms), so that at one position the
 * first secret added, and its plainest form, is the one named. */
static void index_forms(struct valscan *v)
{
	for (size_t i = 1; i < v->nforms; i++) {
		struct valscan_form f = v->form[i];
		size_t j = i;

		for (; j > 0 && by_head(&v->form[j - 1], &f) > 0; j--)
			v->form[j] = v->form[j - 1];
		v->form[j] = f;
	}
	memset(v->filter, 0, sizeof(v->filter));
	for (size_t i = 0; i < v->nforms; i++) {
		unsigned b = bit_of(v->form[i].head);

		v->filter[b >> 6] |= UINT64_C(1) << (b & 63);
	}
}

int valscan_add(struct valscan *v, const char *name, const void *value, size_t n,
		struct err *e)
{
	size_t first = v->nforms, s = v->nsecrets;
	char *tmp = NULL, *enc = NULL, **labels = v->labels[s < VALSCAN_SECRETS_MAX ? s : 0];
	int rc = 0;

	if (!valid_name(name))
		return err_set(e, ERR_INVALID, "a secret's name must be letters, digits and '_', "
			       "not starting with a digit, at most %d", VALSCAN_NAME_MAX);
	if (n < VALSCAN_VALUE_MIN || n > VALSCAN_VALUE_MAX)
		return err_set(e, ERR_INVALID, "secret %s: its value must be %d to %d bytes", name,
			       VALSCAN_VALUE_MIN, VALSCAN_VALUE_MAX);
	if (s == VALSCAN_SECRETS_MAX)
		return err_set(e, ERR_INVALID, "more than %d secrets", VALSCAN_SECRETS_MAX);
	/* 3 * n: a percent-encoding; 2 + n: a value after up to two bytes, for base64. */
	tmp = malloc(3 * n);
	enc = malloc(base64_encoded_size(2 + n));
	labels[LABEL_VALUE] = malloc(VALSCAN_NAME_MAX + 48);
	labels[LABEL_PERCENT] = malloc(VALSCAN_NAME_MAX + 48);
	labels[LABEL_BASE64] = malloc(VALSCAN_NAME_MAX + 48);
	if (!tmp || !enc || !labels[0] || !labels[1] || !labels[2]) {
		rc = ERR_NOMEM;
	} else {
		snprintf(labels[LABEL_VALUE], VALSCAN_NAME_MAX + 48, "sandbox secret %s", name);
		snprintf(labels[LABEL_PERCENT], VALSCAN_NAME_MAX + 48,
			 "sandbox secret %s (percent-encoded)", name);
		snprintf(labels[LABEL_BASE64], VALSCAN_NAME_MAX + 48, "sandbox secret %s (base64)",
			 name);
		rc = add_forms(v, first, labels, value, n, tmp, enc);
	}
	if (tmp)
		explicit_bzero(tmp, 3 * n);
	if (enc)
		explicit_bzero(enc, base64_encoded_size(2 + n));
	free(tmp);
	free(enc);
	if (rc) {
		while (v->nforms > first)
			form_free(&v->form[--v->nforms]);
		for (int k = 0; k < 3; k++) {
			free(labels[k]);
			labels[k] = NULL;
		}
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	v->nsecrets++;
	index_forms(v);
	return 0;
}

int valscan_find(const struct valscan *v, const void *data, size_t n, struct scan_hit *hit)
{
	const unsigned char *d = data;

	if (hit)
		*hit = (struct scan_hit){ NULL, 0 };
	if (!v->nforms || n < HEAD)
		return 0;
	for (size_t i = 0; i + HEAD <= n; i++) {
		uint64_t k = head_of(d + i);
		unsigned b = bit_of(k);
		size_t lo = 0, hi = v->nforms;

		if (!(v->filter[b >> 6] >> (b & 63) & 1))
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (v->form[mid].head < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < v->nforms && v->form[lo].head == k; lo++) {
			const struct valscan_form *f = &v->form[lo];

			if (f->len > n - i || memcmp(d + i + HEAD, f->s + HEAD, f->len - HEAD))
				continue;
			if (hit) {
				const unsigned char *p = d, *end = d + i;

				hit->rule = f->label;
				hit->line = 1;
				while ((p = memchr(p, '\n', (size_t)(end - p)))) {
					hit->line++;
					p++;
				}
			}
			return 1;
		}
	}
	return 0;
}

int valscan_encode(struct buf *out, const char *name, const void *value, size_t n)
{
	int rc;

	/* One allocation for the whole line: no copy of the value left behind by a growth. */
	if ((rc = buf_reserve(out, strlen(name) + 2 * n + 2)) || (rc = buf_printf(out, "%s ", name)))
		return rc;
	hex_encode(out->data + out->len, value, n);
	buf_advance(out, 2 * n);
	return buf_puts(out, "\n");
}

int valscan_decode(struct valscan *v, const char *text, size_t n, struct err *e)
{
	unsigned char *value = malloc(VALSCAN_VALUE_MAX);
	size_t at = 0;
	int rc = 0;

	if (!value)
		return err_set(e, ERR_NOMEM, "out of memory");
	for (int line = 1; !rc && at < n; line++) {
		const char *l = text + at, *nl = memchr(l, '\n', n - at), *sp;
		char name[VALSCAN_NAME_MAX + 1];
		size_t len, hl;

		if (!nl) {
			rc = err_set(e, ERR_INVALID, "secrets, line %d: no newline at its end", line);
			break;
		}
		len = (size_t)(nl - l);
		at += len + 1;
		sp = memchr(l, ' ', len);
		if (!sp || (size_t)(sp - l) > VALSCAN_NAME_MAX) {
			rc = err_set(e, ERR_INVALID, "secrets, line %d: not \"NAME HEX\"", line);
			break;
		}
		memcpy(name, l, (size_t)(sp - l));
		name[sp - l] = 0;
		hl = (size_t)(nl - sp - 1);
		if (memchr(name, 0, (size_t)(sp - l)) || hl % 2 || hl / 2 < VALSCAN_VALUE_MIN ||
		    hl / 2 > VALSCAN_VALUE_MAX || hex_decode(value, sp + 1, hl / 2)) {
			rc = err_set(e, ERR_INVALID, "secrets, line %d: not \"NAME HEX\" (%d to %d "
				     "bytes in hex)", line, VALSCAN_VALUE_MIN, VALSCAN_VALUE_MAX);
			break;
		}
		rc = valscan_add(v, name, value, hl / 2, e);
	}
	explicit_bzero(value, VALSCAN_VALUE_MAX);
	free(value);
	return rc;
}
