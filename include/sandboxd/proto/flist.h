/* flist.h: the reader of app/sandbox/sh/file-list.sh's output, the Docker path of a file listing
 * (SPEC.md §4 "Files, raw": POST …/list). The script runs as the sandbox's user, whose
 * files and programs may print anything: every record is bounded, checked and, when it
 * does not parse, dropped; nothing here trusts a length, a count or a path it is given.
 *
 * The stream is records, each ended by a NUL byte (find -printf '… %P\0', whose names may
 * hold any byte but NUL):
 *
 *     <type> <mode> <size> <mtime> <relative path>\0
 *
 * type one of f d l (file, directory, symbolic link; any other letter is "other"), mode
 * octal 0..07777, size decimal 0..2^63-1, mtime decimal seconds (an optional '-', an
 * optional fraction after a '.'), the path relative to the listed directory: not empty,
 * not starting with '/', no empty, "." or ".." component. A record is dropped when it
 * does not parse, is longer than FLIST_REC_MAX, or names a path of FLIST_PATH_MAX bytes or
 * more (the agent skips those as well). Pure: no I/O, no allocation. */
#ifndef SANDBOXD_FLIST_H
#define SANDBOXD_FLIST_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/err.h"

#define FLIST_MAX 10000              /* entries in one answer; past them, truncated */
#define FLIST_PATH_MAX 4096          /* an entry's absolute path is shorter (AP_PATH_MAX) */
#define FLIST_REC_MAX (FLIST_PATH_MAX + 96)

enum flist_type { FLIST_FILE = 1, FLIST_DIR = 2, FLIST_SYMLINK = 3, FLIST_OTHER = 4 };

/* One entry: path absolute and NUL-terminated, name its last component (inside path);
 * both valid only during the callback. */
struct flist_entry {
	const char *path;
	const char *name;
	int type;                    /* enum flist_type */
	uint64_t size;
	unsigned mode;               /* 0..07777 */
	int64_t mtime;               /* seconds since the epoch */
};
/* Non-zero stops the reading with that code. */
typedef int (*flist_fn)(void *arg, const struct flist_entry *ent);

/* The reader's state: flist_init, then flist_feed with the bytes in any pieces. */
struct flist {
	char root[FLIST_PATH_MAX];   /* the listed directory, absolute, no trailing '/' */
	size_t root_len;             /* 0 for "/" */
	flist_fn fn;
	void *arg;
	char rec[FLIST_REC_MAX];     /* the record being gathered */
	size_t n;
	int skipping;                /* the record passed FLIST_REC_MAX: dropped up to its NUL */
	char path[FLIST_PATH_MAX];   /* the entry handed to fn */
	unsigned count;              /* entries handed to fn, at most FLIST_MAX */
	int truncated;               /* a valid record came past FLIST_MAX */
	unsigned dropped;            /* records that did not parse or were too long */
};

/* Sets p up for a listing of root (absolute, normalised: path_normalize's form). 0, or
 * ERR_INVALID when root is not absolute or is FLIST_PATH_MAX bytes or longer. */
int flist_init(struct flist *p, const char *root, flist_fn fn, void *arg)
	__attribute__((warn_unused_result));

/* Reads data[0..n): each whole record that parses goes to fn (until FLIST_MAX have; one
 * more sets truncated and the rest is read and ignored). 0, or fn's non-zero code. A last
 * record without its NUL is never handed on (the script's output ends with one). */
int flist_feed(struct flist *p, const char *data, size_t n)
	__attribute__((warn_unused_result));

/* One record rec[0..n) (without its NUL) into *out's type, mode, size and mtime, and its
 * relative path as rec + *rel_off, *rel_len bytes. 0, or ERR_INVALID. */
int flist_parse_record(const char *rec, size_t n, struct flist_entry *out, size_t *rel_off,
		       size_t *rel_len) __attribute__((warn_unused_result));

#endif
