/* capture.h: an exec's stdout and stderr, kept within caps, credentials masked, as UTF-8
 * text ready for JSON (SPEC.md §4 "Exec"). Pure: no I/O; the caller feeds the demultiplexed
 * bytes as they arrive, in chunks of any size, and at the end takes each stream's text.
 *
 * Caps. Each stream keeps its first `head` and its last `tail` bytes (512 KiB each by
 * default), whatever it writes: the first in place, the last in a ring. A stream of at most
 * head + tail bytes comes back whole and not truncated. A longer one comes back as
 *
 *     head text, "\n" unless the head text is empty or ends with one,
 *     "[… N bytes omitted …]\n", tail text
 *
 * with *truncated set. N counts the raw bytes of the stream that appear in neither part,
 * so N + (raw bytes shown in the head) + (raw bytes shown in the tail) == the stream's
 * length. The caps are on raw bytes; the text may be longer (U+FFFD takes three bytes where
 * the stream had one) or shorter (masking): at most capture_text_max() bytes.
 *
 * Counts. *bytes is what the command wrote (raw, before masking, cap and decoding), counted
 * in 64 bits: stdoutBytes and stderrBytes.
 *
 * UTF-8. The text is valid UTF-8: every maximal subpart of an ill-formed sequence (Unicode
 * §3.9 "U+FFFD substitution of maximal subparts", as the WHATWG decoder does it) becomes one
 * U+FFFD: overlong forms, surrogates, code points past U+10FFFF, stray continuation bytes,
 * and a sequence left incomplete at the end of the stream. NUL bytes are kept (JSON escapes
 * them). Where the cap cuts a stream, the cut moves to character boundaries: an incomplete
 * but so far valid sequence at the end of the head, and up to 3 continuation bytes at the
 * start of the tail, count as omitted instead of becoming U+FFFD; more than 3 leading
 * continuation bytes cannot belong to one character, and the rest are replaced. A masked
 * span is a boundary too: bytes of a character it cuts become U+FFFD.
 *
 * Masking. Every occurrence of every registered secret in the kept bytes becomes "***";
 * overlapping occurrences (of one secret or several) become one "***", adjacent ones one
 * each. Masking works on the kept raw bytes at capture_finish, so a secret split across
 * chunks is masked like any other, and secrets may be registered at any time before the
 * stream is finished. Where the cap cuts a stream, a secret may lie across the omitted
 * middle; the rule is:
 *   - the longest suffix of the head that is a proper prefix of some secret, and
 *   - the longest prefix of the tail that is a proper suffix of some secret
 * are masked too when they are at least `fragment_min` bytes long (8 by default). A
 * fragment shorter than that may remain beside the marker: 7 bytes of a 46-byte token (of
 * which 4 are its public "dst_" prefix) neither identify nor help to guess it.
 * capture_add_token registers the forms in which a git configuration holds a token.
 *
 * Memory. Per stream, one buffer that grows geometrically up to head + tail bytes (so a
 * few allocations per stream, none per chunk, and a small output costs little) however
 * long the stream; the secrets (each at most CAPTURE_SECRET_MAX bytes, plus about 10 bytes
 * of tables per byte); at capture_finish, the text appended to the caller's buffer, after
 * which that stream's raw bytes are freed.
 *
 * Errors: 0 for success; ERR_NOMEM; ERR_INVALID for the caller's mistakes (a bad stream
 * number, a stream finished twice, a secret out of bounds, too many secrets); ERR_TOOBIG when
 * the caller's buffer cannot take the text (its max below capture_text_max()). Functions that
 * take a struct err write a message into it (it may be NULL).
 *
 * Not thread-safe; one struct capture per exec. */
#ifndef SANDBOXD_CAPTURE_H
#define SANDBOXD_CAPTURE_H
#include <stddef.h>
#include <stdint.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"

/* The stream numbers, the same as DSTREAM_STDOUT and DSTREAM_STDERR. */
#define CAPTURE_STDOUT 1
#define CAPTURE_STDERR 2

#define CAPTURE_HEAD_DEFAULT ((size_t)512 * 1024)
#define CAPTURE_TAIL_DEFAULT ((size_t)512 * 1024)
#define CAPTURE_FRAGMENT_MIN_DEFAULT 8
/* Larger caps are lowered to this. */
#define CAPTURE_CAP_MAX ((size_t)1 << 30)
/* Bounds of one secret, and how many (the forms of a token count one each). */
#define CAPTURE_SECRET_MIN 8
#define CAPTURE_SECRET_MAX 4096
#define CAPTURE_SECRETS_MAX 32
/* The longest token capture_add_token takes: its forms fit CAPTURE_SECRET_MAX. */
#define CAPTURE_TOKEN_MAX (CAPTURE_SECRET_MAX / 3 - 16)
#define CAPTURE_MASK "***"

struct capture_opts {
	size_t head;          /* bytes kept from the start of each stream */
	size_t tail;          /* bytes kept from the end of each stream */
	size_t fragment_min;  /* shortest fragment masked at the cut (0 counts as 1) */
};

#define CAPTURE_OPTS_INIT \
	{ CAPTURE_HEAD_DEFAULT, CAPTURE_TAIL_DEFAULT, CAPTURE_FRAGMENT_MIN_DEFAULT }

struct capture_secret;

struct capture_stream {
	char *data;        /* [0, head) the head; [head, head + tail) the tail, a ring once full */
	size_t len;        /* bytes held: at most head + tail */
	size_t cap;        /* bytes allocated */
	size_t ring;       /* once full: the offset in the tail of its oldest byte */
	uint64_t bytes;    /* everything fed */
	int failed;        /* the first failure of a feed, or 0 */
	int finished;
	size_t sent;       /* streaming: bytes of the head whose text capture_take gave */
	char last;         /* streaming: the last byte of that text */
};

struct capture {
	struct capture_opts opts;
	struct capture_secret *secrets[CAPTURE_SECRETS_MAX];
	size_t nsecrets;
	struct capture_stream streams[2];  /* stdout, stderr */
};

/* Sets c up with o (NULL: CAPTURE_OPTS_INIT); copies o; allocates nothing. */
void capture_init(struct capture *c, const struct capture_opts *o);

/* Frees everything c holds (streams and secrets); c is as after capture_init with the same
 * options. Safe after capture_init and after any failure. */
void capture_release(struct capture *c);

/* Registers s[0..n) (any bytes) to be masked. A secret already registered is not added
 * again (0). ERR_INVALID when n is outside [CAPTURE_SECRET_MIN, CAPTURE_SECRET_MAX] or
 * CAPTURE_SECRETS_MAX are registered; ERR_NOMEM. */
int capture_add_secret(struct capture *c, const void *s, size_t n, struct err *e)
	__attribute__((warn_unused_result));

/* Registers the forms of token[0..n) that a git configuration may hold:
 *   - the token itself;
 *   - percent-encoded as in a URL's userinfo (RFC 3986: unreserved characters kept, others
 *     %XX, in upper and in lower case), when that differs;
 *   - base64 (RFC 4648, padded) of "x-access-token:TOKEN", "t:TOKEN" and "git:TOKEN", the
 *     user:password of an "Authorization: Basic" header;
 *   - and, so that any other user name is covered too, for each of the three alignments a
 *     token can have inside a base64 text, the characters that depend on the token's bytes
 *     alone (the token's part of base64("<any user>:TOKEN")).
 * The token must be CAPTURE_SECRET_MIN to CAPTURE_TOKEN_MAX bytes long. A sandbox token takes
 * 7 of the CAPTURE_SECRETS_MAX places (its percent-encoding is the token itself). Errors as
 * capture_add_secret; on failure the forms added so far stay. */
int capture_add_token(struct capture *c, const char *token, size_t n, struct err *e)
	__attribute__((warn_unused_result));

/* Appends data[0..n) to stream (CAPTURE_STDOUT or CAPTURE_STDERR); n may be 0. Errors:
 * ERR_INVALID for another stream number or a finished stream; ERR_NOMEM, after which the
 * stream is failed: feeds and capture_finish return that code. */
int capture_feed(struct capture *c, int stream, const char *data, size_t n)
	__attribute__((warn_unused_result));

/* capture_feed with the signature of a dstream_fn, so that dstream_init(&d, 0,
 * capture_feed_cb, c) hands the exec stream straight to the capture. */
int capture_feed_cb(void *c, int stream, const char *data, size_t n)
	__attribute__((warn_unused_result));

/* The most bytes capture_finish appends with these options (the caller's out->max). */
size_t capture_text_max(const struct capture_opts *o);

/* Ends stream: appends its text to out (NUL-terminated as struct buf keeps it), sets *bytes to
 * the number of bytes fed and *truncated to 1 if the middle was omitted, else 0 (either
 * pointer may be NULL), and frees the stream's raw bytes. Once per stream. Errors:
 * ERR_INVALID (bad stream, finished already), the stream's feed failure, ERR_NOMEM,
 * ERR_TOOBIG (out->max too small); on failure out may hold part of the text. */
int capture_finish(struct capture *c, int stream, struct buf *out, uint64_t *bytes,
		   int *truncated, struct err *e) __attribute__((warn_unused_result));

/* Streaming (SPEC.md §4 "Streaming exec"): appends to out the text of the bytes of stream
 * that are safe to show now and were not taken before, and remembers how far it got;
 * capture_finish then appends only the text of the rest, so that everything taken plus what
 * capture_finish appends is the text capture_finish alone would give. Safe bytes lie in the
 * head (the part kept in place), before what may be the start of a secret still arriving
 * (the longest end that is a proper prefix of one), before an incomplete character, before
 * any secret that would straddle the point, and never within the head's last
 * longest-secret + 3 bytes (the cut may mask a fragment there). So output shows as it comes
 * but for a few bytes that could begin a secret. Nothing is appended when nothing is safe
 * yet. Errors as capture_finish (the stream is not finished by it). */
int capture_take(struct capture *c, int stream, struct buf *out, struct err *e)
	__attribute__((warn_unused_result));

/* Output that starts where earlier output was dropped: the length of the longest start of
 * t[0..n) that may be the end of a secret cut by the drop (to be dropped too). */
size_t capture_cut_fragment(const struct capture *c, const char *t, size_t n);
/* Output read from a chosen offset: t[0..n) holds the bytes before it too, and at is where
 * the offset falls in t. Returns the end of the masked run that covers at (every secret
 * occurrence that starts before at and ends after it, and those overlapping them), or at
 * itself when none does: the reader gets CAPTURE_MASK for t[at..end) and the text from
 * end on, so no offset shows part of a secret. The bytes before at must reach back
 * capture_secret_max() - 1 bytes (or to the stream's start) for the answer to be exact. */
size_t capture_masked_through(const struct capture *c, const char *t, size_t n, size_t at);
/* The length of the longest end of t[0..n) that is a proper prefix of a secret: bytes that
 * may be the start of a secret still being written. */
size_t capture_pending(const struct capture *c, const char *t, size_t n);
/* The longest registered secret (0 with none). */
size_t capture_secret_max(const struct capture *c);
/* Appends the marker line "[… omitted bytes omitted …]\n". 0, or ERR_TOOBIG. */
int capture_marker(struct buf *out, uint64_t omitted) __attribute__((warn_unused_result));

/* Appends s[0..n) to out, masked and decoded like a stream that fits the caps (no cut),
 * e.g. the command text for the audit log. Errors: ERR_NOMEM, ERR_TOOBIG. */
int capture_mask_text(const struct capture *c, const char *s, size_t n, struct buf *out,
		      struct err *e) __attribute__((warn_unused_result));

#endif
