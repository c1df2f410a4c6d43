/* packscan.h: push protection's scan of a pushed pack while it streams in, before git has
 * it whole. A receive-pack request body (gitprotocol-pack(5): commands in pkt-lines, a
 * flush, the push options and their flush when the client asked for them, then the pack,
 * gitformat-pack(5)) goes in as it arrives, in pieces of any size; every blob stored whole
 * in the pack is inflated and scanned (scan.h), and each one found clean comes out with
 * where it sits: its offset in the pack, the length of its bytes there, its size and the
 * CRC-32 of those bytes (what index-pack writes into the pack's index for it). The hook
 * then skips a blob whose index entry gives the same offset, size and CRC: its bytes are
 * the ones scanned here (pushscan.h).
 *
 * Only an optimisation, so only right when it answers: anything unexpected (a shape it does
 * not know, a SHA-256 repository, a delta, a blob bigger than the bound, bad zlib data)
 * stops the scan or skips the entry, and the hook scans what was not reported. A blob with
 * a secret is not reported, so that the hook names it properly.
 *
 * Pure: no I/O; memory bounded by the blob bound (one buffer, reused) and zlib's state. */
#ifndef SANDBOXD_PACKSCAN_H
#define SANDBOXD_PACKSCAN_H
#include <stddef.h>
#include <stdint.h>
#include <libdeflate.h>
#include <zlib.h>

/* One blob scanned clean. */
struct packscan_blob {
	uint64_t offset;    /* of the entry in the pack ("PACK" is at 0) */
	uint64_t raw_len;   /* its bytes in the pack: header and zlib stream */
	uint64_t size;      /* the blob's */
	uint32_t crc;       /* CRC-32 of those raw_len bytes */
};

typedef void (*packscan_fn)(void *arg, const struct packscan_blob *b);

enum packscan_state {
	PACKSCAN_PKT_LEN, PACKSCAN_PKT_DATA, PACKSCAN_PACK_HEADER, PACKSCAN_ENTRY_HEADER,
	PACKSCAN_DELTA_BASE, PACKSCAN_ENTRY_DATA, PACKSCAN_TRAILER,
	PACKSCAN_DONE,      /* the pack's trailer is in: every entry was seen */
	PACKSCAN_STOPPED,   /* something unexpected: the rest is the hook's */
};

struct packscan {
	enum packscan_state state;
	packscan_fn fn;
	void *arg;
	size_t blob_max;
	/* what came in and no step has taken yet */
	unsigned char *win;
	size_t win_cap, win_len, win_pos;
	uint64_t body_pos;          /* bytes of the body the steps took */
	uint64_t pack_at;           /* where in the body the pack begins (once it does) */
	/* the commands */
	size_t pkt_left;            /* of the pkt-line's payload */
	int caps_seen;              /* the first line with capabilities is read */
	char caps[1024];            /* its capabilities (up to this many bytes) */
	size_t ncaps;
	int flushes;                /* flushes still to come before the pack: 1, 2 with options */
	/* the pack */
	uint64_t offset;            /* of the next byte in the pack */
	uint32_t entries, seen;
	uint64_t entry_offset, size;
	int type;
	size_t base_left;           /* bytes of a delta's base still to come */
	uint32_t crc;
	int keep;                   /* the entry is a blob within the bound: inflated into blob */
	size_t next_try;            /* the window length of its next inflate attempt */
	int ending;                 /* the body ended: a blob is tried with what there is */
	unsigned char *blob;        /* reused from blob to blob, blob_cap bytes */
	size_t blob_cap;
	struct libdeflate_decompressor *d;
	z_stream z;                 /* the other entries */
	int z_ready;
	unsigned char scratch[16384];
	uint64_t stats_scanned, stats_clean;
};

/* Ready for a body; blobs over blob_max bytes are left to the hook. fn gets each blob found
 * clean. 0, or -1 when zlib cannot start (out of memory). */
int packscan_init(struct packscan *s, size_t blob_max, packscan_fn fn, void *arg)
	__attribute__((warn_unused_result));
/* The next n bytes of the body. The state says how far it got; once PACKSCAN_DONE or
 * PACKSCAN_STOPPED more bytes change nothing. */
void packscan_feed(struct packscan *s, const void *data, size_t n);
/* The body ended: a blob last in the pack gets its inflate with what came (its stream and
 * the pack's trailer may be shorter than an attempt waits for). The state is then
 * PACKSCAN_DONE, or PACKSCAN_STOPPED for a body cut short. */
void packscan_end(struct packscan *s);
/* Frees what packscan_init allocated. */
void packscan_release(struct packscan *s);

#endif
