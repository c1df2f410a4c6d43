/* pushreport.h: what a push's hooks tell the worker that runs git. The pre-receive hook
 * writes a line per ref it accepted (after their audit rows commit), the post-receive hook
 * a line per ref git then updated, both to a memory file the worker gave them as fd 3:
 *
 *     accepted <old> <new> <ref>\n      updated <old> <new> <ref>\n
 *
 * A ref accepted and never updated is one git could not write (a full disk, a lock held by
 * another push): its git.push.ref row says accepted, so the worker adds a failed one. The
 * post-receive hook runs only when some ref landed, which is why the worker, not a hook,
 * draws the conclusion. */
#ifndef SANDBOXD_PUSHREPORT_H
#define SANDBOXD_PUSHREPORT_H
#include <stddef.h>

#define PUSH_REPORT_FD 3
#define PUSH_REFS_MAX 1000           /* refs in one push: the hook refuses more */
#define PUSH_REPORT_MAX (4u << 20)   /* two lines per ref of at most 1 KiB each, with room */

struct push_ref {
	const char *old, *new_, *ref;   /* pointers into the parsed text */
};

/* Parses text[0..len) (cut into C strings in place; text[len] must be writable) and puts
 * the refs accepted but not updated in out[0..max). Returns how many. Lines that do not
 * have the shape above are ignored. */
int push_report_failed(char *text, size_t len, struct push_ref *out, int max)
	__attribute__((warn_unused_result));

#endif
