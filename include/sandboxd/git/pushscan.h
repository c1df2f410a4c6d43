/* pushscan.h: push protection (SPEC §5 item 4), shared by the pre-receive hook and the REST
 * merge: every blob that new ref values newly make reachable is scanned for secrets
 * (scan.h), wherever it sits (the push's quarantine or the repository: a blob pushed
 * earlier under a tag, then added by a commit, is scanned again), whatever points at it: a
 * commit's tree, a tag, a tree or a blob ref. "Newly" means not reachable before from any
 * refs/heads/ or refs/tags/ ref (the ephemeral namespace does not count: promoting an
 * agent's branch scans it again): the walk hides the commits those reach, and each new
 * commit is diffed against its first parent. Commit and tag messages are scanned too.
 *
 * The blobs are read by up to 4 threads (each with its own repository, libgit2's rule);
 * the refusal names the first finding in walk order, as one thread would. */
#ifndef SANDBOXD_PUSHSCAN_H
#define SANDBOXD_PUSHSCAN_H
#include <stddef.h>
#include "sandboxd/proto/packscan.h"
#include "sandboxd/proto/valscan.h"

/* New commits one scan walks; past them the update is refused. */
#define PUSHSCAN_COMMITS_MAX 1000000

/* One new ref value. */
struct pushscan_ref {
	const char *ref;   /* the full stored name: named in a refusal */
	const char *new_;  /* 40 hex digits; the zero id (a deletion) brings nothing */
};

/* Blobs of the push's pack already scanned clean while the pack streamed in (packscan.h),
 * sorted by offset: a queued blob whose entry in the quarantine's one pack has the same
 * offset, size and CRC-32 (packread_where) is not read again; every other blob is. */
struct pushscan_scanned {
	const struct packscan_blob *blob;
	size_t n;
};

/* Scans what refs[0..n) newly make reachable in the bare repository at path (NULL: the
 * repository of the hook's environment, GIT_DIR with the push's quarantine), but for the
 * blobs in scanned (NULL: none). values (NULL or empty: none) are the secrets of the
 * sandbox that pushes (valscan.h, decision 0077): every new blob, and the whole of every
 * new commit and tag object (header and message), is searched for them too, the blobs in
 * scanned included (the scanner did not know them); a value found is named before a rule's
 * finding in the same blob. Returns 1 when the update must be refused, with a one-line
 * reason in msg (msgsz bytes) that names the rule (or the sandbox secret), the file (or
 * ref), the line and the commit, never the secret; also for more than
 * PUSHSCAN_COMMITS_MAX new commits or anything that could not be read (the scan fails
 * closed). Returns 0 when nothing was found. */
int pushscan_run(const char *path, const struct pushscan_ref *refs, size_t n,
		 const struct pushscan_scanned *scanned, const struct valscan *values, char *msg,
		 size_t msgsz) __attribute__((warn_unused_result));

#endif
