/* fuzz_path.c: path_normalize on the "path" field of sandbox file read and write (a C
 * string), against a reference written from path.h with a stack of components instead of
 * the in-place rewind. Invariants: the result is absolute, has no ".", ".." or empty
 * component and no trailing '/' (but for "/"), is at most PATH_OUT_MAX bytes, and comes
 * back unchanged when normalised again; an input is refused exactly when it is empty or
 * longer than PATH_IN_MAX. */
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/path.h"
#include "sandboxd/lib/pool.h"
#include "sandboxd/common/banned.h"

/* The reference: components of PATH_BASE (for a relative path) and of the path, "." and
 * empty ones skipped, ".." popping one if there is one. out has PATH_OUT_MAX + 1 bytes. */
static void reference(const char *path, char *out)
{
	static const char *comp[PATH_OUT_MAX];
	static size_t clen[PATH_OUT_MAX];
	char full[PATH_OUT_MAX + 2];
	size_t n = 0, o = 0, i = 0, len;

	len = (size_t)snprintf(full, sizeof(full), "%s%s", path[0] == '/' ? "" : PATH_BASE "/",
			       path);
	FUZZ_CHECK(len <= PATH_OUT_MAX);
	while (i < len) {
		size_t s = i;

		while (i < len && full[i] != '/')
			i++;
		if (i - s == 0 || (i - s == 1 && full[s] == '.')) {
			/* nothing */
		} else if (i - s == 2 && full[s] == '.' && full[s + 1] == '.') {
			if (n > 0)
				n--;
		} else {
			comp[n] = full + s;
			clen[n++] = i - s;
		}
		i++;
	}
	for (i = 0; i < n; i++) {
		out[o++] = '/';
		memcpy(out + o, comp[i], clen[i]);
		o += clen[i];
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
}

/* A component over PATH_COMPONENT_MAX bytes: refused whatever else the path holds. */
static int long_component(const char *s)
{
	size_t run = 0;

	for (; *s; s++) {
		run = *s == '/' ? 0 : run + 1;
		if (run > PATH_COMPONENT_MAX)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = fuzz_cstr(data, size), *got, *again;
	static char want[PATH_OUT_MAX + 1];
	size_t n = strlen(path), len;
	struct err e = { .msg = "" };
	struct pool p;

	pool_init(&p, 1 << 20);
	got = path_normalize(&p, path, &e);
	if (n == 0 || n > PATH_IN_MAX || long_component(path)) {
		FUZZ_CHECK(got == NULL && e.msg[0]);
		goto out;
	}
	FUZZ_CHECK(got != NULL);
	len = strlen(got);
	FUZZ_CHECK(len >= 1 && len <= PATH_OUT_MAX && got[0] == '/');
	FUZZ_CHECK(len == 1 || got[len - 1] != '/');
	FUZZ_CHECK(!strstr(got, "//") && !strstr(got, "/./") && !strstr(got, "/../"));
	FUZZ_CHECK(!(len >= 2 && strcmp(got + len - 2, "/.") == 0));
	FUZZ_CHECK(!(len >= 3 && strcmp(got + len - 3, "/..") == 0));
	reference(path, want);
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "path_normalize gave '%s', the reference '%s'\n", got, want);
		FUZZ_CHECK(0);
	}
	if (len <= PATH_IN_MAX) {
		again = path_normalize(&p, got, &e);
		FUZZ_CHECK(again && strcmp(again, got) == 0);
	}
out:
	pool_release(&p);
	free(path);
	return 0;
}
