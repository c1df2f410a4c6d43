/* engine_list.h: engine names and SANDBOXD_DOCKER_HOSTS ("name=url,name=url"), the
 * engines a host registers at start besides its own (engine.h). Pure; the list comes from
 * the operator, a name may come from sandboxctl's command line. */
#ifndef SANDBOXD_ENGINE_LIST_H
#define SANDBOXD_ENGINE_LIST_H
#include <stddef.h>
#include "sandboxd/common/err.h"

#define ENGINE_NAME_MAX 63
#define ENGINE_URL_MAX 512
#define ENGINE_LIST_MAX 32            /* entries of SANDBOXD_DOCKER_HOSTS */

/* 1 when name is 1 to ENGINE_NAME_MAX of [a-z0-9._-], the first a letter or digit (the
 * table's CHECK). */
int engine_name_valid(const char *name) __attribute__((warn_unused_result));

/* 1 when url is unix:///path (a socket path of at most 107 bytes), tcp://host:port or
 * https://host:port (no path), at most ENGINE_URL_MAX bytes. */
int engine_url_valid(const char *url) __attribute__((warn_unused_result));

/* The entry at *pos of list into name and url (*pos moves past it): 1 for an entry, 0 at
 * the end, -1 for a bad one (e names it). Spaces around entries are skipped. */
int engine_list_next(const char *list, size_t *pos, char name[ENGINE_NAME_MAX + 1],
		     char url[ENGINE_URL_MAX + 1], struct err *e) __attribute__((warn_unused_result));

/* 1 when url is tcp://: plain HTTP when no TLS files go with it. An engine's API is root on
 * its machine, so plain HTTP is refused unless the operator says insecure explicitly. */
int engine_url_plain_tcp(const char *url) __attribute__((warn_unused_result));

/* 0 when every entry of list is good, no name repeats (nor own, the host's own engine's),
 * and, unless tls (the TLS files are set), none is https:// nor (unless insecure) tcp://;
 * else ERR_INVALID naming the first problem. */
int engine_list_check(const char *list, const char *own, int tls, int insecure, struct err *e)
	__attribute__((warn_unused_result));

#endif
