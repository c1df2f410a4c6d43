/* fuzz_lfs.c: lfs_batch_parse, which reads a Git LFS batch request (a client's JSON, after
 * json_parse_object), and lfs_oid_valid. Input: the request body. Invariants: an accepted
 * batch has 1 to LFS_BATCH_MAX objects, each with a valid oid and a size >= 0; a refused
 * one says why; an oid accepted is 64 lower-case hex digits. */
#include "fuzz.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/proto/lfs.h"
#include "sandboxd/common/banned.h"

static struct lfs_batch batch;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	json_object *body = NULL;
	struct err e = { .msg = "" };

	if (lfs_oid_valid(text)) {
		FUZZ_CHECK(strlen(text) == LFS_OID_LEN);
		for (size_t i = 0; i < LFS_OID_LEN; i++)
			FUZZ_CHECK((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f'));
	}
	if (json_parse_object((const char *)data, size, &body, &e) == 0) {
		if (lfs_batch_parse(body, &batch, &e) == 0) {
			FUZZ_CHECK(batch.n >= 1 && batch.n <= LFS_BATCH_MAX);
			for (size_t i = 0; i < batch.n; i++) {
				FUZZ_CHECK(lfs_oid_valid(batch.objects[i].oid));
				FUZZ_CHECK(batch.objects[i].size >= 0);
			}
		} else {
			FUZZ_CHECK(e.msg[0] != 0);
		}
		json_object_put(body);
	}
	free(text);
	return 0;
}
