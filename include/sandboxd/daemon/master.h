/* master.h: the supervising process. Opens the FastCGI socket, pre-forks cfg->workers workers,
 * restarts any that die (backing off while they keep dying young), drains on SIGTERM/SIGINT
 * (workers finish their request, then the master exits 0) and replaces all workers on SIGHUP
 * (new ones start at once, old ones drain). */
#ifndef SANDBOXD_MASTER_H
#define SANDBOXD_MASTER_H
#include "sandboxd/core/config.h"

int master_run(const struct config *cfg) __attribute__((warn_unused_result));

#endif
