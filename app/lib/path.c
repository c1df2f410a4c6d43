/* path.c: lexical normalisation of sandbox file paths (moved out of api_files.c so that it
 * can be unit-tested and fuzzed without a request). */
#include <stdio.h>
#include <string.h>
#include "sandboxd/lib/path.h"
#include "sandboxd/common/banned.h"

char *path_normalize(struct pool *p, const char *path, struct err *e)
{
	size_t n = strlen(path);
	char *full, *out, *seg, *save = NULL;
	size_t o = 0;

	if (n == 0 || n > PATH_IN_MAX) {
		err_set(e, ERR_INVALID, "field 'path' must be 1 to %d bytes", PATH_IN_MAX);
		return NULL;
	}
	full = path[0] == '/' ? pool_strdup(p, path) : pool_printf(p, PATH_BASE "/%s", path);
	/* The result is never longer than full: each component keeps at most its '/'. */
	out = pool_alloc(p, strlen(full ? full : "") + 2);
	if (!full || !out) {
		err_set(e, ERR_NOMEM, "out of memory");
		return NULL;
	}
	for (seg = strtok_r(full, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (strcmp(seg, ".") == 0)
			continue;
		if (strcmp(seg, "..") == 0) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		/* Linux's NAME_MAX: the engine would fail on it with a message of its own. */
		if (strlen(seg) > PATH_COMPONENT_MAX) {
			err_set(e, ERR_INVALID, "field 'path' has a component longer than %d bytes",
				PATH_COMPONENT_MAX);
			return NULL;
		}
		out[o++] = '/';
		memcpy(out + o, seg, strlen(seg));
		o += strlen(seg);
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
	return out;
}
