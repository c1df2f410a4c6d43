/* tar_whole.h: a whole archive in memory through tar.h's reader in one feed, as the Docker
 * client reads an archive it was given whole; shared by test_tar and fuzz_tar, since the
 * reader (feed, then close) is the only API tar.h has. */
#ifndef SANDBOXD_TEST_TAR_WHOLE_H
#define SANDBOXD_TEST_TAR_WHOLE_H
#include "sandboxd/common/err.h"
#include "sandboxd/proto/tar.h"

static inline int read_whole(const void *d, size_t n, size_t max, struct tar_file *f,
			     char *type, struct err *e)
{
	struct tar_reader *r = tar_reader_new(max);

	f->data = NULL;
	return r ? tar_reader_close(r, tar_reader_feed(r, d, n, e), f, type, e)
		 : err_set(e, ERR_NOMEM, "out of memory");
}

#endif
