/* buf.c: the growing byte buffer every answer and stream line is read into. */
#include <stdlib.h>
#include <string.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

int buf_add(struct buf *b, const void *data, size_t n)
{
	if (n >= (size_t)-1 / 2 - b->len)
		return -1;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
