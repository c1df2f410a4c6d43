/* docker.h: the Docker Engine API client (libcurl). One handle per process, reused. */
#ifndef SANDBOXD_DOCKER_H
#define SANDBOXD_DOCKER_H
#include "sandboxd/err.h"

/* GET /_ping with a short timeout. 0 when the engine answers OK, else ERR_FAIL with why. */
int docker_ping(const char *host, struct err *e);
/* Frees the process's handle (at exit). */
void docker_cleanup(void);

#endif
