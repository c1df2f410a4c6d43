/* fileops.c: file read, write, list and remove, as the agent's user (the sandbox's): the
 * kernel decides what is allowed. A final component that is a symbolic link is not
 * followed (O_NOFOLLOW): a read refuses it, a write replaces the link itself (rename). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "agent.h"
#include "sandboxd/common/agentwire.h"
#include "sandboxd/common/hex.h"
#include "sandboxd/common/banned.h"

/* An errno about path as an error frame's code and words. */
static void path_error(struct conn *c, int err, const char *path)
{
	char msg[AP_PATH_MAX + 64];
	int code = err == ENOENT ? ERR_NOTFOUND : err == ENOTDIR ? ERR_NOTDIR :
		   err == EACCES || err == EPERM || err == EROFS ? ERR_DENIED :
		   err == ELOOP ? ERR_INVALID : err == EISDIR ? ERR_EXISTS : ERR_INVALID;

	if (err == ENOENT)
		snprintf(msg, sizeof(msg), "no such file: %s", path);
	else if (err == ELOOP)
		snprintf(msg, sizeof(msg), "not a regular file (a symbolic link): %s", path);
	else if (err == EISDIR)
		snprintf(msg, sizeof(msg), "is a directory: %s", path);
	else
		snprintf(msg, sizeof(msg), "%s: %s", path, strerror(err));
	conn_error(c, code, msg);
}

static int path_ok(struct conn *c, const char *path)
{
	if (path[0] == '/' && strlen(path) < AP_PATH_MAX)
		return 1;
	conn_error(c, ERR_INVALID, "a path must be absolute and shorter than 4096 bytes");
	return 0;
}

static int send_end(struct conn *c, int trunc)
{
	unsigned char b[AP_HDR + 16];
	struct ap_enc w;

	agentproto_enc_init(&w, b, sizeof(b), AP_T_END, c->stream);
	if (trunc)
		agentproto_put_num(&w, AP_F_TRUNC, 1);
	return agentwire_send(c->fd, &w, AGENT_IO_MS, NULL);
}

void fileops_read(struct conn *c, const struct ap_msg *m)
{
	const char *path = m->str[AP_F_PATH];
	unsigned char b[AP_HDR + 64];
	struct ap_enc w;
	struct stat st;
	uint64_t left;
	int fd;

	if (!path_ok(c, path))
		return;
	/* O_NONBLOCK: a FIFO must not hang the open; it is refused below anyway. */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0)
		return path_error(c, errno, path);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return path_error(c, S_ISDIR(st.st_mode) ? EISDIR : ELOOP, path);
	}
	if ((uint64_t)st.st_size > m->num[AP_F_LIMIT]) {
		close(fd);
		return conn_error(c, ERR_TOOBIG, "file is larger than the limit");
	}
	agentproto_enc_init(&w, b, sizeof(b), AP_T_FINFO, c->stream);
	agentproto_put_num(&w, AP_F_SIZE, (uint64_t)st.st_size);
	agentproto_put_num(&w, AP_F_MODE, st.st_mode & 07777);
	left = (uint64_t)st.st_size;
	if (agentwire_send(c->fd, &w, AGENT_IO_MS, NULL)) {
		close(fd);
		return;                    /* the worker is gone */
	}
	/* The size of what was opened; a file that shrinks meanwhile fails the read. */
	while (left) {
		char d[AP_DATA_MAX];
		ssize_t n = read(fd, d, left < sizeof(d) ? (size_t)left : sizeof(d));

		if (n <= 0) {
			close(fd);
			return conn_error(c, ERR_FAIL, "the file changed while it was read");
		}
		if (agentwire_send_raw(c->fd, AP_T_DATA, c->stream, d, (size_t)n, AGENT_IO_MS,
				       NULL))
			break;
		left -= (uint64_t)n;
	}
	close(fd);
	if (!left && send_end(c, 0)) {
		/* the worker is gone */
	}
}

/* Creates path's parents (each as the user would with mkdir -p): 0 or an errno. */
static int make_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		struct stat st;

		*s = 0;
		if (mkdir(path, 0755) && errno != EEXIST) {
			int err = errno;

			*s = '/';
			return err;
		}
		if (errno == EEXIST && stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
			*s = '/';
			return ENOTDIR;
		}
		*s = '/';
	}
	return 0;
}

/* The worker's DATA frames, exactly size bytes, then END, into fd. 0, or an error code. */
static int receive(struct conn *c, int fd, uint64_t size, struct err *e)
{
	struct agentwire_wait wt = { 0, NULL, NULL };
	struct ap_hdr h;
	int rc;

	for (;;) {
		wt.deadline_ms = agentwire_now_ms() + AGENT_IO_MS;
		if ((rc = agentwire_read(c->fd, c->buf, AP_DATA_MAX, AP_DATA_MAX, &wt, &h, e)))
			return rc;
		if (h.stream != c->stream)
			return err_set(e, ERR_INVALID, "a frame of another stream");
		if (h.type == AP_T_END)
			return size ? err_set(e, ERR_INVALID, "the data ended short") : 0;
		if (h.type != AP_T_DATA || h.len > size)
			return err_set(e, ERR_INVALID, "more data than the size said");
		if (write(fd, c->buf, h.len) != (ssize_t)h.len)
			return err_set(e, ERR_INVALID, "write: %s", strerror(errno));
		size -= h.len;
	}
}

/* A temporary file beside path: its fd, its name in tmp; -1 with errno. */
static int open_temp(const char *path, char tmp[AP_PATH_MAX + 64])
{
	unsigned char r[8];
	char h[2 * sizeof(r) + 1];
	const char *slash = strrchr(path, '/');

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return -1;
	hex_encode(h, r, sizeof(r));
	snprintf(tmp, AP_PATH_MAX + 64, "%.*s/.sandboxd-write.%s", (int)(slash - path), path, h);
	return open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

void fileops_write(struct conn *c, const struct ap_msg *m)
{
	char path[AP_PATH_MAX], tmp[AP_PATH_MAX + 64];
	struct err e = { .msg = "" };
	struct stat st;
	int fd = -1, rc, err;

	if (!path_ok(c, m->str[AP_F_PATH]))
		return;
	if (m->num[AP_F_MODE] > 07777 || m->num[AP_F_SIZE] > AGENT_FILE_MAX)
		return conn_error(c, ERR_INVALID, "bad mode or size");
	snprintf(path, sizeof(path), "%s", m->str[AP_F_PATH]);
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return path_error(c, EISDIR, path);
	if ((err = make_parents(path)))
		return path_error(c, err, path);
	if ((fd = open_temp(path, tmp)) < 0)
		return path_error(c, errno, path);
	if ((rc = receive(c, fd, m->num[AP_F_SIZE], &e))) {
		conn_error(c, rc, e.msg);
		goto fail;
	}
	err = fchmod(fd, (mode_t)m->num[AP_F_MODE]) ? errno : 0;
	if (close(fd) && !err)
		err = errno;
	fd = -1;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		path_error(c, err, path);
		goto fail;
	}
	if (send_end(c, 0)) {
		/* the worker is gone; the file is in place */
	}
	return;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
}

/* The walk of a list: where entries go, how many went. */
struct walk {
	struct conn *c;
	unsigned depth, count;
	int trunc, failed;
};

static int entry_type(mode_t m)
{
	return S_ISREG(m) ? 1 : S_ISDIR(m) ? 2 : S_ISLNK(m) ? 3 : 4;
}

/* dir's entries (path, without a trailing '/'), then each subdirectory's up to w->depth
 * levels; symbolic links to directories are listed, never entered. */
static void walk_dir(struct walk *w, const char *dir, unsigned level)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while (!w->failed && !w->trunc && (de = readdir(d))) {
		char path[AP_PATH_MAX], b[AP_HDR + AP_PATH_MAX + 128];
		struct ap_enc enc;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
			     de->d_name) >= (int)sizeof(path) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (w->count == AGENT_LIST_MAX) {
			w->trunc = 1;
			break;
		}
		agentproto_enc_init(&enc, (unsigned char *)b, sizeof(b), AP_T_FENTRY,
				    w->c->stream);
		agentproto_put_str(&enc, AP_F_NAME, path);
		agentproto_put_num(&enc, AP_F_FTYPE, (uint64_t)entry_type(st.st_mode));
		agentproto_put_num(&enc, AP_F_SIZE, (uint64_t)st.st_size);
		agentproto_put_num(&enc, AP_F_MODE, st.st_mode & 07777);
		agentproto_put_num(&enc, AP_F_MTIME, (uint64_t)st.st_mtime);
		w->failed = agentwire_send(w->c->fd, &enc, AGENT_IO_MS, NULL);
		w->count++;
		if (S_ISDIR(st.st_mode) && level + 1 < w->depth)
			walk_dir(w, path, level + 1);
	}
	closedir(d);
}

void fileops_list(struct conn *c, const struct ap_msg *m)
{
	struct walk w = { .c = c, .depth = (unsigned)m->num[AP_F_DEPTH] };
	const char *path = m->str[AP_F_PATH];
	struct stat st;

	if (!path_ok(c, path))
		return;
	if (w.depth < 1 || w.depth > 8)
		return conn_error(c, ERR_INVALID, "depth must be 1..8");
	if (lstat(path, &st))
		return path_error(c, errno, path);
	if (!S_ISDIR(st.st_mode))
		return path_error(c, ENOTDIR, path);
	/* A directory the user may not read is refused, not listed empty; below it, what
	 * cannot be read is left out. */
	if (access(path, R_OK | X_OK))
		return path_error(c, errno, path);
	walk_dir(&w, path, 0);
	if (!w.failed && send_end(c, w.trunc)) {
		/* the worker is gone */
	}
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path) ? errno : 0;
}

void fileops_remove(struct conn *c, const struct ap_msg *m)
{
	const char *path = m->str[AP_F_PATH];
	struct stat st;
	int err = 0;

	if (!path_ok(c, path))
		return;
	if (!strcmp(path, "/"))
		return conn_error(c, ERR_INVALID, "will not remove /");
	if (lstat(path, &st))
		return path_error(c, errno, path);
	if (!S_ISDIR(st.st_mode))
		err = unlink(path) ? errno : 0;
	else if (m->num[AP_F_RECURSIVE])
		/* FTW_PHYS: a symbolic link inside is removed, never followed. */
		err = nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	else if (rmdir(path))
		err = errno;
	/* ERR_EXISTS, which no other refusal of a remove uses: the worker tells it apart. */
	if (err == ENOTEMPTY || err == EEXIST)
		return conn_error(c, ERR_EXISTS, "directory not empty");
	if (err)
		return path_error(c, err < 0 ? errno : err, path);
	if (send_end(c, 0)) {
		/* the worker is gone */
	}
}
