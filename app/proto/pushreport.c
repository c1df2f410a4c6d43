/* pushreport.c: the refs a push's hooks accepted that git did not update. */
#include <string.h>
#include "sandboxd/proto/pushreport.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

#define OID_HEX 40

/* 1 when s is exactly OID_HEX lowercase hex digits. */
static int oid_ok(const char *s)
{
	return strlen(s) == OID_HEX && hex_is(s, OID_HEX);
}

/* Cuts one line "<kind> <old> <new> <ref>" of len bytes into r; 1 for accepted, 2 for
 * updated, 0 for anything else (a NUL inside included: it would cut the ref short). */
static int cut(char *line, size_t len, struct push_ref *r)
{
	char *old = strchr(line, ' '), *new_, *ref;
	int kind;

	if (!old || strlen(line) != len)
		return 0;
	*old++ = 0;
	kind = !strcmp(line, "accepted") ? 1 : !strcmp(line, "updated") ? 2 : 0;
	if (!kind || !(new_ = strchr(old, ' ')))
		return 0;
	*new_++ = 0;
	if (!(ref = strchr(new_, ' ')))
		return 0;
	*ref++ = 0;
	if (!oid_ok(old) || !oid_ok(new_) || !*ref || strchr(ref, ' '))
		return 0;
	r->old = old;
	r->new_ = new_;
	r->ref = ref;
	return kind;
}

int push_report_failed(char *text, size_t len, struct push_ref *out, int max)
{
	struct push_ref r;
	char *p = text, *end = text + len, *nl;
	int n = 0, kind;

	text[len] = 0;
	/* pre-receive writes before post-receive: the accepted refs come first, and each update
	 * strikes its ref off (keeping the push's order). */
	for (; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			break;  /* a line cut short: the hook died writing it */
		*nl = 0;
		kind = cut(p, (size_t)(nl - p), &r);
		if (kind == 1 && n < max) {
			out[n++] = r;
		} else if (kind == 2) {
			for (int i = 0; i < n; i++)
				if (!strcmp(out[i].ref, r.ref)) {
					memmove(out + i, out + i + 1, (size_t)(--n - i) * sizeof(*out));
					break;
				}
		}
	}
	return n;
}
