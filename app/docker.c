/* docker.c: the Docker Engine API over libcurl. */
#include <stdio.h>
#include <string.h>
#include <curl/curl.h>
#include "sandboxd/docker.h"
#include "sandboxd/banned.h"

static CURL *handle;

static size_t sink(char *p, size_t size, size_t n, void *arg)
{
	char *out = arg;
	size_t len = strlen(out), take = size * n;

	/* Keep the first bytes of the answer: /_ping says "OK". */
	if (len < 15) {
		size_t room = 15 - len;
		memcpy(out + len, p, take < room ? take : room);
		out[len + (take < room ? take : room)] = 0;
	}
	return take;
}

/* Points the handle at host and path: unix:// uses the socket, tcp:// plain HTTP. */
static int target(const char *host, const char *path, struct err *e)
{
	char url[512];

	if (strncmp(host, "unix://", 7) == 0) {
		curl_easy_setopt(handle, CURLOPT_UNIX_SOCKET_PATH, host + 7);
		snprintf(url, sizeof(url), "http://docker%s", path);
	} else if (strncmp(host, "tcp://", 6) == 0) {
		curl_easy_setopt(handle, CURLOPT_UNIX_SOCKET_PATH, NULL);
		snprintf(url, sizeof(url), "http://%s%s", host + 6, path);
	} else {
		return err_set(e, ERR_FAIL, "docker unavailable: unsupported host %s", host);
	}
	curl_easy_setopt(handle, CURLOPT_URL, url);
	return 0;
}

int docker_ping(const char *host, struct err *e)
{
	char body[16] = "";
	long status = 0;
	CURLcode cc;

	if (!handle && !(handle = curl_easy_init()))
		return err_set(e, ERR_FAIL, "docker unavailable: curl_easy_init failed");
	curl_easy_reset(handle);
	if (target(host, "/_ping", e))
		return ERR_FAIL;
	curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(handle, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, 3000L);
	curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
	cc = curl_easy_perform(handle);
	if (cc != CURLE_OK)
		return err_set(e, ERR_FAIL, "docker unavailable: %s", curl_easy_strerror(cc));
	curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200 || strcmp(body, "OK"))
		return err_set(e, ERR_FAIL, "docker unavailable: /_ping answered %ld", status);
	return 0;
}

void docker_cleanup(void)
{
	if (handle)
		curl_easy_cleanup(handle);
	handle = NULL;
}
