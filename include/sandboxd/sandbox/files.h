/* files.h: the file API's work (SPEC.md §4 "Read and write", and "Files, raw" for list
 * and remove), without HTTP, acting as the sandbox's user exactly as exec does: a read is
 * app/sandbox/sh/file-read.sh streaming the bytes out of an exec; a write is staged through the
 * engine's archive API into /.sandboxd-stage (root's, where the user cannot swap anything)
 * and moved into place by app/sandbox/sh/file-write.sh as the user; a list and a remove are
 * app/sandbox/sh/file-list.sh and file-remove.sh. So the kernel, not the service, decides what the
 * user may read or write.
 *
 * Errors: 0, or ERR_NOTFOUND (no such file), ERR_NOTDIR (a parent is not a directory),
 * ERR_EXISTS (the path is a directory), ERR_INVALID (not a regular file: *what says which),
 * ERR_DENIED (the user may not), ERR_TOOBIG (over the limit), and the engine's codes; a
 * write the kernel refused otherwise (a full disk) is ERR_INVALID with its words.
 *
 * With via->network set, each goes through the sandbox's agent first (sbagent.h; the same
 * user, the same answers), and through the engine as above when the agent cannot be
 * reached or breaks off before a read's first byte (a write only appears whole, so any
 * broken write is tried again there). via->backend and via->agent_error say what served
 * it, for the audit row. */
#ifndef SANDBOXD_FILES_H
#define SANDBOXD_FILES_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/flist.h"
#include "sandboxd/sandbox/sandbox.h"

/* Called with the file's size once, before any byte (start), then with its bytes as they
 * come; non-zero stops the read with that code. */
struct files_sink {
	int (*start)(void *arg, uint64_t size, struct err *e);
	int (*bytes)(void *arg, const char *p, size_t n, struct err *e);
	void *arg;
};

/* Where a write's bytes come from: data[0..size), or read (up to n bytes into p: their
 * count, 0 or negative when it has no more: a body shorter than its length, a read error)
 * until size bytes came. taken counts what was read: a write that took nothing may be tried
 * another way, one that took some cannot (the bytes are gone). */
struct files_source {
	long (*read)(void *arg, void *p, size_t n);
	void *arg;
	const unsigned char *data;
	uint64_t size;
	uint64_t taken;
};

/* Up to n of the source's next bytes into p: their count, 0 once size bytes were read,
 * -1 when read ended before size (the reader knows why). */
static inline long files_source_read(struct files_source *src, void *p, size_t n)
{
	uint64_t left = src->size - src->taken;
	long got;

	if (n > left)
		n = (size_t)left;
	if (n == 0)
		return 0;
	if (src->data) {
		memcpy(p, src->data + src->taken, n);
		got = (long)n;
	} else if ((got = src->read(src->arg, p, n)) <= 0) {
		return -1;
	}
	src->taken += (uint64_t)got;
	return got;
}

/* Which way a call goes (NULL: the engine's only) and, after it, which way it went. */
struct files_via {
	const char *network;       /* the sandbox network, for the agent's address; NULL: none */
	const char *backend;       /* out: "agent" or "docker" */
	char agent_error[256];     /* out: why the agent was asked and the engine served it */
};

/* Reads the file at abs (absolute, normalised) of at most limit bytes. *is_dir is set when
 * an ERR_INVALID was a directory. */
int files_read(const struct sandbox *s, struct files_via *via, const char *abs, size_t limit,
	       const struct files_sink *sink, int *is_dir, struct err *e)
	__attribute__((warn_unused_result));

/* Writes src's bytes at abs with mode, creating its parents, as the sandbox's user: owner
 * is its uid (boxuser.h), which the engine's path stages the bytes as. The file appears
 * whole or not at all: a source that ends short (ERR_INVALID, "the body ended before its
 * length"), a full disk or any other failure leaves nothing under the name. Through the
 * agent first; the engine's path when the agent could not be reached, or broke off before
 * it took a byte of the source. */
int files_write(const struct sandbox *s, struct files_via *via, const char *abs,
		unsigned mode, unsigned owner, struct files_source *src, struct err *e)
	__attribute__((warn_unused_result));

/* Lists the directory at abs to depth (1..8): each entry to fn as it comes (in the order
 * the directory gives them, parents before what they hold), at most FLIST_MAX; *truncated
 * when there were more. Symbolic links are listed as themselves, never followed or
 * entered; what the user may not read is left out. Through the agent as files_read; when
 * the agent broke off before its first entry, the engine's path (app/sandbox/sh/file-list.sh read
 * by flist.h) lists it again. Errors: ERR_NOTFOUND, ERR_NOTDIR (abs, or a parent, is not a
 * directory; a symbolic link to one included), ERR_DENIED, fn's own code, the engine's. */
int files_list(const struct sandbox *s, struct files_via *via, const char *abs, int depth,
	       flist_fn fn, void *arg, int *truncated, struct err *e)
	__attribute__((warn_unused_result));

/* Removes abs (never "/": ERR_INVALID), a directory only when it is empty or with
 * recursive (then with all it holds, not crossing into other filesystems); a symbolic link
 * is removed itself. Errors: ERR_NOTFOUND, ERR_EXISTS (a directory not empty), ERR_DENIED,
 * ERR_INVALID (another refusal, its words in e), the engine's. */
int files_remove(const struct sandbox *s, struct files_via *via, const char *abs,
		 int recursive, struct err *e) __attribute__((warn_unused_result));

#endif
