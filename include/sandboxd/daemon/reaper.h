/* reaper.h: the process that stops idle sandboxes and reconciles the database with the
 * Docker engine. Every master forks one; across workers and hosts they take turns through
 * the lease row 'reaper' in PostgreSQL: exactly one acts at a time, and a reaper that dies
 * loses the lease when it lapses. */
#ifndef SANDBOXD_REAPER_H
#define SANDBOXD_REAPER_H
#include "sandboxd/core/config.h"

/* Runs until SIGTERM; returns the process's exit status. */
int reaper_run(const struct config *cfg) __attribute__((warn_unused_result));

#endif
