/* files.h: the file API's work (SPEC.md §4 "Read and write"), without HTTP, acting as the
 * sandbox's user exactly as exec does: a read is app/sh/file-read.sh streaming the bytes
 * out of an exec; a write is staged through the engine's archive API into
 * /.sandboxd-stage (root's, where the user cannot swap anything) and moved into place by
 * app/sh/file-write.sh as the user. So the kernel, not the service, decides what the user
 * may read or write.
 *
 * Errors: 0, or ERR_NOTFOUND (no such file), ERR_NOTDIR (a parent is not a directory),
 * ERR_EXISTS (the path is a directory), ERR_INVALID (not a regular file: *what says which),
 * ERR_DENIED (the user may not), ERR_TOOBIG (over the limit), and the engine's codes; a
 * write the kernel refused otherwise (a full disk) is ERR_INVALID with its words.
 *
 * With via->network set, both go through the sandbox's agent first (sbagent.h; the same
 * user, the same answers), and through the engine as above when the agent cannot be
 * reached or breaks off before a read's first byte (a write only appears whole, so any
 * broken write is tried again there). via->backend and via->agent_error say what served
 * it, for the audit row. */
#ifndef SANDBOXD_FILES_H
#define SANDBOXD_FILES_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/err.h"
#include "sandboxd/sandbox.h"

/* Called with the file's size once, before any byte (start), then with its bytes as they
 * come; non-zero stops the read with that code. */
struct files_sink {
	int (*start)(void *arg, uint64_t size, struct err *e);
	int (*bytes)(void *arg, const char *p, size_t n, struct err *e);
	void *arg;
};

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

/* Writes data[0..len) at abs with mode, creating its parents. */
int files_write(const struct sandbox *s, struct files_via *via, const char *abs,
		unsigned mode, const unsigned char *data, size_t len, struct err *e)
	__attribute__((warn_unused_result));

#endif
