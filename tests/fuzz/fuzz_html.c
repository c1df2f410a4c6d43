/* fuzz_html.c: html_text, the pages' one escaping function, on any text (an account's
 * name, a request path, an error from the audit log): what it writes holds none of
 * < > " ' raw, every & starts one of its five entities, it is valid UTF-8, and text that
 * needed nothing (ASCII without those characters) comes out as it went in.
 *
 * Input: any bytes (cut at the first NUL, as the C strings it is given are). */
#include "fuzz.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/lib/html.h"
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

static const char *const entities[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	size_t n = strlen(s), plain = 1;
	struct buf b;

	buf_init(&b, 1 << 20);
	FUZZ_CHECK(html_text(&b, s) == 0);
	const char *o = b.data ? b.data : "";
	FUZZ_CHECK(strpbrk(o, "<>\"'") == NULL);
	for (const char *p = strchr(o, '&'); p; p = strchr(p + 1, '&')) {
		int known = 0;
		for (size_t k = 0; k < sizeof(entities) / sizeof(entities[0]); k++)
			known |= strncmp(p, entities[k], strlen(entities[k])) == 0;
		FUZZ_CHECK(known);
	}
	FUZZ_CHECK(utf8_text_ok((const unsigned char *)o, b.len));
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || strchr("<>\"'&", s[i]))
			plain = 0;
	if (plain)
		FUZZ_CHECK(b.len == n && memcmp(o, s, n) == 0);
	buf_release(&b);
	free(s);
	return 0;
}
