/* fuzz_tar.c: the bounded tar reader on what Docker's archive endpoint answers, and the
 * one-file writer read back by it.
 *
 * Input: a mode byte (even: read; odd: round trip; bit 1 in read mode: the harness first
 * rewrites the checksum of every block at a multiple of 512 bytes that has the ustar magic,
 * so that mutated headers get past the checksum to the fields behind it), a limit byte, a
 * chunk byte (as in fuzz_dstream.c), then:
 * - read: an archive, fed in input-chosen chunks (each in a buffer of exactly its size) with
 *   a content limit of 1 MiB (limit byte 0) or 8 * the limit byte; the reader fed the
 *   same bytes in one piece must give the same result. Invariants: the reader never holds
 *   more than TAR_PAX_MAX bytes of pax records nor more than the limit of content, nor more
 *   content than it was fed; a file read has a NUL-terminated name of at most TAR_NAME_MAX
 *   bytes, size bytes of data and a NUL, mode within 07777; ERR_TOOBIG reports a size over
 *   the limit; ERR_INVALID names a typeflag that is not a regular file's.
 * - round trip: 2 bytes of mode, 5 of mtime (big-endian), then name NUL data, written into a
 *   buffer of 64 * (limit byte) bytes (4 MiB for 0). A refused name, mtime or size leaves the
 *   buffer as it was; otherwise exactly tar_write_size bytes are appended, and reading them
 *   back gives the name, mode & 0777, mtime and data (or, for a name with a parent, the
 *   parent's directory entry, which the reader refuses as TAR_DIR). */
#include "fuzz.h"
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/tar.h"
#include "../common/tar_whole.h"
#include "sandboxd/common/banned.h"

static uint32_t next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void check_file(const struct tar_file *f, size_t max_size)
{
	FUZZ_CHECK(memchr(f->name, 0, sizeof(f->name)) != NULL);
	FUZZ_CHECK(f->size <= max_size && f->data && f->data[f->size] == 0);
	FUZZ_CHECK(f->mode <= 07777);
}

static void read_archive(const uint8_t *data, size_t size, size_t max_size, uint8_t chunk)
{
	static const size_t max_chunk[4] = { 1, 9, 97, 4099 };
	struct tar_reader *r = malloc(sizeof(*r));
	struct tar_file f, once;
	struct err e = { .msg = "" }, e1 = { .msg = "" };
	uint32_t seed = 0x9e3779b9u ^ chunk;
	size_t off = 0, n = max_chunk[chunk & 3];
	char type = 0;
	int rc = 0, rc1, first = 0;

	FUZZ_CHECK(r != NULL);
	tar_reader_init(r, max_size);
	while (off < size) {
		size_t len = next(&seed) % 8 == 0 ? 0 : 1 + next(&seed) % n;
		char *p;

		len = len < size - off ? len : size - off;
		p = fuzz_dup(data + off, len);
		rc = tar_reader_feed(r, p, len, &e);
		free(p);
		off += len;
		FUZZ_CHECK(r->pax.len <= TAR_PAX_MAX && r->content.len <= max_size &&
			   r->content.len <= off && r->block_len < TAR_BLOCK);
		if (first)
			FUZZ_CHECK(rc == first);
		else if (rc)
			first = rc;
	}
	memset(&f, 0, sizeof(f));
	rc = tar_reader_finish(r, &f, &e);
	FUZZ_CHECK(!first || rc == first);
	if (rc == 0)
		check_file(&f, max_size);
	else
		FUZZ_CHECK(e.msg[0] && f.data == NULL);
	if (rc == ERR_TOOBIG)
		FUZZ_CHECK(r->file.size > max_size);
	if (rc == ERR_INVALID)
		FUZZ_CHECK(r->type != TAR_FILE && r->type != 0 && r->type != '7');

	/* The same archive in one piece. */
	memset(&once, 0, sizeof(once));
	rc1 = read_whole(data, size, max_size, &once, &type, &e1);
	FUZZ_CHECK(rc1 == rc);
	if (rc == 0) {
		FUZZ_CHECK(strcmp(once.name, f.name) == 0 && once.size == f.size &&
			   once.mode == f.mode && once.mtime == f.mtime &&
			   memcmp(once.data, f.data, (size_t)f.size) == 0);
		tar_file_release(&once);
	}
	FUZZ_CHECK(once.data == NULL);
	if (rc == ERR_INVALID)
		FUZZ_CHECK(type == r->type);
	if (rc == ERR_TOOBIG)
		FUZZ_CHECK(once.size == r->file.size);
	tar_file_release(&f);
	tar_reader_release(r);
	free(r);
}

static void round_trip(const uint8_t *data, size_t size, size_t max)
{
	unsigned mode;
	int64_t mtime = 0;
	const char *name;
	const uint8_t *nul, *content;
	size_t clen, want, before;
	struct buf out;
	struct tar_file f;
	struct err e = { .msg = "" };
	char type = 0;
	int rc;

	if (size < 7)
		return;
	mode = (unsigned)data[0] << 8 | data[1];
	for (int i = 2; i < 7; i++)
		mtime = mtime << 8 | data[i];
	data += 7;
	size -= 7;
	nul = memchr(data, 0, size);
	if (!nul)
		return;
	name = fuzz_cstr(data, (size_t)(nul - data));
	content = nul + 1;
	clen = size - (size_t)(content - data);
	content = (const uint8_t *)fuzz_dup(content, clen);

	buf_init(&out, max);
	FUZZ_CHECK(buf_append(&out, "x", 1) == 0);  /* the writer appends after what is there */
	before = out.len;
	want = tar_write_size(name, clen);
	rc = tar_write_file(&out, name, mode, 61000, mtime, content, clen, &e);
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID || rc == ERR_TOOBIG);
		FUZZ_CHECK(out.len == before && e.msg[0]);
		if (rc == ERR_TOOBIG)
			FUZZ_CHECK(want == 0 || want > max - before);
		goto out;
	}
	FUZZ_CHECK(want && out.len - before == want && want % TAR_BLOCK == 0);
	FUZZ_CHECK(mtime >= 0 && mtime <= (int64_t)077777777777LL);
	rc = read_whole(out.data + before, want, clen, &f, &type, &e);
	if (strchr(name, '/')) {
		FUZZ_CHECK(rc == ERR_INVALID && type == TAR_DIR);
		goto out;
	}
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(strcmp(f.name, name) == 0 && f.mode == (mode & 0777) && f.mtime == mtime &&
		   f.size == clen && memcmp(f.data, content, clen) == 0);
	tar_file_release(&f);
out:
	buf_release(&out);
	free((void *)name);
	free((void *)content);
}

/* The checksum as a writer computes it (the field counted as spaces), in the usual form. */
static void fix_checksums(unsigned char *a, size_t n)
{
	for (size_t off = 0; n - off >= TAR_BLOCK; off += TAR_BLOCK) {
		unsigned char *h = a + off;
		unsigned sum = 0;
		char field[8];

		if (memcmp(h + 257, "ustar", 5) != 0)
			continue;
		memset(h + 148, ' ', 8);
		for (size_t i = 0; i < TAR_BLOCK; i++)
			sum += h[i];
		snprintf(field, sizeof(field), "%06o", sum & 0777777);
		memcpy(h + 148, field, 7);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max_size;
	uint8_t *copy;

	if (size < 3)
		return 0;
	if (data[0] & 1) {
		round_trip(data + 3, size - 3, data[1] ? (size_t)data[1] * 64 : (size_t)4 << 20);
		return 0;
	}
	max_size = data[1] ? (size_t)data[1] * 8 : (size_t)1 << 20;
	if (!(data[0] & 2)) {
		read_archive(data + 3, size - 3, max_size, data[2]);
		return 0;
	}
	copy = (uint8_t *)fuzz_dup(data + 3, size - 3);
	fix_checksums(copy, size - 3);
	read_archive(copy, size - 3, max_size, data[2]);
	free(copy);
	return 0;
}
