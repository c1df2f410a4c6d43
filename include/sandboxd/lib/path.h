/* path.h: the lexical normalisation of the paths that sandbox file read and write take.
 *
 * A path is relative to PATH_BASE or absolute. "." and empty components are dropped, ".."
 * removes the component before it (at the root it stays at the root: the sandbox's own
 * filesystem is the boundary, not /workspace/repo). No symbolic link is looked at: Docker
 * resolves those inside the container. */
#ifndef SANDBOXD_PATH_H
#define SANDBOXD_PATH_H
#include <stddef.h>
#include "sandboxd/common/err.h"
#include "sandboxd/lib/pool.h"

#define PATH_BASE "/workspace/repo"
#define PATH_IN_MAX 4096   /* bytes in a path as the client gives it */
#define PATH_COMPONENT_MAX 255  /* bytes in one component (NAME_MAX) */
/* Bytes in a result, without its NUL: a relative path gains PATH_BASE and a '/'. */
#define PATH_OUT_MAX (sizeof(PATH_BASE) + PATH_IN_MAX)

/* The normalised form of path, from pool p: absolute, NUL-terminated, no ".", ".." or
 * empty component, no trailing '/' ("/" for the root itself), at most PATH_OUT_MAX bytes.
 * Normalising a result again gives it back unchanged (when it is at most PATH_IN_MAX bytes:
 * a longer one is refused as any input that long). NULL with e: ERR_INVALID when path
 * is empty or longer than PATH_IN_MAX bytes, ERR_NOMEM when the pool is exhausted. */
char *path_normalize(struct pool *p, const char *path, struct err *e);

#endif
