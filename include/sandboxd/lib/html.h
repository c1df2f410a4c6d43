/* html.h: the one place text becomes HTML (as cgit keeps all of its escaping in html.c).
 * Every value a page shows goes through html_text; only the page's own literals do not. */
#ifndef SANDBOXD_HTML_H
#define SANDBOXD_HTML_H
#include "sandboxd/lib/buf.h"

/* Appends s (NULL: nothing) with & < > " ' as entities, so that it is text in an element
 * and in a quoted attribute alike; bytes that are not valid UTF-8 become U+FFFD, so that
 * a browser cannot read them as something else. */
int html_text(struct buf *b, const char *s) __attribute__((warn_unused_result));

#endif
