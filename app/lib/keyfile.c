/* keyfile.c: reading a key file of the service's (keyfile.h). */
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sandboxd/lib/keyfile.h"
#include "sandboxd/common/banned.h"

int keyfile_read(const char *path, char *buf, size_t max, size_t *len, struct err *e)
{
	struct stat st;
	size_t n = 0;
	ssize_t got = 1;
	int fd, rc = 0;

	*len = 0;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return err_set(e, ERR_INVALID, "cannot open '%s': %m", path);
	if (fstat(fd, &st))
		rc = err_set(e, ERR_INVALID, "cannot stat '%s': %m", path);
	else if (!S_ISREG(st.st_mode))
		rc = err_set(e, ERR_INVALID, "'%s' is not a regular file", path);
	else if (st.st_uid != geteuid())
		rc = err_set(e, ERR_INVALID, "'%s' must be owned by the service's user (uid %u), not uid %u",
			     path, (unsigned)geteuid(), (unsigned)st.st_uid);
	else if (st.st_mode & 077)
		rc = err_set(e, ERR_INVALID, "'%s' must be readable by its owner only (mode %04o, want 0600)",
			     path, (unsigned)(st.st_mode & 07777));
	/* One byte past max tells a file that is too large. */
	while (!rc && n <= max && (got = read(fd, buf + n, max + 1 - n)) != 0) {
		if (got < 0)
			rc = err_set(e, ERR_INVALID, "cannot read '%s': %m", path);
		else
			n += (size_t)got;
		if (n == max + 1)
			break;
	}
	close(fd);
	if (!rc && n > max)
		rc = err_set(e, ERR_INVALID, "'%s' is larger than %zu bytes", path, max);
	buf[rc ? 0 : n] = 0;
	*len = rc ? 0 : n;
	return rc;
}
