/* packread.h: whole blobs read straight from the pack files of one objects directory,
 * inflated with libdeflate (two to three times zlib's speed on whole buffers).
 *
 * For the pre-receive hook: a push's objects sit in git's quarantine as one pack that
 * index-pack has just written and checked (every object hashed, fsck run), and inflating
 * them is most of push protection's time. This reader only knows what it can do fast and
 * surely: a blob stored whole (not as a delta) in a pack with a version 2 index. Anything
 * else (a delta, a loose object, an object of another pack, a size past the caller's
 * bound, data that does not inflate to exactly the size the pack header gives) answers
 * ERR_NOTFOUND or ERR_TOOBIG, and the caller reads the object through libgit2 instead, which
 * refuses what is really broken. So using this reader never changes what is read, only
 * how fast.
 *
 * A struct packread is read-only once opened: threads share it, each with its own
 * libdeflate decompressor (those are not thread-safe). */
#ifndef SANDBOXD_PACKREAD_H
#define SANDBOXD_PACKREAD_H
#include <stddef.h>
#include <stdint.h>
#include <libdeflate.h>
#include "sandboxd/common/err.h"

#define PACKREAD_PACKS_MAX 64   /* packs mapped; objects of the others go the slow way */
#define PACKREAD_OID_LEN 20     /* SHA-1 repositories only (a SHA-256 index is skipped) */

struct packread;

/* Maps every pack under objects_dir/pack that has a well-formed version 2 index; a pack
 * that cannot be mapped or whose index or header is wrong is left out (its objects go
 * the slow way). *out is never NULL on success, even with no pack at all. ERR_NOMEM, or 0.
 * Free with packread_free. */
int packread_open(struct packread **out, const char *objects_dir, struct err *e)
	__attribute__((warn_unused_result));

/* Frees p and unmaps its packs; NULL is fine. */
void packread_free(struct packread *p);

/* Reads the blob whose 20-byte oid is given: 0 with *data (malloc'd, the caller frees it)
 * and *len set; ERR_NOTFOUND when the blob is not stored whole in one of p's packs, or its
 * entry is malformed or does not inflate to its size; ERR_TOOBIG when it is larger than
 * max bytes; ERR_NOMEM. On failure *data is NULL. */
int packread_blob(const struct packread *p, struct libdeflate_decompressor *d,
		  const unsigned char *oid, size_t max, unsigned char **data, size_t *len)
	__attribute__((warn_unused_result));

/* Where the blob oid sits when p holds exactly one pack (a push's quarantine: the pack
 * index-pack wrote from the pushed bytes): 0 with its entry's offset in that pack, the size
 * its header gives and the CRC-32 of its bytes that the index records (index-pack computed
 * it over them); ERR_NOTFOUND when p holds another number of packs, the oid is not in the
 * pack, or its entry is not a whole blob. packscan.h reports blobs the same way. */
int packread_where(const struct packread *p, const unsigned char *oid, uint64_t *offset,
		   uint64_t *size, uint32_t *crc) __attribute__((warn_unused_result));

#endif
