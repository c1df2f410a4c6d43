/* tar.c: a one-file ustar writer and a bounded, incremental ustar/pax reader
 * (POSIX.1-2008 "pax" format, ustar header layout; GNU base-256 numbers when reading). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/proto/tar.h"
#include "sandboxd/common/banned.h"

/* Offsets and lengths of the ustar header fields. */
#define H_NAME 0
#define H_MODE 100
#define H_UID 108
#define H_GID 116
#define H_SIZE 124
#define H_MTIME 136
#define H_CHKSUM 148
#define H_TYPE 156
#define H_LINK 157
#define H_MAGIC 257
#define H_VERSION 263
#define H_UNAME 265
#define H_GNAME 297
#define H_PREFIX 345
#define NAME_LEN 100
#define PREFIX_LEN 155

enum { S_HEADER, S_PAX, S_SKIP, S_DATA, S_PAD, S_END };

static uint64_t round_block(uint64_t n)
{
	return (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

/* ---- writing ---- */

static int name_valid(const char *name, struct err *e)
{
	size_t n = strlen(name), i, start = 0;

	if (n == 0 || n > TAR_NAME_MAX)
		return err_set(e, ERR_INVALID, "file name must be 1 to %d bytes", TAR_NAME_MAX);
	for (i = 0; i <= n; i++) {
		if (i < n && name[i] != '/')
			continue;
		if (i == start || (i - start == 1 && name[start] == '.') ||
		    (i - start == 2 && name[start] == '.' && name[start + 1] == '.'))
			return err_set(e, ERR_INVALID,
				       "file name '%s' has an empty, '.' or '..' component", name);
		start = i + 1;
	}
	return 0;
}

static size_t digits(size_t n)
{
	size_t d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

/* The length of the pax record "L path=<name>\n", L counting itself. */
static size_t pax_path_len(size_t namelen)
{
	size_t base = 1 + 5 + namelen + 1, l = base + digits(base);

	return base + digits(l);
}

/* Bytes of the entries for one name of namelen bytes (a directory's with its '/'). */
static uint64_t entry_size(size_t namelen, uint64_t datalen)
{
	uint64_t n = TAR_BLOCK + round_block(datalen);

	if (namelen > NAME_LEN)
		n += TAR_BLOCK + round_block(pax_path_len(namelen));
	return n;
}

size_t tar_write_size(const char *name, size_t len)
{
	size_t n = strlen(name), i;
	uint64_t total;

	if (len > TAR_SIZE_MAX || n > TAR_NAME_MAX)
		return 0;
	total = entry_size(n, len) + 2 * TAR_BLOCK;
	for (i = 0; i < n; i++)
		if (name[i] == '/')
			total += entry_size(i + 1, 0);
	return total > SIZE_MAX ? 0 : (size_t)total;
}

static int put_header(struct buf *out, const char *name, size_t namelen, char type,
		      unsigned mode, unsigned owner, uint64_t size, int64_t mtime)
{
	unsigned char h[TAR_BLOCK];
	unsigned sum = 0;
	size_t i;

	memset(h, 0, sizeof(h));
	memcpy(h + H_NAME, name, namelen < NAME_LEN ? namelen : NAME_LEN);
	snprintf((char *)h + H_MODE, 8, "%07o", mode & 07777);
	snprintf((char *)h + H_UID, 8, "%07o", owner & 07777777);
	snprintf((char *)h + H_GID, 8, "%07o", owner & 07777777);
	snprintf((char *)h + H_SIZE, 12, "%011llo", (unsigned long long)size);
	snprintf((char *)h + H_MTIME, 12, "%011llo", (unsigned long long)mtime);
	memset(h + H_CHKSUM, ' ', 8);
	h[H_TYPE] = (unsigned char)type;
	memcpy(h + H_MAGIC, "ustar", 6);
	memcpy(h + H_VERSION, "00", 2);
	/* No user or group name: the engine goes by the numbers. */
	for (i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + H_CHKSUM, 8, "%06o", sum);  /* six digits, NUL, then the space */
	h[H_CHKSUM + 7] = ' ';
	return buf_append(out, h, sizeof(h));
}

static int put_padding(struct buf *out, uint64_t len)
{
	static const char zeros[TAR_BLOCK];
	size_t pad = (size_t)(round_block(len) - len);

	return pad ? buf_append(out, zeros, pad) : 0;
}

/* An entry's headers: a pax header first when the name does not fit the ustar name field,
 * then the ustar header saying size bytes follow. */
static int put_entry_head(struct buf *out, const char *name, size_t namelen, char type,
			  unsigned mode, unsigned owner, int64_t mtime, uint64_t size)
{
	int rc;

	if (namelen > NAME_LEN) {
		size_t rl = pax_path_len(namelen);
		char lenstr[24];
		int n = snprintf(lenstr, sizeof(lenstr), "%zu path=", rl);

		if ((rc = put_header(out, "././@PaxHeader", 14, 'x', 0644, owner, rl, mtime)) ||
		    (rc = buf_append(out, lenstr, (size_t)n)) ||
		    (rc = buf_append(out, name, namelen)) ||
		    (rc = buf_append(out, "\n", 1)) ||
		    (rc = put_padding(out, rl)))
			return rc;
	}
	return put_header(out, name, namelen, type, mode, owner, size, mtime);
}

int tar_write_head(struct buf *out, const char *name, unsigned mode, unsigned owner,
		   int64_t mtime, size_t len, struct err *e)
{
	size_t start = out->len, n, i;
	char dir[TAR_NAME_MAX + 2];
	int rc;

	if ((rc = name_valid(name, e)))
		return rc;
	if (mtime < 0 || (uint64_t)mtime > 077777777777ULL)
		return err_set(e, ERR_INVALID, "mtime %lld is out of range", (long long)mtime);
	if (len > TAR_SIZE_MAX)
		return err_set(e, ERR_TOOBIG, "'%s' is larger than a tar entry can hold", name);
	n = strlen(name);
	for (i = 0; i < n; i++) {
		if (name[i] != '/')
			continue;
		memcpy(dir, name, i);
		dir[i] = '/';
		dir[i + 1] = 0;
		if ((rc = put_entry_head(out, dir, i + 1, TAR_DIR, 0755, owner, mtime, 0)))
			goto fail;
	}
	/* The file's headers alone: its bytes and their padding come after. */
	if ((rc = put_entry_head(out, name, n, TAR_FILE, mode & 0777, owner, mtime, len)))
		goto fail;
	return 0;
fail:
	out->len = start;
	if (out->data)
		out->data[start] = 0;
	return rc == ERR_NOMEM ? err_set(e, rc, "out of memory writing an archive of '%s'", name)
			       : err_set(e, rc, "an archive of '%s' is too large", name);
}

int tar_write_tail(struct buf *out, size_t len, struct err *e)
{
	static const char zeros[2 * TAR_BLOCK];
	size_t start = out->len;
	int rc;

	if ((rc = put_padding(out, len)) || (rc = buf_append(out, zeros, sizeof(zeros)))) {
		out->len = start;
		if (out->data)
			out->data[start] = 0;
		return err_set(e, rc, rc == ERR_NOMEM ? "out of memory writing an archive"
						      : "an archive is too large");
	}
	return 0;
}

int tar_write_file(struct buf *out, const char *name, unsigned mode, unsigned owner,
		   int64_t mtime, const void *data, size_t len, struct err *e)
{
	size_t start = out->len, total;
	int rc;

	if ((rc = name_valid(name, e)))
		return rc;
	if (len > TAR_SIZE_MAX)
		return err_set(e, ERR_TOOBIG, "'%s' is larger than a tar entry can hold", name);
	total = tar_write_size(name, len);
	if (total == 0 || total > out->max - out->len)
		return err_set(e, ERR_TOOBIG, "an archive of '%s' (%zu bytes) is too large", name, len);
	if ((rc = tar_write_head(out, name, mode, owner, mtime, len, e)))
		return rc;
	if ((len && (rc = buf_append(out, data, len))) || (rc = tar_write_tail(out, len, e))) {
		out->len = start;
		if (out->data)
			out->data[start] = 0;
		return err_set(e, rc, rc == ERR_NOMEM ? "out of memory writing an archive of '%s'"
						      : "an archive of '%s' is too large", name);
	}
	return 0;
}

/* ---- reading ---- */

void tar_file_release(struct tar_file *f)
{
	free(f->data);
	f->data = NULL;
}

void tar_reader_init(struct tar_reader *r, size_t max_size)
{
	memset(r, 0, sizeof(*r));
	r->max_size = max_size;
	r->state = S_HEADER;
	buf_init(&r->pax, TAR_PAX_MAX);
	buf_init(&r->content, 0);
}

void tar_reader_release(struct tar_reader *r)
{
	buf_release(&r->pax);
	buf_release(&r->content);
	tar_file_release(&r->file);
}

/* A numeric header field of n bytes: octal digits with optional leading spaces and a
 * space or NUL after them, or GNU base-256 (first byte 0x80). Above max: ERR_FAIL. */
static int parse_num(const unsigned char *p, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (p[0] & 0x80) {
		if (p[0] != 0x80)
			return ERR_FAIL;  /* negative, or more than we could ever accept */
		for (i = 1; i < n; i++) {
			if (v > (max >> 8))
				return ERR_FAIL;
			v = v << 8 | p[i];
		}
		*out = v;
		return v <= max ? 0 : ERR_FAIL;
	}
	while (i < n && p[i] == ' ')
		i++;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
		if (v > (max - (uint64_t)(p[i] - '0')) / 8)
			return ERR_FAIL;
		v = v * 8 + (uint64_t)(p[i] - '0');
	}
	for (; i < n; i++)
		if (p[i] != ' ' && p[i] != 0)
			return ERR_FAIL;
	*out = v;
	return 0;
}

static int block_is_zero(const unsigned char *b)
{
	size_t i;

	for (i = 0; i < TAR_BLOCK; i++)
		if (b[i])
			return 0;
	return 1;
}

static int fail(struct tar_reader *r, int code)
{
	r->failed = code;
	return code;
}

/* Parses the records of a pax extended header ("LEN KEY=VALUE\n"); keeps path and size. */
static int parse_pax(struct tar_reader *r, struct err *e)
{
	const char *p = r->pax.data ? r->pax.data : "";
	size_t left = r->pax.len;

	while (left > 0) {
		size_t len = 0, i = 0, klen;
		const char *key, *val, *eq;

		while (i < left && i < 8 && p[i] >= '0' && p[i] <= '9')
			len = len * 10 + (size_t)(p[i++] - '0');
		if (i == 0 || i >= left || p[i] != ' ' || len <= i + 1 || len > left ||
		    p[len - 1] != '\n')
			return err_set(e, ERR_FAIL, "malformed pax record in archive");
		key = p + i + 1;
		eq = memchr(key, '=', (size_t)(p + len - 1 - key));
		if (!eq)
			return err_set(e, ERR_FAIL, "malformed pax record in archive");
		klen = (size_t)(eq - key);
		val = eq + 1;
		size_t vlen = (size_t)(p + len - 1 - val);
		if (klen == 4 && memcmp(key, "path", 4) == 0) {
			if (vlen > TAR_NAME_MAX || memchr(val, 0, vlen))
				return err_set(e, ERR_FAIL, "pax path in archive is malformed or too long");
			memcpy(r->pax_path, val, vlen);
			r->pax_path[vlen] = 0;
			r->pax_has_path = vlen > 0;
		} else if (klen == 4 && memcmp(key, "size", 4) == 0) {
			uint64_t v = 0;
			size_t j;

			if (vlen == 0 || vlen > 19)
				return err_set(e, ERR_FAIL, "pax size in archive is malformed");
			for (j = 0; j < vlen; j++) {
				if (val[j] < '0' || val[j] > '9')
					return err_set(e, ERR_FAIL, "pax size in archive is malformed");
				v = v * 10 + (uint64_t)(val[j] - '0');
			}
			r->pax_size = v;
			r->pax_has_size = 1;
		}
		p += len;
		left -= len;
	}
	return 0;
}

/* Called when the current entry's data has all arrived. */
static int entry_done(struct tar_reader *r, struct err *e)
{
	int rc;

	switch (r->state) {
	case S_PAX:
		if ((rc = parse_pax(r, e)))
			return rc;
		r->pax_pending = 1;
		buf_release(&r->pax);
		buf_init(&r->pax, TAR_PAX_MAX);
		break;
	case S_DATA:
		r->entries++;
		break;
	default:
		break;
	}
	r->state = r->pad ? S_PAD : S_HEADER;
	return 0;
}

static void field_str(char *out, const unsigned char *p, size_t n)
{
	size_t l = strnlen((const char *)p, n);

	memcpy(out, p, l);
	out[l] = 0;
}

/* The numbers of a header block that is not the end: its magic and checksum checked.
 * *posix: the POSIX magic (whose prefix field extends the name), not the old GNU one. */
static int header_fields(const unsigned char *h, int *posix, uint64_t *size, uint64_t *mode,
			 uint64_t *mtime, struct err *e)
{
	uint64_t sum;
	unsigned usum = 0;
	int ssum = 0;

	*posix = memcmp(h + H_MAGIC, "ustar\0" "00", 8) == 0;
	if (!*posix && memcmp(h + H_MAGIC, "ustar  \0", 8) != 0)
		return err_set(e, ERR_FAIL, "malformed archive: not a ustar header");
	/* Old writers summed signed chars; either sum is accepted, the checksum field read as
	 * spaces. */
	for (size_t i = 0; i < TAR_BLOCK; i++) {
		unsigned char c = i >= H_CHKSUM && i < H_CHKSUM + 8 ? ' ' : h[i];
		usum += c;
		ssum += (signed char)c;
	}
	if (parse_num(h + H_CHKSUM, 8, 07777777, &sum) ||
	    (sum != usum && (int64_t)sum != ssum))
		return err_set(e, ERR_FAIL, "malformed archive: header checksum mismatch");
	if (parse_num(h + H_SIZE, 12, UINT64_MAX, size) ||
	    parse_num(h + H_MODE, 8, 07777777, mode) ||
	    parse_num(h + H_MTIME, 12, INT64_MAX, mtime))
		return err_set(e, ERR_FAIL, "malformed archive: bad numeric field in header");
	return 0;
}

/* A pax header ('x': for the next entry, kept; 'g': global, skipped) of size bytes. */
static int pax_header(struct tar_reader *r, char type, uint64_t size, struct err *e)
{
	if (size > TAR_PAX_MAX)
		return err_set(e, ERR_FAIL, "pax header of %llu bytes in archive is too large",
			       (unsigned long long)size);
	r->state = type == 'x' ? S_PAX : S_SKIP;
	r->remaining = size;
	r->pad = (size_t)(round_block(size) - size);
	if (type == 'x')
		r->pax_has_path = r->pax_has_size = 0;
	return r->remaining ? 0 : entry_done(r, e);
}

/* The entry's name into r->file.name: the pending pax path, or prefix/name. */
static void entry_name(struct tar_reader *r, const unsigned char *h, int posix)
{
	char name[NAME_LEN + 1], prefix[PREFIX_LEN + 1];

	if (r->pax_pending && r->pax_has_path) {
		memcpy(r->file.name, r->pax_path, strlen(r->pax_path) + 1);
		return;
	}
	field_str(name, h + H_NAME, NAME_LEN);
	field_str(prefix, h + H_PREFIX, PREFIX_LEN);
	if (posix && prefix[0])
		snprintf(r->file.name, sizeof(r->file.name), "%s/%s", prefix, name);
	else
		snprintf(r->file.name, sizeof(r->file.name), "%s", name);
}

/* Anything but a regular file: ERR_INVALID for what a caller may name to its client (with
 * r->type telling which), ERR_FAIL for what has no business in the archive. */
static int refuse_type(struct tar_reader *r, char type, struct err *e)
{
	r->type = type;
	if (type == TAR_DIR)
		return err_set(e, ERR_INVALID, "'%s' is a directory", r->file.name);
	if (type == TAR_SYMLINK)
		return err_set(e, ERR_INVALID, "'%s' is a symbolic link", r->file.name);
	if (type == TAR_HARDLINK || (type >= TAR_CHAR && type <= TAR_FIFO))
		return err_set(e, ERR_INVALID, "'%s' is not a regular file", r->file.name);
	return err_set(e, ERR_FAIL, "unsupported entry type %d in archive", (int)(unsigned char)type);
}

/* A whole header block has arrived in r->block. */
static int header(struct tar_reader *r, struct err *e)
{
	const unsigned char *h = r->block;
	uint64_t size, mode, mtime;
	char type = (char)h[H_TYPE];
	int posix, rc;

	if (block_is_zero(h)) {
		if (r->pax_pending)
			return err_set(e, ERR_FAIL, "archive ends after a pax header");
		r->state = S_END;
		return 0;
	}
	if ((rc = header_fields(h, &posix, &size, &mode, &mtime, e)))
		return rc;
	if (type == 'x' || type == 'g')
		return pax_header(r, type, size, e);

	/* A real entry: its name and size, overridden by a preceding pax header. */
	entry_name(r, h, posix);
	if (r->pax_pending && r->pax_has_size)
		size = r->pax_size;
	r->pax_pending = 0;
	if (r->entries > 0)
		return err_set(e, ERR_FAIL, "archive holds more than one entry ('%s')", r->file.name);
	if (type != TAR_FILE && type != '\0' && type != '7')
		return refuse_type(r, type, e);
	r->type = TAR_FILE;
	r->file.mode = (unsigned)(mode & 07777);
	r->file.mtime = (int64_t)mtime;
	r->file.size = size;
	if (size > r->max_size)
		return err_set(e, ERR_TOOBIG, "'%s' is %llu bytes, more than the limit of %zu",
			       r->file.name, (unsigned long long)size, r->max_size);
	buf_release(&r->content);
	buf_init(&r->content, (size_t)size);
	/* The size is known (and within the limit): one allocation, not a doubling series. */
	if (!r->sink && size && buf_reserve(&r->content, (size_t)size))
		return err_set(e, ERR_NOMEM, "out of memory reading '%s'", r->file.name);
	r->state = S_DATA;
	r->remaining = size;
	r->pad = (size_t)(round_block(size) - size);
	return r->remaining ? 0 : entry_done(r, e);
}

int tar_reader_feed(struct tar_reader *r, const void *data, size_t len, struct err *e)
{
	const unsigned char *p = data;
	int rc;

	if (r->failed)
		return err_set(e, r->failed, "archive reader already failed");
	while (len > 0) {
		size_t take;

		switch (r->state) {
		case S_HEADER:
			take = TAR_BLOCK - r->block_len;
			take = take < len ? take : len;
			memcpy(r->block + r->block_len, p, take);
			r->block_len += take;
			if (r->block_len == TAR_BLOCK) {
				r->block_len = 0;
				if ((rc = header(r, e)))
					return fail(r, rc);
			}
			break;
		case S_PAX:
		case S_SKIP:
		case S_DATA:
			take = r->remaining < len ? (size_t)r->remaining : len;
			if (r->state == S_PAX && (rc = buf_append(&r->pax, p, take)))
				return fail(r, err_set(e, rc == ERR_NOMEM ? ERR_NOMEM : ERR_FAIL,
						       "pax header in archive is too large"));
			if (r->state == S_DATA && r->sink && take &&
			    (rc = r->sink(r->sink_arg, r, (const char *)p, take, e)))
				return fail(r, rc);
			if (r->state == S_DATA && !r->sink && (rc = buf_append(&r->content, p, take)))
				return fail(r, err_set(e, rc == ERR_NOMEM ? ERR_NOMEM : ERR_FAIL,
						       "out of memory reading '%s'", r->file.name));
			r->remaining -= take;
			if (r->remaining == 0 && (rc = entry_done(r, e)))
				return fail(r, rc);
			break;
		case S_PAD:
			take = r->pad < len ? r->pad : len;
			r->pad -= take;
			if (r->pad == 0)
				r->state = S_HEADER;
			break;
		default:  /* S_END: what follows the end block (more zeros) is ignored */
			take = len;
			break;
		}
		p += take;
		len -= take;
	}
	return 0;
}

int tar_reader_finish(struct tar_reader *r, struct tar_file *out, struct err *e)
{
	if (r->failed)
		return err_set(e, r->failed, "archive reader already failed");
	if (r->state != S_END) {
		if (r->state == S_HEADER && r->block_len == 0 && r->entries)
			return err_set(e, ERR_FAIL, "truncated archive: no end-of-archive block");
		return err_set(e, ERR_FAIL, "truncated archive");
	}
	if (r->entries == 0)
		return err_set(e, ERR_FAIL, "the archive holds no file");
	memcpy(out->name, r->file.name, sizeof(out->name));
	out->mode = r->file.mode;
	out->mtime = r->file.mtime;
	out->size = r->file.size;
	out->data = NULL;
	if (r->sink)
		return 0;
	out->data = buf_detach(&r->content, NULL);
	if (!out->data && !(out->data = calloc(1, 1)))
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

struct tar_reader *tar_reader_new(size_t max_size)
{
	struct tar_reader *r = malloc(sizeof(*r));

	if (r)
		tar_reader_init(r, max_size);
	return r;
}

int tar_reader_close(struct tar_reader *r, int rc, struct tar_file *out, char *type,
		     struct err *e)
{
	if (rc == 0)
		rc = tar_reader_finish(r, out, e);
	if (rc == ERR_INVALID && type)
		*type = r->type;
	if (rc == ERR_TOOBIG)
		out->size = r->file.size;
	tar_reader_release(r);
	free(r);
	return rc;
}
