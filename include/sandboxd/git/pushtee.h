/* pushtee.h: the git worker's half of streamscan.h. While a push's body streams to git, a
 * copy of each piece goes to a scanner process (the hook binary run as STREAMSCAN_NAME),
 * which scans the pack's blobs on another core meanwhile; the hook then reads what it found
 * clean. The worker passes the next piece of the body on when git and the scanner both
 * have the last one (the scanner, two to three times faster than git's index-pack, keeps
 * the pace); a scanner that takes nothing for PUSHTEE_STUCK_MS, or fails, is let go (its
 * pipe closed), so that git is never held for it: the hook then scans what it did not
 * report, as it would have.
 *
 * All descriptors are close-on-exec in the worker; git's child gets the two the hook needs
 * (pushtee_fds), the scanner its own. Resources start at -1; pushtee_finish closes, kills
 * and reaps whatever is there. */
#ifndef SANDBOXD_PUSHTEE_H
#define SANDBOXD_PUSHTEE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sandboxd/common/err.h"

struct pushtee {
	pid_t pid;        /* the scanner, or -1 */
	int body;         /* the write end of its stdin, or -1 once let go or ended */
	int done;         /* the read end of its "done" pipe: for the hook, or -1 */
	int records;      /* the memfd it writes its records to (git's child gets a copy for
			   * the hook), or -1 */
	int64_t stuck_since;  /* its pipe has been full since then, or -1 */
};

#define PUSHTEE_STUCK_MS 1000

/* Nothing started: every field -1. */
void pushtee_init(struct pushtee *t);
/* Starts the scanner program (an absolute path): 0, or ERR_FAIL (pipe, memfd or fork
 * failed; logged by the caller, who goes on without: the hook scans it all). */
int pushtee_start(struct pushtee *t, const char *program, struct err *e)
	__attribute__((warn_unused_result));
/* A copy of up to n bytes of the body, without waiting (now: the monotonic clock, ms): how
 * many the scanner took; n once it is let go (or gone), which a pipe full since
 * PUSHTEE_STUCK_MS ago or an error does. */
size_t pushtee_write(struct pushtee *t, const void *data, size_t n, int64_t now)
	__attribute__((warn_unused_result));
/* The body is whole: the scanner reads its end. */
void pushtee_end(struct pushtee *t);
/* How many blobs the scanner has reported clean so far (for the push's audit row). */
long pushtee_count(const struct pushtee *t) __attribute__((warn_unused_result));
/* Closes what is left, ends the scanner (SIGKILL: the hook has read it, or nobody will)
 * and reaps it. */
void pushtee_finish(struct pushtee *t);

#endif
