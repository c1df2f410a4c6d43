/* config.c: the URL and the token. The environment wins (SANDBOXD_URL, SANDBOXD_TOKEN, as
 * the SDKs read them); what it leaves unset comes from the config file, lines of
 * `key = value` (url, token; # starts a comment line). The file holds a token, so one that
 * its group or others may read or write is refused, as ssh refuses such a key
 * (docs/decisions/0094-sbx-cli.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

#define CONFIG_MAX 65536

int config_path(char *out, size_t n)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int len;

	if (x && *x == '/')
		len = snprintf(out, n, "%s/sandboxd/config", x);
	else if (home && *home)
		len = snprintf(out, n, "%s/.config/sandboxd/config", home);
	else
		return -1;
	return len < 0 || (size_t)len >= n ? -1 : 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

static int set_once(char *dst, size_t n, const char *v)
{
	size_t len = strlen(v);

	if (dst[0])
		return 0; /* the environment's */
	if (len >= n)
		return -1;
	memcpy(dst, v, len + 1);
	return 0;
}

int config_parse(struct sbx *s, const char *text, char *why, size_t whyn)
{
	char *copy = strdup(text), *line = copy, *next;
	int no = 0, rc = 0;

	if (!copy) {
		snprintf(why, whyn, "out of memory");
		return -1;
	}
	for (; line && !rc; line = next) {
		char *k, *v, *eq;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		no++;
		k = trim(line);
		if (!*k || *k == '#')
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			snprintf(why, whyn, "line %d: not `key = value`", no);
			rc = -1;
			break;
		}
		*eq = 0;
		v = trim(eq + 1);
		k = trim(k);
		if (!strcmp(k, "url")) {
			if (set_once(s->url, sizeof(s->url), v))
				rc = -1, snprintf(why, whyn, "line %d: url too long", no);
		} else if (!strcmp(k, "token")) {
			if (set_once(s->token, sizeof(s->token), v))
				rc = -1, snprintf(why, whyn, "line %d: token too long", no);
		} else {
			snprintf(why, whyn, "line %d: unknown key '%.40s' (url, token)", no, k);
			rc = -1;
		}
	}
	free(copy);
	return rc;
}

/* The file's text when there is one (*text NULL when there is none); SBX_USAGE after
 * printing why it cannot be used. */
static int read_file(const char *path, char **text)
{
	struct stat st;
	struct buf b = { 0 };
	char chunk[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	*text = NULL;
	if (fd < 0 && errno == ENOENT)
		return SBX_OK;
	if (fd < 0)
		return say(SBX_USAGE, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return say(SBX_USAGE, "%s is not a regular file", path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return say(SBX_USAGE, "%s holds a token but others may read it (mode %04o): "
			   "chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (b.len + (size_t)n > CONFIG_MAX || buf_add(&b, chunk, (size_t)n)) {
			close(fd);
			buf_free(&b);
			return say(SBX_USAGE, "%s is too long (at most %d bytes)", path, CONFIG_MAX);
		}
	close(fd);
	if (n < 0) {
		buf_free(&b);
		return say(SBX_USAGE, "cannot read %s: %s", path, strerror(errno));
	}
	*text = b.p ? b.p : strdup("");
	return SBX_OK;
}

static int set_env(char *dst, size_t n, const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return SBX_OK;
	if (strlen(v) >= n)
		return say(SBX_USAGE, "%s is too long", name);
	memcpy(dst, v, strlen(v) + 1);
	return SBX_OK;
}

int config_load(struct sbx *s)
{
	char path[1024] = "", why[160], *text = NULL;
	int rc;
	size_t n;

	if ((rc = set_env(s->url, sizeof(s->url), "SANDBOXD_URL")) ||
	    (rc = set_env(s->token, sizeof(s->token), "SANDBOXD_TOKEN")))
		return rc;
	if ((!s->url[0] || !s->token[0]) && !config_path(path, sizeof(path))) {
		if ((rc = read_file(path, &text)))
			return rc;
		if (text && config_parse(s, text, why, sizeof(why))) {
			free(text);
			return say(SBX_USAGE, "%s: %s", path, why);
		}
		free(text);
	}
	if (!s->url[0])
		return say(SBX_USAGE, "no server: set SANDBOXD_URL, or `url = …` in %s",
			   path[0] ? path : "~/.config/sandboxd/config");
	if (!s->token[0])
		return say(SBX_USAGE, "no token: set SANDBOXD_TOKEN, or `token = …` in %s",
			   path[0] ? path : "~/.config/sandboxd/config");
	for (const char *t = s->token; *t; t++)
		if (*t <= ' ' || *t == 0x7f)
			return say(SBX_USAGE, "the token holds a space or a control character");
	if (strncmp(s->url, "http://", 7) && strncmp(s->url, "https://", 8))
		return say(SBX_USAGE, "the server's URL must start with http:// or https://");
	n = strlen(s->url);
	while (n && s->url[n - 1] == '/')
		s->url[--n] = 0;
	return SBX_OK;
}
