/* packread.c: whole blobs straight from pack files (gitformat-pack(5)), for the hook. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sandboxd/git/packread.h"
#include "sandboxd/common/banned.h"

#define IDX_HEAD (8 + 256 * 4)          /* magic, version, fan-out table */
#define TRAILER (2 * PACKREAD_OID_LEN)  /* an index ends with two checksums */
#define OBJ_BLOB 3

struct pack {
	const unsigned char *idx, *data;  /* both mapped read-only */
	size_t idx_len, data_len;
	uint32_t n;                       /* objects */
	size_t nlarge;                    /* 8-byte offsets after the 4-byte ones */
};

struct packread {
	struct pack pack[PACKREAD_PACKS_MAX];
	int n;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static const unsigned char *map(const char *path, size_t *len)
{
	struct stat st;
	void *m = MAP_FAILED;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && (uintmax_t)st.st_size <= SIZE_MAX) {
		*len = (size_t)st.st_size;
		m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/* 1 when the index and the pack agree and every table fits in the index file: lookups
 * then need no bound checks but the large-offset index and the entry's offset. */
static int pack_valid(struct pack *k)
{
	const unsigned char *fan = k->idx + 8;
	uint32_t prev = 0;
	size_t tables;

	if (k->idx_len < IDX_HEAD + TRAILER || memcmp(k->idx, "\377tOc", 4) || be32(k->idx + 4) != 2)
		return 0;
	for (int b = 0; b < 256; b++) {
		uint32_t v = be32(fan + 4 * b);

		if (v < prev)
			return 0;
		prev = v;
	}
	k->n = prev;
	/* 20-byte names, 4-byte CRCs and 4-byte offsets per object (no overflow: n < 2^32). */
	tables = (size_t)k->n * (PACKREAD_OID_LEN + 8);
	if (k->idx_len - IDX_HEAD - TRAILER < tables ||
	    (k->idx_len - IDX_HEAD - TRAILER - tables) % 8)
		return 0;
	k->nlarge = (k->idx_len - IDX_HEAD - TRAILER - tables) / 8;
	return k->data_len >= 12 + PACKREAD_OID_LEN && memcmp(k->data, "PACK", 4) == 0 &&
	       (be32(k->data + 4) == 2 || be32(k->data + 4) == 3) && be32(k->data + 8) == k->n;
}

static void pack_add(struct packread *p, const char *dir, const char *idx_name)
{
	struct pack *k = &p->pack[p->n];
	char path[4096];
	size_t stem = strlen(idx_name) - 4;  /* without ".idx" */

	memset(k, 0, sizeof(*k));
	if (snprintf(path, sizeof(path), "%s/%s", dir, idx_name) >= (int)sizeof(path) ||
	    !(k->idx = map(path, &k->idx_len)))
		return;
	if (snprintf(path, sizeof(path), "%s/%.*s.pack", dir, (int)stem, idx_name) <
	    (int)sizeof(path) && (k->data = map(path, &k->data_len)) && pack_valid(k)) {
		p->n++;
		return;
	}
	if (k->data)
		munmap((void *)k->data, k->data_len);
	munmap((void *)k->idx, k->idx_len);
}

int packread_open(struct packread **out, const char *objects_dir, struct err *e)
{
	struct packread *p = calloc(1, sizeof(*p));
	char dir[4096];
	struct dirent *de;
	DIR *d;

	*out = NULL;
	if (!p)
		return err_set(e, ERR_NOMEM, "out of memory");
	*out = p;
	if (snprintf(dir, sizeof(dir), "%s/pack", objects_dir) >= (int)sizeof(dir) ||
	    !(d = opendir(dir)))
		return 0;  /* no packs: every read goes the slow way */
	while (p->n < PACKREAD_PACKS_MAX && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 4 && !strcmp(de->d_name + len - 4, ".idx"))
			pack_add(p, dir, de->d_name);
	}
	closedir(d);
	return 0;
}

void packread_free(struct packread *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		munmap((void *)p->pack[i].idx, p->pack[i].idx_len);
		munmap((void *)p->pack[i].data, p->pack[i].data_len);
	}
	free(p);
}

/* oid's position in k's name table: 1 with *pos, 0 when oid is not in this pack's index. */
static int position(const struct pack *k, const unsigned char *oid, uint32_t *pos)
{
	const unsigned char *names = k->idx + IDX_HEAD;
	uint32_t lo = oid[0] ? be32(k->idx + 8 + 4 * (oid[0] - 1)) : 0;
	uint32_t hi = be32(k->idx + 8 + 4 * oid[0]);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = memcmp(names + (size_t)mid * PACKREAD_OID_LEN, oid, PACKREAD_OID_LEN);

		if (c == 0) {
			*pos = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* The entry's offset in the pack, or 0 when oid is not in this pack's index (no entry
 * starts before byte 12, the pack's header). */
static uint64_t find(const struct pack *k, const unsigned char *oid)
{
	const unsigned char *names = k->idx + IDX_HEAD;
	uint32_t pos, off;

	if (!position(k, oid, &pos))
		return 0;
	off = be32(names + (size_t)k->n * (PACKREAD_OID_LEN + 4) + 4u * pos);
	if (!(off & 0x80000000u))
		return off;
	off &= 0x7fffffffu;
	return off < k->nlarge ? be64(names + (size_t)k->n * (PACKREAD_OID_LEN + 8) + 8u * off) : 0;
}

/* The CRC-32 the index records for the entry of oid: the table after the names. */
static uint32_t crc_of(const struct pack *k, const unsigned char *oid)
{
	uint32_t pos;

	if (!position(k, oid, &pos))
		return 0;
	return be32(k->idx + IDX_HEAD + (size_t)k->n * PACKREAD_OID_LEN + 4u * pos);
}

/* The header of the entry at off of k: 0 with its type and size, ERR_NOTFOUND when it is
 * malformed or out of the pack. *at is where its data begins. */
static int entry_head(const struct pack *k, uint64_t off, int *type, uint64_t *size, size_t *at)
{
	size_t end = k->data_len - PACKREAD_OID_LEN, i;
	unsigned c, shift = 4;

	if (off < 12 || off >= end)
		return ERR_NOTFOUND;
	i = (size_t)off;
	c = k->data[i++];
	*type = (int)((c >> 4) & 7);
	*size = c & 15;
	while (c & 0x80) {
		if (i >= end || shift > 57)
			return ERR_NOTFOUND;
		c = k->data[i++];
		*size |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	*at = i;
	return 0;
}

/* A whole blob at offset off of k: the entry's header (type and size, 7 bits a byte),
 * then one zlib stream that must inflate to exactly that size. */
static int read_entry(const struct pack *k, struct libdeflate_decompressor *d, uint64_t off,
		      size_t max, unsigned char **data, size_t *len)
{
	size_t end = k->data_len - PACKREAD_OID_LEN, i;
	uint64_t size;
	unsigned char *buf;
	int type;

	if (entry_head(k, off, &type, &size, &i) || type != OBJ_BLOB)
		return ERR_NOTFOUND;  /* a delta: the general reader resolves it */
	if (size > max)
		return ERR_TOOBIG;
	if (!(buf = malloc(size ? (size_t)size : 1)))
		return ERR_NOMEM;
	/* A NULL actual size: anything but exactly size bytes (and a good Adler-32) fails. */
	if (libdeflate_zlib_decompress(d, k->data + i, end - i, buf, (size_t)size, NULL) !=
	    LIBDEFLATE_SUCCESS) {
		free(buf);
		return ERR_NOTFOUND;
	}
	*data = buf;
	*len = (size_t)size;
	return 0;
}

int packread_blob(const struct packread *p, struct libdeflate_decompressor *d,
		  const unsigned char *oid, size_t max, unsigned char **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	for (int i = 0; p && i < p->n; i++) {
		uint64_t off = find(&p->pack[i], oid);

		if (off)
			return read_entry(&p->pack[i], d, off, max, data, len);
	}
	return ERR_NOTFOUND;
}

int packread_where(const struct packread *p, const unsigned char *oid, uint64_t *offset,
		   uint64_t *size, uint32_t *crc)
{
	uint64_t off;
	size_t at;
	int type;

	if (!p || p->n != 1 || !(off = find(&p->pack[0], oid)) ||
	    entry_head(&p->pack[0], off, &type, size, &at) || type != OBJ_BLOB)
		return ERR_NOTFOUND;
	*offset = off;
	*crc = crc_of(&p->pack[0], oid);
	return 0;
}
