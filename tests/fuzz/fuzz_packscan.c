/* fuzz_packscan.c: packscan_feed on a receive-pack request body, in pieces the input
 * chooses, against the same body in one piece: the same blobs reported. Each one reported
 * is what it says: its bytes in the body (from where the pack begins) have its CRC-32,
 * start with a blob's header of its size, and inflate to exactly that many bytes, which
 * scan clean. Input: one byte for the piece size (1 + byte * 37), then the body. */
#include <libdeflate.h>
#include <zlib.h>
#include "fuzz.h"
#include "sandboxd/proto/packscan.h"
#include "sandboxd/proto/scan.h"
#include "sandboxd/common/banned.h"

#define MAX 64

struct got {
	struct packscan_blob b[MAX];
	size_t n;
};

static void collect(void *arg, const struct packscan_blob *b)
{
	struct got *g = arg;

	if (g->n < MAX)
		g->b[g->n] = *b;
	g->n++;
}

static uint64_t scan_in(const unsigned char *body, size_t n, size_t piece, struct got *g)
{
	struct packscan s;
	uint64_t at;

	g->n = 0;
	FUZZ_CHECK(packscan_init(&s, 1 << 20, collect, g) == 0);
	for (size_t i = 0; i < n; i += piece)
		packscan_feed(&s, body + i, n - i < piece ? n - i : piece);
	packscan_end(&s);
	FUZZ_CHECK(s.state == PACKSCAN_DONE || s.state == PACKSCAN_STOPPED);
	at = s.pack_at;
	packscan_release(&s);
	return at;
}

/* One report against the body's bytes. */
static void check(const unsigned char *body, size_t n, uint64_t pack_at,
		  const struct packscan_blob *b, struct libdeflate_decompressor *d)
{
	const unsigned char *e;
	size_t i = 0, used = 0;
	uint64_t size;
	unsigned c, shift = 4;
	unsigned char *out;

	FUZZ_CHECK(b->offset >= 12 && b->raw_len > 0 && pack_at + b->offset + b->raw_len <= n);
	e = body + pack_at + b->offset;
	FUZZ_CHECK((uint32_t)crc32(0, e, (uInt)b->raw_len) == b->crc);
	c = e[i++];
	FUZZ_CHECK(((c >> 4) & 7) == 3);
	size = c & 15;
	while (c & 0x80) {
		FUZZ_CHECK(i < b->raw_len && shift <= 57);
		c = e[i++];
		size |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	FUZZ_CHECK(size == b->size);
	out = malloc(size ? size : 1);
	FUZZ_CHECK(out);
	FUZZ_CHECK(libdeflate_zlib_decompress_ex(d, e + i, b->raw_len - i, out, size, &used, NULL) ==
		   LIBDEFLATE_SUCCESS && used == b->raw_len - i);
	FUZZ_CHECK(!scan_buffer(out, size, NULL));
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct got one, pieces;
	struct libdeflate_decompressor *d;
	unsigned char *body;
	uint64_t at;

	if (size < 1)
		return 0;
	body = (unsigned char *)fuzz_dup(data + 1, size - 1);
	at = scan_in(body, size - 1, size - 1 ? size - 1 : 1, &one);
	FUZZ_CHECK(scan_in(body, size - 1, 1 + (size_t)data[0] * 37, &pieces) == at);
	FUZZ_CHECK(one.n == pieces.n);
	d = libdeflate_alloc_decompressor();
	FUZZ_CHECK(d);
	for (size_t i = 0; i < one.n && i < MAX; i++) {
		FUZZ_CHECK(one.b[i].offset == pieces.b[i].offset &&
			   one.b[i].raw_len == pieces.b[i].raw_len &&
			   one.b[i].size == pieces.b[i].size && one.b[i].crc == pieces.b[i].crc);
		FUZZ_CHECK(i == 0 || one.b[i].offset > one.b[i - 1].offset);
		check(body, size - 1, at, &one.b[i], d);
	}
	libdeflate_free_decompressor(d);
	free(body);
	return 0;
}
