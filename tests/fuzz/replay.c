/* replay.c: a main() for the fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput once
 * over every file given, and over every regular file in every directory given (in name order,
 * so runs are repeatable). Built with the normal compiler by make fuzz-replay and run by
 * make unit over tests/fuzz/corpus/<target>/, so that an input that once crashed a parser
 * keeps being tried. A crash or a broken invariant aborts; an unreadable file fails. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"
#include "sandboxd/common/banned.h"

/* Targets without set-up leave LLVMFuzzerInitialize undefined. */
#pragma weak LLVMFuzzerInitialize

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL, *exact;
	size_t len = 0, cap = 0;
	int rc = -1;

	if (!f) {
		fprintf(stderr, "replay: unable to open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (len == cap) {
			char *p;

			if (cap > ((size_t)64 << 20)) {
				fprintf(stderr, "replay: '%s' is over 64 MiB\n", path);
				goto out;
			}
			cap = cap ? cap * 2 : 4096;
			p = realloc(data, cap);
			if (!p)
				goto out;
			data = p;
		}
		size_t got = fread(data + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: unable to read '%s'\n", path);
		goto out;
	}
	/* An exactly-sized copy, as libFuzzer passes it: over-reads reach a redzone. */
	exact = fuzz_dup(data, len);
	LLVMFuzzerTestOneInput((const uint8_t *)exact, len);
	free(exact);
	rc = 0;
out:
	free(data);
	fclose(f);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir; adds the count to *count. */
static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: unable to open '%s': %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));
			if (!p) {
				rc = -1;
				goto out;
			}
			names = p;
		}
		size_t len = strlen(dir) + 1 + strlen(de->d_name) + 1;
		if (!(names[n] = malloc(len))) {
			rc = -1;
			goto out;
		}
		snprintf(names[n], len, "%s/%s", dir, de->d_name);
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (stat(names[i], &st) || !S_ISREG(st.st_mode))
			continue;
		if (run_file(names[i]))
			rc = -1;
		else
			(*count)++;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s corpus-dir-or-file...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: unable to stat '%s': %s\n", argv[i], strerror(errno));
			failed = 1;
		} else if (S_ISDIR(st.st_mode)) {
			failed |= run_dir(argv[i], &count) != 0;
		} else if (run_file(argv[i])) {
			failed = 1;
		} else {
			count++;
		}
	}
	printf("%s: %zu inputs replayed%s\n", argv[0], count, failed ? ", some unreadable" : "");
	return failed;
}
