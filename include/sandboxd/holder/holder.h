/* holder.h: the holder, one process of the service that keeps running execs, so that a
 * running command costs no worker (README "The holder"). A worker authorises the exec,
 * starts it through the sandbox's agent, writes its audit row to be (held_execs) and hands
 * both connections over (handover.h); the holder reads the agent's frames, builds the
 * answer as the worker would (caps, masking, U+FFFD, the NDJSON lines and keep-alives, the
 * service's deadline: capture.h, exec_stream.h), writes it to nginx as FastCGI records,
 * and moves the audit row to audit_log when the command ends. Its client gone, it closes
 * the agent's connection, which ends the command's tree, and audits 499. One epoll loop,
 * no thread; each parked exec costs its capture and a few hundred bytes.
 *
 * It says every HOLDER_BEAT_MS which execs it keeps (held_execs.seen_at); the reaper ends
 * the rows no holder kept for SANDBOXD_HELD_STALE seconds (30; at least two beats). */
#ifndef SANDBOXD_HOLDER_H
#define SANDBOXD_HOLDER_H
#include "sandboxd/core/config.h"

#define HOLDER_BEAT_MS 5000

/* Runs the holder on listen_fd (a SOCK_SEQPACKET socket the master opened) until SIGTERM
 * and the last exec it holds has ended. */
int holder_run(const struct config *cfg, int listen_fd) __attribute__((warn_unused_result));

#endif
