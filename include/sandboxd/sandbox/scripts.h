/* scripts.h: the bash programs that run inside sandboxes, from app/sandbox/sh/ (one .sh each) (compiled in by
 * deploy/embed-sh.sh; shellcheck checks them in `make lint`). Each runs as `bash -c` with
 * $0 naming it; their arguments are documented at the top of each file. */
#ifndef SANDBOXD_SCRIPTS_H
#define SANDBOXD_SCRIPTS_H

/* An attached exec: $1 the limit in ms, $2 the command (tree.sh + exec.sh). */
extern const char sh_exec[];
/* A detached exec: $1 its id, $2 the limit in ms, $3 the command (tree.sh + detach.sh). */
extern const char sh_detach[];
/* Detached execs' state ($1 … their ids), output, and kill ($1 the id, $2 the signal's
 * name) (detach-state.sh, detach-read.sh, tree.sh + detach-kill.sh). */
extern const char sh_detach_state[];
extern const char sh_detach_read[];
extern const char sh_detach_kill[];
/* The file API, as the sandbox's user: $1 path, $2 limit (file-read.sh); $1 the staged
 * file, $2 path, $3 mode (file-write.sh). */
extern const char sh_file_read[];
extern const char sh_file_write[];
/* $1 the directory, $2 the depth, $3 the most records (file-list.sh); $1 path, $2 1 for
 * recursive (file-remove.sh). */
extern const char sh_file_list[];
extern const char sh_file_remove[];
/* Before a stop: the unpushed work committed and pushed (save.sh; its environment says
 * where and with what). */
extern const char sh_save[];
/* The container's first process: clone, check out, configure, wait (clone.sh). */
extern const char sh_clone[];

#endif
