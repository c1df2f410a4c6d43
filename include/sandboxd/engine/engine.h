/* engine.h: the Docker engines sandboxes run on (SPEC §8 "Several hosts", sql/021).
 *
 * Engines are rows of docker_engines: the host's own (SANDBOXD_ENGINE_NAME at
 * SANDBOXD_DOCKER_HOST, with its TLS files), those of SANDBOXD_DOCKER_HOSTS, both written
 * at start (engine_register), and those an operator adds with sandboxctl. Each sandbox
 * names its engine (sandboxes.engine; NULL before 021: the own), and every Docker call on
 * it goes there: whoever loads a sandbox calls engine_use with its name first. A warm
 * container's engine is its warm_containers.instance.
 *
 * Placement happens in PostgreSQL, under one transaction-level advisory lock
 * (ENGINE_PLACE_LOCK) held from the count to the commit of the new row, so creates on
 * every worker and host agree and no engine goes past its max_sandboxes (live sandboxes
 * plus live warm containers). The reaper keeps each engine's health (engine_check).
 *
 * Several hosts (sql/022): an engine may belong to one host, named by its relay URL
 * (SANDBOXD_RELAY_URL; docker_engines.relay_url); a host registers its engines as its own.
 * Only the owner calls an engine (engine_use refuses another host's), the owner's reaper
 * looks after it, and a placement on it is the owner's to make (engine_place names the
 * host: the caller relays the create there). An engine with no owner is any host's. */
#ifndef SANDBOXD_ENGINE_H
#define SANDBOXD_ENGINE_H
#include "sandboxd/core/config.h"
#include "sandboxd/core/db.h"
#include "sandboxd/proto/engine_list.h"
#include "sandboxd/common/err.h"

#define ENGINE_PLACE_LOCK "7402021"

/* The settings every call below reads (the own engine's name, SANDBOXD_DOCKER_HOSTS,
 * the grace), and engine calls (box.h) to the own engine (its table's init with
 * SANDBOXD_DOCKER_HOST and its TLS files); before any of them, in each process. The
 * settings are kept even when the table refuses them (its error): calls then fail, the
 * process goes on. */
int engine_init(const struct config *cfg, struct err *e) __attribute__((warn_unused_result));

/* 1 when an engine owned by relay_url (NULL or "": by no host) is this host's to call: no
 * owner, or this host's SANDBOXD_RELAY_URL. */
int engine_here(const char *relay_url) __attribute__((warn_unused_result));
/* This host's SANDBOXD_RELAY_URL ("" without one), for queries that keep to its engines. */
const char *engine_relay_url(void);

/* Writes the host's own engine and those of SANDBOXD_DOCKER_HOSTS (URL, TLS files, room,
 * this host as owner; a draining state stays), and gives the own engine the live sandboxes
 * made before 021 (on an upgrade of several hosts, the first to start takes them all).
 * The reaper's, at its start and every minute, outside a transaction. 0, ERR_DB, ERR_FAIL,
 * or ERR_EXISTS for an engine name another running host owns (nothing of it changed). */
int engine_register(struct db *db, struct err *e)
	__attribute__((warn_unused_result));

/* Sends every later engine call of this process (box.h) to the own engine: what a
 * process does between sandboxes (a worker after each request, the reaper after its
 * pass). 0, or why its kind cannot take the settings (engine_init said so first). */
int engine_use_own(struct err *e) __attribute__((warn_unused_result));
/* Every later engine call fails with ERR_DOCKER and why (a sandbox that is another host's:
 * nothing here may call its engine), until the next engine_use. */
void engine_refuse(const char *why);
/* Frees what the engine calls hold (at a process's exit). */
void engine_cleanup(void);

/* Sends every later engine call of this process (box.h) to engine name ("", NULL or the
 * own: the settings' engine), through its kind's table (every engine is a Docker engine
 * today: decision 0080). An engine this process has not seen is read from docker_engines
 * at once (and every engine again after a minute); an unknown one is ERR_DOCKER
 * "docker unavailable: the engine NAME is not registered"; after any failure every engine
 * call fails with its reason (engine_refuse) until the next engine_use. */
int engine_use(struct db *db, const char *name, struct err *e)
	__attribute__((warn_unused_result));

/* In the caller's transaction (the lock lasts to its end): the engine a new sandbox of
 * image goes to, into name; with gvisor set, only an engine that has a gVisor runtime
 * (docker_engines.gvisor_runtime, isolation.h). An active engine that answers and has a
 * ready warm container of image first (when warm is set), else the one with the most free
 * room; one that did not
 * answer the reaper's last ping (or whose host is down) only when no engine that answers
 * has room (one missed ping under load must not refuse creates). Every host's engines
 * (here_only 0, and this host has a relay URL), or this host's only; host gets the owner's
 * relay URL when the engine is another host's (the create is that host's to make: relay
 * it), else "". ERR_NOSTART "no Docker engine has room for another sandbox" when none has
 * any; 1 when the engine has no room but for its warm container (a cold start must be
 * placed again). */
int engine_place(struct db *db, const char *image, int warm, int here_only, int gvisor,
		 char name[ENGINE_NAME_MAX + 1], char host[RELAY_URL_MAX + 1], struct err *e)
	__attribute__((warn_unused_result));

/* The same lock and count for a warm container the reaper would start on engine name: 1
 * when it has room (the lock then lasts to the caller's commit), 0 when not. */
int engine_has_room(struct db *db, const char *name, struct err *e)
	__attribute__((warn_unused_result));

/* The reaper's pass over the engines of scope (those a host owns, by its relay URL; "":
 * those no host owns): each asked for _ping; last_seen_at, down_since and last_error kept.
 * The names of the engines that answered go to up (the own first), at most max; *nup their
 * count. Those down past SANDBOXD_ENGINE_GRACE into *ngone names in gone. */
int engine_check(struct db *db, const char *scope, char (*up)[ENGINE_NAME_MAX + 1],
		 int max, int *nup, char (*gone)[ENGINE_NAME_MAX + 1], int *ngone, struct err *e)
	__attribute__((warn_unused_result));

#endif
