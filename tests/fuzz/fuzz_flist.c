/* fuzz_flist.c: the reader of file-list.sh's records (flist.h), whose bytes the sandbox's
 * user controls. The input's first byte chooses the piece size, the rest is the stream.
 * Oracle: fed in pieces or at once, the same entries (count, truncation, drops, and a hash
 * of every field); each entry's path lies under the root, is shorter than FLIST_PATH_MAX,
 * has no empty, "." or ".." component, and its name is its last component; fields within
 * their bounds; never more than FLIST_MAX entries. */
#include "fuzz.h"
#include "sandboxd/proto/flist.h"
#include "sandboxd/common/banned.h"

#define ROOT "/workspace/repo"

struct seen {
	unsigned n;
	uint64_t hash;
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static int check(void *arg, const struct flist_entry *ent)
{
	struct seen *s = arg;
	size_t len = strlen(ent->path);

	FUZZ_CHECK(len < FLIST_PATH_MAX);
	FUZZ_CHECK(strncmp(ent->path, ROOT "/", sizeof(ROOT)) == 0);
	FUZZ_CHECK(len > sizeof(ROOT));
	FUZZ_CHECK(strstr(ent->path, "//") == NULL);
	FUZZ_CHECK(strstr(ent->path, "/./") == NULL && strstr(ent->path, "/../") == NULL);
	FUZZ_CHECK(strcmp(ent->path + len - 2, "/.") && strcmp(ent->path + len - 3, "/.."));
	FUZZ_CHECK(ent->name == strrchr(ent->path, '/') + 1 && ent->name[0]);
	FUZZ_CHECK(ent->type >= FLIST_FILE && ent->type <= FLIST_OTHER);
	FUZZ_CHECK(ent->mode <= 07777 && ent->size <= (uint64_t)INT64_MAX);
	s->n++;
	FUZZ_CHECK(s->n <= FLIST_MAX);
	s->hash = mix(s->hash, ent->path, len + 1);
	s->hash = mix(s->hash, &ent->type, sizeof(ent->type));
	s->hash = mix(s->hash, &ent->size, sizeof(ent->size));
	s->hash = mix(s->hash, &ent->mode, sizeof(ent->mode));
	s->hash = mix(s->hash, &ent->mtime, sizeof(ent->mtime));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct flist a, b;
	struct seen sa = { 0, 14695981039346656037ULL }, sb = sa;
	size_t step;
	char *in;

	if (size < 1)
		return 0;
	step = (size_t)data[0] + 1;
	in = fuzz_dup(data + 1, size - 1);
	size--;
	FUZZ_CHECK(flist_init(&a, ROOT, check, &sa) == 0);
	FUZZ_CHECK(flist_init(&b, ROOT, check, &sb) == 0);
	FUZZ_CHECK(flist_feed(&a, in, size) == 0);
	for (size_t i = 0; i < size; i += step)
		FUZZ_CHECK(flist_feed(&b, in + i, size - i < step ? size - i : step) == 0);
	FUZZ_CHECK(sa.n == sb.n && sa.hash == sb.hash);
	FUZZ_CHECK(a.count == sa.n && a.truncated == b.truncated && a.dropped == b.dropped);
	free(in);
	return 0;
}
