/* utf8.c: one strict UTF-8 decoder for every module that checks text. */
#include "sandboxd/utf8.h"
#include "sandboxd/banned.h"

size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c, len, min, cp;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	cp = c & (0x7f >> len);
	for (unsigned k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and past U+10FFFF are not UTF-8. */
	if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

int utf8_text_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (s[i] == 0 || !(k = utf8_seq(s + i, n - i)))
			return 0;
	return 1;
}
