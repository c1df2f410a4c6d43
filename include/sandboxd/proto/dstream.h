/* dstream.h: the demultiplexer for Docker's multiplexed exec/attach stream
 * (application/vnd.docker.raw-stream, the exec started without a TTY).
 *
 * The stream is a sequence of frames: an 8-byte header {stream, 0, 0, 0, size as a
 * big-endian u32} and size bytes of payload; stream 1 is stdout, 2 is stderr. Feed it bytes
 * in chunks of any size: payload is handed to the callback straight from the chunk, so a
 * frame may arrive in several calls, and the demultiplexer itself holds only the 8 bytes
 * of a header that was split. It rejects stream ids other than 1 and 2, non-zero padding
 * bytes and frames larger than max_frame, and reports a stream cut inside a frame.
 *
 * Return codes: 0; ERR_FAIL with a message for a malformed stream; whatever non-zero code
 * the callback returned (which stops the feed). After any failure every call fails. */
#ifndef SANDBOXD_DSTREAM_H
#define SANDBOXD_DSTREAM_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/common/err.h"

#define DSTREAM_STDOUT 1
#define DSTREAM_STDERR 2
#define DSTREAM_HEADER 8
/* Docker writes frames of at most 32 KiB of output; anything near this is not Docker. */
#define DSTREAM_MAX_FRAME (16u * 1024 * 1024)

/* Called with len > 0 bytes of stream (DSTREAM_STDOUT or DSTREAM_STDERR). 0 to go on. */
typedef int (*dstream_fn)(void *arg, int stream, const char *data, size_t len);

struct dstream {
	dstream_fn fn;
	void *arg;
	uint32_t max_frame;
	unsigned char hdr[DSTREAM_HEADER];
	size_t hdr_len;          /* bytes of the current header received */
	uint32_t remaining;      /* payload bytes left in the current frame */
	int stream;              /* the current frame's stream */
	int failed;              /* the code of the first failure, or 0 */
	uint64_t bytes[3];       /* payload bytes delivered per stream (index 1 and 2) */
};

/* max_frame 0 means DSTREAM_MAX_FRAME. */
void dstream_init(struct dstream *d, uint32_t max_frame, dstream_fn fn, void *arg);
int dstream_feed(struct dstream *d, const void *data, size_t len, struct err *e)
	__attribute__((warn_unused_result));
/* At the end of the stream: 0 when it ended between frames, ERR_FAIL when inside one. */
int dstream_finish(struct dstream *d, struct err *e) __attribute__((warn_unused_result));

#endif
