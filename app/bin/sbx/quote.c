/* quote.c: the words after `sbx exec ID --` made into the one command line the API runs
 * with bash -c. A word of only safe characters goes as it is (so `sbx exec ID -- ls -la`
 * reads as typed in the audit log); any other is single-quoted, a ' inside written '\''.
 * Thus bash sees exactly the words the user's shell passed, spaces, $ and globs untouched. */
#include <string.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

static int safe_word(const char *w)
{
	if (!*w)
		return 0;
	for (; *w; w++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_-./:=@%+,", *w))
			return 0;
	return 1;
}

int shell_join(int argc, char **argv, struct buf *out)
{
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (i && buf_add(out, " ", 1))
			return -1;
		if (safe_word(w)) {
			if (buf_add(out, w, strlen(w)))
				return -1;
			continue;
		}
		if (buf_add(out, "'", 1))
			return -1;
		for (; *w; w++)
			if (*w == '\'' ? buf_add(out, "'\\''", 4) : buf_add(out, w, 1))
				return -1;
		if (buf_add(out, "'", 1))
			return -1;
	}
	return 0;
}
