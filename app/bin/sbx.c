/* sbx: the command line for people (issue 33 item 4; man/sbx.1). A client of the REST API
 * on libcurl and json-c: sandboxes by id, their commands streamed, files both ways. Exit
 * codes: 0 done, 1 the server refused or could not be reached, 2 usage or configuration;
 * exec exits with its command's own code. main() and the table of commands; the commands
 * are in sbx/, one concern a file, and sbx/sbx.h is what they share. */
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "sbx/sbx.h"
#include "sandboxd/common/banned.h"

static const char usage_text[] =
	"usage: sbx [--json] COMMAND …\n"
	"  create OWNER/NAME[@REF]                   a new sandbox; prints its id\n"
	"  exec [--cwd DIR] [--timeout MS] ID -- COMMAND…\n"
	"                                            runs it, streaming its output; exits with its code\n"
	"  cp LOCAL ID:PATH | cp ID:PATH LOCAL       copies a file in or out\n"
	"  ls ID [PATH]                              lists a directory\n"
	"  preview ID PORT                           a browser URL for the sandbox's PORT\n"
	"  close ID [--save]                         stops and removes the sandbox\n"
	"  list [--state STATE]                      your sandboxes on every repository\n"
	"--json prints the server's JSON answers. Settings: SANDBOXD_URL and SANDBOXD_TOKEN,\n"
	"else ~/.config/sandboxd/config (man sbx).\n";

int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "sbx: %s\n", msg);
	fputs(usage_text, stderr);
	return SBX_USAGE;
}

int say(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("sbx: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

void print_json_text(const struct buf *b)
{
	size_t n = b->len;

	while (n && (b->p[n - 1] == '\n' || b->p[n - 1] == '\r'))
		n--;
	fwrite(b->p, 1, n, stdout);
	putchar('\n');
}

static const struct {
	const char *name;
	int (*run)(struct sbx *s, int argc, char **argv);
} commands[] = {
	{ "create", cmd_create }, { "exec", cmd_exec },   { "cp", cmd_cp },
	{ "ls", cmd_ls },	  { "preview", cmd_preview }, { "close", cmd_close },
	{ "list", cmd_list },
};

int main(int argc, char **argv)
{
	struct sbx s = { 0 };
	int i = 1, rc;

	/* --json anywhere before the command's own words ("--" for exec) */
	for (int j = 1; j < argc && strcmp(argv[j], "--"); j++)
		if (!strcmp(argv[j], "--json")) {
			s.json = 1;
			memmove(argv + j, argv + j + 1, (size_t)(argc - j) * sizeof(*argv));
			argc--;
			j--;
		}
	if (i >= argc)
		return usage(NULL);
	if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") || !strcmp(argv[i], "help")) {
		fputs(usage_text, stdout);
		return SBX_OK;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		if (strcmp(argv[i], commands[c].name))
			continue;
		if ((rc = config_load(&s)))
			return rc;
		if (curl_global_init(CURL_GLOBAL_DEFAULT))
			return say(SBX_FAIL, "libcurl could not start");
		rc = commands[c].run(&s, argc - i, argv + i);
		explicit_bzero(s.token, sizeof(s.token));
		curl_global_cleanup();
		fflush(stdout);
		return ferror(stdout) ? say(SBX_FAIL, "cannot write to stdout") : rc;
	}
	fprintf(stderr, "sbx: unknown command '%s'\n", argv[i]);
	return usage(NULL);
}
