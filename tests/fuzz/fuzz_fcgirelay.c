/* fuzz_fcgirelay.c: fcgirec_relay, which passes a replay's answer from a worker on to nginx
 * (parked.h), records cut anywhere.
 *
 * Input: a cut byte (the size of each piece fed, 1 to 256), then the bytes. Invariants:
 * while it accepts, every byte fed comes out (a header once whole), in order, but each
 * header's request id, which is the one asked for; a refusal (a version not 1, a byte after
 * the end) is ERR_INVALID. */
#include <string.h>
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/proto/fcgirec.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fcgirec_relay st;
	struct buf out;
	size_t piece, fed = 0;
	int rc = 0;

	if (size < 1)
		return 0;
	piece = (size_t)data[0] + 1;
	data++;
	size--;
	memset(&st, 0, sizeof(st));
	buf_init(&out, 1 << 20);
	while (fed < size && rc == 0) {
		size_t k = size - fed < piece ? size - fed : piece;
		rc = fcgirec_relay(&st, 0xabcd, data + fed, k, &out);
		/* A header in pieces is held until it is whole. */
		if (rc == 0)
			FUZZ_CHECK(out.len == fed + k - st.hdr_got);
		else
			FUZZ_CHECK(rc == ERR_INVALID || rc == ERR_TOOBIG);
		if (rc == 0)
			fed += k;
	}
	/* Header by header through what came out: versions 1, ids rewritten, bodies as fed. */
	for (size_t at = 0; rc == 0 && at + 8 <= out.len;) {
		const unsigned char *h = (const unsigned char *)out.data + at;
		size_t body = ((size_t)h[4] << 8 | h[5]) + h[6];

		FUZZ_CHECK(h[0] == 1 && h[2] == 0xab && h[3] == 0xcd);
		FUZZ_CHECK(memcmp(h + 4, data + at + 4, 4) == 0 && h[1] == data[at + 1]);
		if (at + 8 + body <= out.len)
			FUZZ_CHECK(memcmp(h + 8, data + at + 8, body) == 0);
		at += 8 + body;
	}
	buf_release(&out);
	return 0;
}
