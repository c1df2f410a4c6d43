/* keyfile.h: reading a key the service keeps in a file of its own (the git-URL signing key,
 * the sandbox secrets' key): a regular file, not a symbolic link, owned by the service's
 * user and readable by it alone, read whole. */
#ifndef SANDBOXD_KEYFILE_H
#define SANDBOXD_KEYFILE_H
#include <stddef.h>
#include "sandboxd/common/err.h"

/* The file's bytes into buf[0..*len) (at most max; NUL-terminated, so buf holds max + 1).
 * ERR_INVALID with e naming the file and what is wrong with it. */
int keyfile_read(const char *path, char *buf, size_t max, size_t *len, struct err *e)
	__attribute__((warn_unused_result));

#endif
