/* engine_list.c: engine names, URLs and SANDBOXD_DOCKER_HOSTS (engine_list.h). */
#include <stdio.h>
#include <string.h>
#include "sandboxd/proto/engine_list.h"
#include "sandboxd/common/banned.h"

int engine_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > ENGINE_NAME_MAX || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") != n)
		return 0;
	return (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9');
}

int engine_url_valid(const char *url)
{
	size_t n = strlen(url);

	if (n > ENGINE_URL_MAX)
		return 0;
	if (strncmp(url, "unix:///", 8) == 0)
		return n - 7 < 108 && !strpbrk(url, " ,\t\r\n");
	const char *host = strncmp(url, "tcp://", 6) == 0 ? url + 6
			   : strncmp(url, "https://", 8) == 0 ? url + 8 : NULL;
	if (!host || !*host || strchr(host, '/'))
		return 0;
	/* host:port, the port 1 to 65535 */
	const char *colon = strrchr(host, ':');
	if (!colon || colon == host)
		return 0;
	size_t digits = strspn(colon + 1, "0123456789");
	if (digits == 0 || digits > 5 || colon[1 + digits])
		return 0;
	long port = 0;
	for (size_t i = 0; i < digits; i++)
		port = port * 10 + (colon[1 + i] - '0');
	return port >= 1 && port <= 65535 &&
	       strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") ==
		       strlen(host);
}

int engine_list_next(const char *list, size_t *pos, char name[ENGINE_NAME_MAX + 1],
		     char url[ENGINE_URL_MAX + 1], struct err *e)
{
	const char *p = list + *pos;

	p += strspn(p, " ,");
	if (!*p) {
		*pos = (size_t)(p - list);
		return 0;
	}
	size_t len = strcspn(p, ","), eq = strcspn(p, "=");
	size_t end = len;
	while (end > 0 && p[end - 1] == ' ')
		end--;
	*pos = (size_t)(p - list) + len;
	if (eq >= end || eq == 0 || eq > ENGINE_NAME_MAX || end - eq - 1 > ENGINE_URL_MAX) {
		err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOSTS: '%.*s' is not name=url", (int)(end < 80 ? end : 80), p);
		return -1;
	}
	memcpy(name, p, eq);
	name[eq] = 0;
	memcpy(url, p + eq + 1, end - eq - 1);
	url[end - eq - 1] = 0;
	if (!engine_name_valid(name)) {
		err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOSTS: the engine name '%s' must be 1 to 63 "
			"of [a-z0-9._-], starting with a letter or digit", name);
		return -1;
	}
	if (!engine_url_valid(url)) {
		err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOSTS: engine %s: '%.80s' must be "
			"unix:///path, tcp://host:port or https://host:port", name, url);
		return -1;
	}
	return 1;
}

int engine_url_plain_tcp(const char *url)
{
	return strncmp(url, "tcp://", 6) == 0;
}

int engine_list_check(const char *list, const char *own, int tls, int insecure, struct err *e)
{
	char seen[ENGINE_LIST_MAX][ENGINE_NAME_MAX + 1], url[ENGINE_URL_MAX + 1];
	size_t pos = 0;
	int n = 0, rc = 0;

	while (n < ENGINE_LIST_MAX && (rc = engine_list_next(list, &pos, seen[n], url, e)) == 1) {
		if (strcmp(seen[n], own) == 0)
			return err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOSTS: %s is the host's own "
				       "engine's name (SANDBOXD_ENGINE_NAME)", own);
		for (int i = 0; i < n; i++)
			if (strcmp(seen[i], seen[n]) == 0)
				return err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOSTS: the engine "
					       "name %s is used twice", seen[n]);
		if (!tls && strncmp(url, "https://", 8) == 0)
			return err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOSTS: engine %s is https:// "
				       "and needs SANDBOXD_DOCKER_CA, SANDBOXD_DOCKER_CERT and "
				       "SANDBOXD_DOCKER_KEY", seen[n]);
		if (!tls && !insecure && engine_url_plain_tcp(url))
			return err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOSTS: engine %s is plain "
				       "tcp:// (whoever reaches it is root on its machine): set "
				       "SANDBOXD_DOCKER_CA, SANDBOXD_DOCKER_CERT and SANDBOXD_DOCKER_KEY, "
				       "or SANDBOXD_DOCKER_INSECURE=1", seen[n]);
		n++;
	}
	if (n == ENGINE_LIST_MAX && engine_list_next(list, &pos, seen[0], url, e) != 0)
		return err_set(e, ERR_INVALID, "SANDBOXD_DOCKER_HOSTS: at most %d engines",
			       ENGINE_LIST_MAX);
	return rc < 0 ? ERR_INVALID : 0;
}
