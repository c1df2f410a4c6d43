/* fuzz_dstream.c: the Docker exec stream demultiplexer, fed an input's bytes in chunks the
 * input chooses, against a one-shot reference parser written from dstream.h.
 *
 * Input: a limit byte (0: DSTREAM_MAX_FRAME; below 0x80: that many bytes; else
 * (b & 0x7f) + 1 KiB), a stop byte (the callback fails on that call; 0: never), a chunk
 * byte (low 2 bits: the largest chunk, 1, 9, 97 or 4099 bytes; the rest seeds the sizes,
 * some of them 0), then the stream. Each chunk is copied into a buffer of exactly its size.
 *
 * Invariants: payload is handed over straight from the current chunk, 1 or more bytes, to
 * stream 1 or 2 only; what arrives on each stream is the reference's output (a prefix of it
 * when the callback stopped the feed); a malformed header fails the feed that completes it
 * and every call after; finish is 0 exactly when the stream ended between frames; the
 * demultiplexer never holds more than a header, never expects more than max_frame bytes, and
 * counts no more payload than it was fed. */
#include "fuzz.h"
#include "sandboxd/proto/dstream.h"
#include "sandboxd/common/err.h"
#include "sandboxd/common/banned.h"

enum { REF_OK, REF_CUT, REF_BAD };

struct sink {
	const char *chunk;       /* the chunk being fed */
	size_t chunk_len;
	const unsigned char *want[3];  /* the reference's output per stream */
	size_t want_len[3];
	size_t got[3];           /* bytes received per stream */
	unsigned calls, stop_at;
};

/* The whole stream at once: each stream's payload into out[1], out[2] (n bytes each). */
static int reference(const unsigned char *p, size_t n, uint32_t max_frame, unsigned char *out[3],
		     size_t outlen[3])
{
	size_t i = 0;

	while (i < n) {
		uint32_t size;
		size_t take;

		if (n - i < DSTREAM_HEADER)
			return REF_CUT;
		size = (uint32_t)p[i + 4] << 24 | (uint32_t)p[i + 5] << 16 |
		       (uint32_t)p[i + 6] << 8 | p[i + 7];
		if ((p[i] != 1 && p[i] != 2) || p[i + 1] || p[i + 2] || p[i + 3] || size > max_frame)
			return REF_BAD;
		i += DSTREAM_HEADER;
		take = size < n - i ? size : n - i;
		memcpy(out[p[i - DSTREAM_HEADER]] + outlen[p[i - DSTREAM_HEADER]], p + i, take);
		outlen[p[i - DSTREAM_HEADER]] += take;
		i += take;
		if (take < size)
			return REF_CUT;
	}
	return REF_OK;
}

static int on_data(void *arg, int stream, const char *data, size_t len)
{
	struct sink *s = arg;

	FUZZ_CHECK(stream == DSTREAM_STDOUT || stream == DSTREAM_STDERR);
	FUZZ_CHECK(len > 0 && data >= s->chunk && len <= s->chunk_len &&
		   (size_t)(data - s->chunk) <= s->chunk_len - len);
	if (++s->calls == s->stop_at)
		return ERR_TOOBIG;
	FUZZ_CHECK(s->got[stream] + len <= s->want_len[stream]);
	FUZZ_CHECK(memcmp(s->want[stream] + s->got[stream], data, len) == 0);
	s->got[stream] += len;
	return 0;
}

/* xorshift32: chunk sizes repeatable from the seed. */
static uint32_t next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t max_chunk[4] = { 1, 9, 97, 4099 };
	unsigned char *out[3] = { NULL, NULL, NULL };
	size_t outlen[3] = { 0, 0, 0 }, off = 0, n;
	struct err e = { .msg = "" };
	struct dstream d;
	struct sink s;
	uint32_t max_frame, seed;
	int ref, rc = 0, first = 0, dflt;

	if (size < 3)
		return 0;
	dflt = data[0] == 0;
	max_frame = dflt ? DSTREAM_MAX_FRAME
		    : data[0] < 0x80 ? data[0] : (uint32_t)((data[0] & 0x7f) + 1) << 10;
	memset(&s, 0, sizeof(s));
	s.stop_at = data[1];
	seed = 0x9e3779b9u ^ data[2];
	n = max_chunk[data[2] & 3];
	data += 3;
	size -= 3;

	out[1] = malloc(size + 1);
	out[2] = malloc(size + 1);
	FUZZ_CHECK(out[1] && out[2]);
	ref = reference(data, size, max_frame, out, outlen);
	for (int i = 1; i <= 2; i++) {
		s.want[i] = out[i];
		s.want_len[i] = outlen[i];
	}

	dstream_init(&d, dflt ? 0 : max_frame, on_data, &s);
	FUZZ_CHECK(d.max_frame == max_frame);
	while (off < size) {
		size_t len = next(&seed) % 8 == 0 ? 0 : 1 + next(&seed) % n;
		char *chunk;

		len = len < size - off ? len : size - off;
		chunk = fuzz_dup(data + off, len);
		s.chunk = chunk;
		s.chunk_len = len;
		rc = dstream_feed(&d, chunk, len, &e);
		free(chunk);
		off += len;
		FUZZ_CHECK(d.hdr_len < DSTREAM_HEADER && d.remaining <= max_frame);
		FUZZ_CHECK(d.bytes[1] + d.bytes[2] <= off);
		FUZZ_CHECK(d.bytes[1] == s.got[1] && d.bytes[2] == s.got[2]);
		if (first)
			FUZZ_CHECK(rc == first);     /* a failure sticks */
		else if (rc)
			first = rc;
	}
	rc = dstream_finish(&d, &e);
	if (first == ERR_TOOBIG) {
		/* The callback stopped it: what arrived is a prefix of the reference (checked
		 * in on_data), and the failure is the callback's. */
		FUZZ_CHECK(rc == ERR_TOOBIG && s.calls == s.stop_at);
	} else {
		FUZZ_CHECK(s.got[1] == outlen[1] && s.got[2] == outlen[2]);
		if (ref == REF_BAD)
			FUZZ_CHECK(first == ERR_FAIL && rc == ERR_FAIL);
		else
			FUZZ_CHECK(first == 0 && rc == (ref == REF_OK ? 0 : ERR_FAIL));
	}
	FUZZ_CHECK(rc == 0 || e.msg[0]);
	free(out[1]);
	free(out[2]);
	return 0;
}
