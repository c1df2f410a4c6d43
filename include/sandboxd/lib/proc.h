/* proc.h: what every process the master forks (workers, the holder, the reaper) sets up
 * first, written once. */
#ifndef SANDBOXD_PROC_H
#define SANDBOXD_PROC_H

/* SIGTERM and SIGINT to on_term, without SA_RESTART (a blocking call, accept or
 * epoll_wait, returns EINTR so that the loop sees the stop); SIGHUP and SIGPIPE ignored (a
 * peer gone is a write's error, not a death). name, when not NULL, becomes the process's
 * name (prctl), so that operators and tests tell the processes apart. */
void proc_setup(void (*on_term)(int), const char *name);

#endif
