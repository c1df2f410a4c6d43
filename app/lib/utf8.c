/* utf8.c: one strict UTF-8 decoder for every module that checks or repairs text. */
#include <string.h>
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

#define REPLACEMENT "\xEF\xBF\xBD"  /* U+FFFD */

/* The WHATWG decoder's bounds: the second byte's range depends on the first (E0: no
 * overlong, ED: no surrogate, F0: no overlong, F4: nothing past U+10FFFF). */
size_t utf8_scan(const unsigned char *p, size_t n, enum utf8_state *state)
{
	unsigned char ch = p[0], lo = 0x80, hi = 0xBF;
	size_t need;

	if (ch < 0x80) {
		*state = UTF8_OK;
		return 1;
	}
	if (ch >= 0xC2 && ch <= 0xDF) {
		need = 1;
	} else if (ch >= 0xE0 && ch <= 0xEF) {
		need = 2;
		if (ch == 0xE0)
			lo = 0xA0;
		else if (ch == 0xED)
			hi = 0x9F;
	} else if (ch >= 0xF0 && ch <= 0xF4) {
		need = 3;
		if (ch == 0xF0)
			lo = 0x90;
		else if (ch == 0xF4)
			hi = 0x8F;
	} else {
		*state = UTF8_BAD;
		return 1;
	}
	for (size_t i = 1; i <= need; i++) {
		if (i == n) {
			*state = UTF8_SHORT;
			return n;
		}
		if (p[i] < lo || p[i] > hi) {
			*state = UTF8_BAD;
			return i;
		}
		lo = 0x80;
		hi = 0xBF;
	}
	*state = UTF8_OK;
	return need + 1;
}

/* Replacements gather in a small stage, so that a stream of garbage is not a buf_append
 * per byte. */
int utf8_append_repaired(struct buf *out, const unsigned char *p, size_t n)
{
	char stage[1024];
	size_t i = 0, run = 0, sn = 0;
	enum utf8_state state;
	int rc;

	while (i < n) {
		size_t k;

		if (p[i] < 0x80) {
			i++;
			continue;
		}
		k = utf8_scan(p + i, n - i, &state);
		if (state == UTF8_OK) {
			i += k;
			continue;
		}
		if (sn + (i - run) + 3 > sizeof(stage)) {
			if ((rc = buf_append(out, stage, sn)) ||
			    (rc = buf_append(out, p + run, i - run)))
				return rc;
			sn = 0;
		} else {
			memcpy(stage + sn, p + run, i - run);
			sn += i - run;
		}
		memcpy(stage + sn, REPLACEMENT, 3);
		sn += 3;
		i += k;
		run = i;
	}
	if ((rc = buf_append(out, stage, sn)))
		return rc;
	return buf_append(out, p + run, n - run);
}

size_t utf8_seq(const unsigned char *s, size_t n)
{
	enum utf8_state state;
	size_t k;

	if (n == 0)
		return 0;
	k = utf8_scan(s, n, &state);
	return state == UTF8_OK ? k : 0;
}

int utf8_text_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (s[i] == 0 || !(k = utf8_seq(s + i, n - i)))
			return 0;
	return 1;
}
