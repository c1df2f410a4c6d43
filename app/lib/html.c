/* html.c: text into HTML (html.h). */
#include <string.h>
#include "sandboxd/lib/html.h"
#include "sandboxd/lib/utf8.h"
#include "sandboxd/common/banned.h"

static const char *entity(unsigned char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	default: return NULL;
	}
}

int html_text(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0, run = 0;
	int rc;

	/* Runs of plain bytes go in one append, repaired as UTF-8; cutting them at ASCII bytes
	 * never cuts a sequence, as no byte of a multi-byte sequence is ASCII. */
	for (size_t i = 0; i < n; i++) {
		const char *ent = entity(p[i]);
		if (!ent)
			continue;
		if ((rc = utf8_append_repaired(b, p + run, i - run)) || (rc = buf_puts(b, ent)))
			return rc;
		run = i + 1;
	}
	return utf8_append_repaired(b, p + run, n - run);
}
