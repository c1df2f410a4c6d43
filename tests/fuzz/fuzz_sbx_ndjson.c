/* fuzz_sbx_ndjson.c: sbx's NDJSON line splitter (app/bin/sbx/ndjson.c), which cuts the
 * streamed exec's answer (the server's bytes, arriving in pieces of any size) into lines.
 *
 * Input: a piece-size byte, a bound byte (the longest line taken: 1 + b, or the real 8 MiB
 * when b is 255), then the stream.
 *
 * Invariants: fed in input-chosen pieces, the lines handed over are exactly those of a
 * one-shot reference (split at '\n', one '\r' before it dropped, empty lines skipped, a last
 * line without '\n' handed over at the end; NULs kept), in order, each within the bound; a line past
 * the bound stops the stream (-1) after the lines before it and before any after it; and
 * each line json-c parses, as sbx's exec does, without reading past it. */
#include "fuzz.h"
#include <json-c/json.h>
#include "../../app/bin/sbx/sbx.h"

struct seen {
	const char *ref;      /* the reference lines, back to back */
	const size_t *len;    /* and their lengths */
	size_t ref_n, at, count, lines;
};

static int on_line(void *ctx, const char *line, size_t n)
{
	struct seen *s = ctx;
	struct json_tokener *tok = json_tokener_new();
	char *copy = fuzz_dup(line, n);

	FUZZ_CHECK(n > 0 && s->count < s->lines && s->len[s->count] == n);
	FUZZ_CHECK(memcmp(s->ref + s->at, line, n) == 0);
	s->at += n;
	s->count++;
	if (tok) {
		json_object_put(json_tokener_parse_ex(tok, copy, (int)n));
		json_tokener_free(tok);
	}
	free(copy);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ndjson j;
	struct seen s = { 0 };
	size_t piece, max, refn = 0, i = 0, lines = 0;
	char *ref, *in;
	size_t *len;
	int too_long = 0, rc;

	if (size < 2)
		return 0;
	piece = 1 + data[0] % 64;
	max = data[1] == 255 ? (8u << 20) : 1 + (size_t)data[1];
	data += 2;
	size -= 2;
	in = fuzz_dup(data, size);
	ref = malloc(size + 1);
	len = malloc((size + 1) * sizeof(*len));
	if (!ref || !len)
		abort();
	/* The reference: whole segments, the last one too. */
	while (i < size && !too_long) {
		const char *nl = memchr(in + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - (in + i)) : size - i;

		if (n > max) {
			too_long = 1;
			break;
		}
		{
			size_t keep = n && in[i + n - 1] == '\r' ? n - 1 : n;

			if (keep) {
				memcpy(ref + refn, in + i, keep);
				refn += keep;
				len[lines++] = keep;
			}
		}
		i += n + (nl != NULL);
	}
	s.ref = ref;
	s.ref_n = refn;
	s.len = len;
	s.lines = lines;
	ndjson_init(&j, max, on_line, &s);
	rc = 0;
	for (size_t at = 0; at < size && !rc; at += piece)
		rc = ndjson_feed(&j, in + at, size - at < piece ? size - at : piece);
	rc = ndjson_end(&j);
	FUZZ_CHECK(rc == (too_long ? -1 : 0));
	FUZZ_CHECK(s.count == lines && s.at == refn);
	ndjson_free(&j);
	free(ref);
	free(len);
	free(in);
	return 0;
}
