/* log.h: one-line structured logs on stderr: time, level, pid, request id, message.
 * The request id is per process (a worker serves one request at a time). Never log a
 * secret: callers pass tokens through auth_mask first. */
#ifndef SANDBOXD_LOG_H
#define SANDBOXD_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Accepts "debug", "info", "warn", "error"; returns -1 for anything else. */
int log_parse_level(const char *s) __attribute__((warn_unused_result));
void log_set_level(enum log_level l);
/* Sets (or, with NULL, clears) the request id printed in every line. */
void log_set_request(const char *id);
void log_msg(enum log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
