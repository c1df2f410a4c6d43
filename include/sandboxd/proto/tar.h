/* tar.h: the few tar entries that sandbox file read and write need, bounded.
 *
 * Writing: a POSIX ustar archive of one regular file and the directory entries of its
 * parents (a pax extended header carries a name longer than 100 bytes), all owned by
 * owner:owner (the sandbox's user, boxuser.h), ready for PUT /containers/{id}/archive.
 *
 * Reading: the archive Docker answers to GET /containers/{id}/archive for one path: ustar
 * (POSIX or GNU magic) with pax extended headers ('x' applies to the next entry, 'g' is
 * ignored). It yields the one regular file's name, mode, size and content. Bounds: headers
 * are checksum-verified, numeric fields are parsed within their 8/12 bytes (octal or GNU
 * base-256) and range-checked, pax records within TAR_PAX_MAX bytes, names within
 * TAR_NAME_MAX bytes, content within the caller's limit. The reader keeps one 512-byte
 * block, the pax header and the file's content (in one allocation of the size its header
 * gives, or none when a sink takes the bytes): never more than 512 + TAR_PAX_MAX + max_size
 * bytes, whatever it is fed. No input makes it read outside
 * what it was given.
 *
 * Return codes (struct err names the thing):
 *   ERR_TOOBIG   the file is larger than the caller's limit (its size is in tar_file.size
 *                as soon as the header is read, so the handler can answer 413 early)
 *   ERR_INVALID  the archive's first entry is not a regular file: tar_reader.type says
 *                which (TAR_DIR: a directory, the handler answers 400; TAR_SYMLINK, ...)
 *   ERR_FAIL     malformed or truncated archive, more than one entry, no entry
 *   ERR_NOMEM
 */
#ifndef SANDBOXD_TAR_H
#define SANDBOXD_TAR_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"

#define TAR_BLOCK 512
#define TAR_NAME_MAX 4096        /* bytes in a path, as PATH_MAX */
#define TAR_PAX_MAX (64 * 1024)  /* bytes in one pax extended header */
#define TAR_SIZE_MAX 077777777777ULL  /* the largest size a ustar header can hold (8 GiB - 1) */

/* Entry types as in the header's typeflag. */
enum tar_type {
	TAR_NONE = 0,
	TAR_FILE = '0',
	TAR_HARDLINK = '1',
	TAR_SYMLINK = '2',
	TAR_CHAR = '3',
	TAR_BLOCKDEV = '4',
	TAR_DIR = '5',
	TAR_FIFO = '6',
};

/* Appends to out (whose max bounds the whole archive) the entries for name: one directory
 * entry (mode 0755) for each parent component, then the regular file with mode & 0777,
 * mtime (seconds since the epoch, >= 0) and len bytes of data, then the two zero blocks
 * that end an archive. name is relative ("a/b/c.txt"): no leading '/', no empty, "." or
 * ".." component, no trailing '/', at most TAR_NAME_MAX bytes.
 * Docker applies a directory entry's owner and mode to a directory that already exists:
 * PUT the archive at the deepest existing directory and name only what is below it.
 * Returns 0, ERR_INVALID (bad name or mtime), ERR_TOOBIG (len > TAR_SIZE_MAX, or out's
 * max passed; out is then left as it was), ERR_NOMEM. */
int tar_write_file(struct buf *out, const char *name, unsigned mode, unsigned owner,
		   int64_t mtime, const void *data, size_t len, struct err *e)
	__attribute__((warn_unused_result));

/* tar_write_file in three steps, for a caller that holds the file's bytes elsewhere and
 * sends the archive in pieces: tar_write_head appends everything before the bytes (the
 * directory entries, a pax header for a long name, the file's header saying len bytes),
 * the caller sends len bytes of content, and tar_write_tail appends the padding after
 * them and the end of the archive. Same arguments, checks and codes as tar_write_file; on
 * failure out is left as it was. */
int tar_write_head(struct buf *out, const char *name, unsigned mode, unsigned owner,
		   int64_t mtime, size_t len, struct err *e) __attribute__((warn_unused_result));
int tar_write_tail(struct buf *out, size_t len, struct err *e) __attribute__((warn_unused_result));

/* The bytes tar_write_file appends for a name and len, or 0 when len is too big. */
size_t tar_write_size(const char *name, size_t len);

struct tar_reader;

/* The file read out of an archive. name is NUL-terminated; data holds size bytes (plus a
 * NUL) in memory the caller owns after tar_reader_finish: free it with tar_file_release. */
struct tar_file {
	char name[TAR_NAME_MAX + 1];
	unsigned mode;           /* permission bits, & 07777 */
	int64_t mtime;
	uint64_t size;
	char *data;
};

void tar_file_release(struct tar_file *f);

/* Where a reader with a sink hands the file's bytes as they arrive, instead of keeping
 * them: r->file has the name, mode and size of the file (from its header) from the first
 * call on; a file of 0 bytes makes no call. Non-zero stops the reader with that code (the
 * sink fills e). */
typedef int (*tar_sink_fn)(void *arg, const struct tar_reader *r, const char *data, size_t n,
			   struct err *e);

/* An incremental reader: init, feed the archive's bytes in chunks of any size, finish.
 * Everything it holds is released by tar_reader_release, which is safe after any result. */
struct tar_reader {
	tar_sink_fn sink;        /* NULL: the reader keeps the content (set after init) */
	void *sink_arg;
	size_t max_size;         /* the content limit */
	int state;               /* internal */
	int failed;              /* a feed failed: every later call fails */
	int entries;             /* regular files seen */
	char type;               /* the typeflag of the entry refused with ERR_INVALID */
	unsigned char block[TAR_BLOCK];
	size_t block_len;
	uint64_t remaining;      /* bytes left of the current entry's data */
	size_t pad;              /* bytes of padding left after it */
	int pax_pending;         /* a pax header applies to the next entry */
	int pax_has_path, pax_has_size;
	uint64_t pax_size;
	char pax_path[TAR_NAME_MAX + 1];
	struct buf pax;          /* the current pax header's records */
	struct buf content;      /* the file's bytes */
	struct tar_file file;    /* name, mode, size of the file (data comes at finish) */
};

void tar_reader_init(struct tar_reader *r, size_t max_size);
/* Consumes len bytes. 0, or one of the codes above; after a failure it fails again. */
int tar_reader_feed(struct tar_reader *r, const void *data, size_t len, struct err *e)
	__attribute__((warn_unused_result));
/* After the last byte: 0 and the file in out (out->data is the caller's; NULL when a sink
 * took the bytes), or ERR_FAIL when the archive stopped early, held no file, or lacked its
 * end-of-archive block. */
int tar_reader_finish(struct tar_reader *r, struct tar_file *out, struct err *e)
	__attribute__((warn_unused_result));
void tar_reader_release(struct tar_reader *r);

/* A reader on the heap (it is large), set up for max_size; NULL when memory runs out. */
struct tar_reader *tar_reader_new(size_t max_size);
/* Ends a reader from tar_reader_new after its feeds, whose result is rc: finishes it when rc
 * is 0, then frees it. Returns the first failure; on it out->data is NULL, *type (when type
 * is not NULL) says what the entry was for ERR_INVALID, and out->size is the file's size for
 * ERR_TOOBIG. */
int tar_reader_close(struct tar_reader *r, int rc, struct tar_file *out, char *type,
		     struct err *e) __attribute__((warn_unused_result));

#endif
