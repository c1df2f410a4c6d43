/* fuzz_lfs_pointer.c: lfs_pointer_oid, which the reaper runs on every small blob a ref
 * reaches (any pusher's bytes). Invariants: an oid found is 64 lower-case hex digits that
 * occur in the input after "oid sha256:"; none found leaves oid empty; inputs of
 * LFS_POINTER_MAX bytes or more are never pointers. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "sandboxd/proto/lfs.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *blob = fuzz_dup(data, size), oid[LFS_OID_LEN + 1], needle[LFS_OID_LEN + 12];
	int found = lfs_pointer_oid(blob, size, oid);

	FUZZ_CHECK(found == 0 || found == 1);
	if (!found) {
		FUZZ_CHECK(oid[0] == 0);
	} else {
		FUZZ_CHECK(size < LFS_POINTER_MAX);
		FUZZ_CHECK(lfs_oid_valid(oid));
		snprintf(needle, sizeof(needle), "oid sha256:%s", oid);
		FUZZ_CHECK(memmem(blob, size, needle, strlen(needle)) != NULL);
	}
	free(blob);
	return 0;
}
