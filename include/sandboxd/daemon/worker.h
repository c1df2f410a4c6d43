/* worker.h: a worker process: accepts one FastCGI request at a time on the shared socket,
 * dispatches it through the route table, and writes its audit row. Returns the exit status
 * for the process: 0 after a SIGTERM drain. */
#ifndef SANDBOXD_WORKER_H
#define SANDBOXD_WORKER_H
#include "sandboxd/core/config.h"

int worker_run(const struct config *cfg, int listen_fd) __attribute__((warn_unused_result));

#endif
