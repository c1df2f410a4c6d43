/* flist.c: reading file-list.sh's records, bounded (flist.h). */
#include <string.h>
#include "sandboxd/proto/flist.h"
#include "sandboxd/common/banned.h"

/* Digits of base at *i (at least one, at most max_digits), value at most max. */
static int take_num(const char *s, size_t n, size_t *i, unsigned base, size_t max_digits,
		    uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t start = *i;

	while (*i < n && s[*i] >= '0' && s[*i] < (char)('0' + base)) {
		if (*i - start >= max_digits)
			return ERR_INVALID;
		v = v * base + (uint64_t)(s[*i] - '0');
		(*i)++;
	}
	if (*i == start || v > max)
		return ERR_INVALID;
	*out = v;
	return 0;
}

static int take_space(const char *s, size_t n, size_t *i)
{
	if (*i >= n || s[*i] != ' ')
		return ERR_INVALID;
	(*i)++;
	return 0;
}

/* The relative path: not empty, no leading '/', no empty, "." or ".." component. */
static int rel_ok(const char *s, size_t n)
{
	size_t start = 0;

	if (n == 0 || memchr(s, 0, n))
		return 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '/')
			continue;
		size_t len = i - start;
		if (len == 0 || (len == 1 && s[start] == '.') ||
		    (len == 2 && s[start] == '.' && s[start + 1] == '.'))
			return 0;
		start = i + 1;
	}
	return 1;
}

int flist_parse_record(const char *rec, size_t n, struct flist_entry *out, size_t *rel_off,
		       size_t *rel_len)
{
	uint64_t mode, size, secs;
	size_t i = 1;
	int neg = 0;

	if (n < 2)
		return ERR_INVALID;
	out->type = rec[0] == 'f' ? FLIST_FILE : rec[0] == 'd' ? FLIST_DIR :
		    rec[0] == 'l' ? FLIST_SYMLINK : FLIST_OTHER;
	if (rec[0] < 'a' || rec[0] > 'z')
		return ERR_INVALID;
	if (take_space(rec, n, &i) || take_num(rec, n, &i, 8, 5, 07777, &mode) ||
	    take_space(rec, n, &i) || take_num(rec, n, &i, 10, 19, INT64_MAX, &size) ||
	    take_space(rec, n, &i))
		return ERR_INVALID;
	if (i < n && rec[i] == '-') {
		neg = 1;
		i++;
	}
	if (take_num(rec, n, &i, 10, 18, INT64_MAX, &secs))
		return ERR_INVALID;
	if (i < n && rec[i] == '.') {
		uint64_t frac;

		i++;
		if (take_num(rec, n, &i, 10, 18, UINT64_MAX, &frac))
			return ERR_INVALID;
	}
	if (take_space(rec, n, &i) || !rel_ok(rec + i, n - i))
		return ERR_INVALID;
	out->mode = (unsigned)mode;
	out->size = size;
	out->mtime = neg ? -(int64_t)secs : (int64_t)secs;
	*rel_off = i;
	*rel_len = n - i;
	return 0;
}

int flist_init(struct flist *p, const char *root, flist_fn fn, void *arg)
{
	size_t len = strlen(root);

	p->n = 0;
	p->skipping = 0;
	p->count = 0;
	p->truncated = 0;
	p->dropped = 0;
	if (root[0] != '/' || len >= sizeof(p->root))
		return ERR_INVALID;
	p->root_len = strcmp(root, "/") ? len : 0;
	memcpy(p->root, root, p->root_len);
	p->root[p->root_len] = 0;
	p->fn = fn;
	p->arg = arg;
	return 0;
}

/* The gathered record rec[0..n): to fn when it parses. */
static int take_record(struct flist *p)
{
	struct flist_entry ent;
	size_t off, len;

	if (flist_parse_record(p->rec, p->n, &ent, &off, &len) ||
	    p->root_len + 1 + len >= sizeof(p->path)) {
		p->dropped++;
		return 0;
	}
	if (p->count == FLIST_MAX) {
		p->truncated = 1;
		return 0;
	}
	memcpy(p->path, p->root, p->root_len);
	p->path[p->root_len] = '/';
	memcpy(p->path + p->root_len + 1, p->rec + off, len);
	p->path[p->root_len + 1 + len] = 0;
	ent.path = p->path;
	ent.name = strrchr(p->path, '/') + 1;
	p->count++;
	return p->fn(p->arg, &ent);
}

int flist_feed(struct flist *p, const char *data, size_t n)
{
	while (n > 0) {
		const char *nul = memchr(data, 0, n);
		size_t take = nul ? (size_t)(nul - data) : n;
		int rc;

		if (!p->skipping && take <= sizeof(p->rec) - p->n) {
			memcpy(p->rec + p->n, data, take);
			p->n += take;
		} else {
			p->skipping = 1;
		}
		data += take;
		n -= take;
		if (!nul)
			break;
		data++;
		n--;
		if (p->skipping)
			p->dropped++;
		else if (!p->truncated && (rc = take_record(p)))
			return rc;
		p->n = 0;
		p->skipping = 0;
	}
	return 0;
}
