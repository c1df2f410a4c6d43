/* files.c: reading, writing, listing and removing files in a sandbox as its user
 * (files.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sandboxd/engine/box.h"
#include "sandboxd/sandbox/files.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/lib/num.h"
#include "sandboxd/lib/randid.h"
#include "sandboxd/sandbox/sbagent.h"
#include "sandboxd/sandbox/scripts.h"
#include "sandboxd/proto/tar.h"
#include "sandboxd/common/banned.h"

#define STAGE "/.sandboxd-stage"
/* Copies of 32 MiB in and out of the container take longer than a short call. */
#define FILE_CALL_MS 60000L
#define SIZE_LINE_MAX 24

/* How long the engine may take with a file of size bytes: a minute, and one second more
 * per 8 MiB (a gibibyte at a fraction of the disk's speed). */
static long call_ms(uint64_t size)
{
	return FILE_CALL_MS + (long)(size >> 23) * 1000;
}

/* The read's stdout: "<size>\n", then the bytes, handed on to the caller's sink. */
struct reading {
	const struct files_sink *sink;
	char line[SIZE_LINE_MAX];
	size_t nline;
	int started;
	uint64_t size, got;
	int failed;
	struct err *e;
};

static int take_size(struct reading *rd)
{
	char digits[SIZE_LINE_MAX + 1];
	int64_t v;

	if (rd->nline == 0 || rd->nline > 20)
		return err_set(rd->e, ERR_FAIL, "reading a file: no size came first");
	memcpy(digits, rd->line, rd->nline);
	digits[rd->nline] = 0;
	/* The line comes from the container, whose user may fake it: a bound, not a wrap. */
	if (num_parse(digits, 0, INT64_MAX, &v))
		return err_set(rd->e, ERR_FAIL, "reading a file: a bad size came first");
	rd->size = (uint64_t)v;
	rd->started = 1;
	return rd->sink->start(rd->sink->arg, rd->size, rd->e);
}

/* A dstream_fn for the read's exec: stderr is dropped (the script writes none). */
static int reading_feed(void *arg, int stream, const char *p, size_t n)
{
	struct reading *rd = arg;
	int rc;

	if (stream != 1 || rd->failed)
		return rd->failed;
	while (!rd->started && n > 0) {
		char c = *p++;
		n--;
		if (c == '\n') {
			if ((rc = take_size(rd)))
				return rd->failed = rc;
		} else if (rd->nline < sizeof(rd->line)) {
			rd->line[rd->nline++] = c;
		} else {
			return rd->failed = err_set(rd->e, ERR_FAIL, "reading a file: a bad size");
		}
	}
	if (n == 0)
		return 0;
	/* More than the size said: the file grew after it was measured; head stops at it,
	 * so this is the engine or the image lying. */
	if (rd->got + n > rd->size)
		return rd->failed = err_set(rd->e, ERR_FAIL, "reading a file: more bytes than its size");
	rd->got += n;
	if ((rc = rd->sink->bytes(rd->sink->arg, p, n, rd->e)))
		return rd->failed = rc;
	return 0;
}

/* The agent's read, told whether the caller's sink has started (then nothing falls back). */
struct agent_reading {
	const struct files_sink *sink;
	int started;
};

static int agent_start(void *arg, uint64_t size, struct err *e)
{
	struct agent_reading *a = arg;

	a->started = 1;
	return a->sink->start(a->sink->arg, size, e);
}

static int agent_bytes(void *arg, const char *p, size_t n, struct err *e)
{
	struct agent_reading *a = arg;

	return a->sink->bytes(a->sink->arg, p, n, e);
}

/* The agent's refusal as the engine's path words it (file-read.sh's exit codes). */
static int agent_read_error(int rc, int *is_dir, struct err *e)
{
	switch (rc) {
	case ERR_NOTFOUND:
	case ERR_NOTDIR: return err_set(e, ERR_NOTFOUND, "no such file");
	case ERR_EXISTS: *is_dir = 1; return err_set(e, ERR_INVALID, "not a regular file");
	case ERR_INVALID: return err_set(e, ERR_INVALID, "not a regular file");
	case ERR_TOOBIG: return err_set(e, ERR_TOOBIG, "file too large");
	case ERR_DENIED: return err_set(e, ERR_DENIED, "permission denied");
	default: return rc;
	}
}

/* 1 (with via->agent_error) when the agent did not serve, so the engine's path runs; else
 * 0, and the agent's answer is the one. */
static int fell_back(struct files_via *via, int fell, const struct err *ea)
{
	if (fell) {
		snprintf(via->agent_error, sizeof(via->agent_error), "%.255s", ea->msg);
		return 1;
	}
	via->backend = "agent";
	return 0;
}

/* A refusal in the agent's words, without the "agent: " its client puts first. */
static const char *agent_words(const struct err *ea)
{
	return strncmp(ea->msg, "agent: ", 7) ? ea->msg : ea->msg + 7;
}

/* 1 when the agent did not serve (via->agent_error says why): the engine's path then. */
static int agent_read(const struct sandbox *s, struct files_via *via, const char *abs,
		      size_t limit, const struct files_sink *sink, int *is_dir, int *rc,
		      struct err *e)
{
	struct agent_reading a = { sink, 0 };
	const struct files_sink as = { agent_start, agent_bytes, &a };
	struct agent_conn c = { .fd = -1 };
	struct err ea;

	/* No connection, or the agent broke off before the first byte: nothing was answered
	 * yet. A refusal of the agent's own (no such file, ...) is the answer. */
	int fell = sbagent_connect(s, via->network, &c, &ea) != 0;

	if (!fell) {
		*rc = agent_file_read(&c, abs, limit, &as, &ea);
		agent_close(&c);
		fell = *rc && !a.started && (*rc == ERR_FAIL || *rc == ERR_LIMIT);
	}
	if (fell_back(via, fell, &ea))
		return 1;
	if (*rc && a.started)
		*rc = err_set(e, *rc == ERR_FAIL ? ERR_EXISTS : *rc, "%s", ea.msg);
	else if (*rc)
		*rc = agent_read_error(*rc, is_dir, e);
	return 0;
}

int files_read(const struct sandbox *s, struct files_via *via, const char *abs, size_t limit,
	       const struct files_sink *sink, int *is_dir, struct err *e)
{
	char lim[24];
	struct reading rd = { .sink = sink, .e = e };
	int rc;

	*is_dir = 0;
	if (via) {
		via->backend = "docker";
		via->agent_error[0] = 0;
		if (via->network && !agent_read(s, via, abs, limit, sink, is_dir, &rc, e))
			return rc;
	}
	snprintf(lim, sizeof(lim), "%zu", limit);
	const char *argv[] = { "bash", "-c", sh_file_read, "sandboxd-read", abs, lim, NULL };
	struct box_exec bx = { .argv = argv, .sink = reading_feed, .sink_arg = &rd };
	rc = box_exec(s->container_id, &bx, call_ms(limit), e);
	if (rd.failed)
		return rd.failed;
	if (rc)
		return rc;
	switch (bx.exit_code) {
	case 0: break;
	case 3: return err_set(e, ERR_NOTFOUND, "no such file");
	case 5: *is_dir = 1; /* fall through */
	case 4: return err_set(e, ERR_INVALID, "not a regular file");
	case 6: return err_set(e, ERR_TOOBIG, "file too large");
	case 7: return err_set(e, ERR_DENIED, "permission denied");
	default: return err_set(e, ERR_FAIL, "reading a file: exit %d", bx.exit_code);
	}
	if (!rd.started && (rc = take_size(&rd)))
		return rc;
	if (rd.got != rd.size)
		return err_set(e, ERR_EXISTS, "the file changed while it was read");
	return 0;
}

/* A box_part reader over a files source. */
static long part_read(void *arg, void *p, size_t n)
{
	return files_source_read(arg, p, n);
}

/* Puts src's bytes as STAGE/<name>, the sandbox user's (owner), 0600. A failed upload may
 * have left a part of it there: the caller removes it. */
static int stage(const struct sandbox *s, const char *name, unsigned owner,
		 struct files_source *src, struct err *e)
{
	struct buf head, tail;
	int rc;

	buf_init(&head, tar_write_size(name, 0) + 1024);
	buf_init(&tail, 3 * TAR_BLOCK);
	rc = tar_write_head(&head, name, 0600, owner, (int64_t)time(NULL), src->size, e);
	if (!rc)
		rc = tar_write_tail(&tail, src->size, e);
	if (!rc) {
		struct box_part parts[] = {
			{ .data = head.data, .len = head.len },
			{ .len = (size_t)src->size, .read = part_read, .arg = src },
			{ .data = tail.data, .len = tail.len },
		};
		rc = box_file_put(s->container_id, STAGE, parts, 3, call_ms(src->size), e);
		if (src->taken < src->size)
			rc = err_set(e, ERR_INVALID, "the body ended before its length");
		else if (rc == ERR_NOTFOUND)
			rc = err_set(e, ERR_FAIL, "the sandbox image has no " STAGE " (build it "
				     "again: deploy/build-runner-image.sh)");
	}
	buf_release(&head);
	buf_release(&tail);
	return rc;
}

/* 1 when the agent did not serve (via->agent_error says why): the engine's path then. A
 * write the agent broke off left nothing under the name (it renames a whole file into
 * place), so a connection failure before it took a byte of the source may be tried again
 * there; after, the bytes are gone and the break is the answer. */
static int agent_write(const struct sandbox *s, struct files_via *via, const char *abs,
		       unsigned mode, struct files_source *src, int *rc, struct err *e)
{
	struct agent_conn c = { .fd = -1 };
	struct err ea;

	int fell = sbagent_connect(s, via->network, &c, &ea) != 0;

	if (!fell) {
		*rc = agent_file_write(&c, abs, mode, src, &ea);
		agent_close(&c);
		fell = (*rc == ERR_FAIL || *rc == ERR_LIMIT) && src->taken == 0;
	}
	if (fell_back(via, fell, &ea))
		return 1;
	switch (*rc) {
	case 0: break;
	case ERR_EXISTS: *rc = err_set(e, ERR_EXISTS, "is a directory"); break;
	case ERR_NOTDIR: *rc = err_set(e, ERR_NOTDIR, "a parent is not a directory"); break;
	case ERR_DENIED: *rc = err_set(e, ERR_DENIED, "permission denied"); break;
	default:
		/* Its words, or the source's ("the body ended before its length"). */
		*rc = err_set(e, ERR_INVALID, "%s", agent_words(&ea));
	}
	return 0;
}

/* Moves the staged file into place as the user (file-write.sh). */
static int place(const struct sandbox *s, const char *staged, const char *abs, unsigned mode,
		 struct err *e)
{
	struct sandbox_output out;
	char modes[8];
	int rc, code = 0;

	snprintf(modes, sizeof(modes), "%o", mode & 0777);
	const char *argv[] = { "bash", "-c", sh_file_write, "sandboxd-write", staged, abs, modes,
			       NULL };
	if ((rc = sandbox_run(s->container_id, argv, &out, &code, e)))
		return rc;
	out.out[strcspn(out.out, "\n")] = 0;
	switch (code) {
	case 0: return 0;
	case 3: return err_set(e, ERR_EXISTS, "is a directory");
	case 4: return err_set(e, ERR_NOTDIR, "a parent is not a directory");
	case 5: return err_set(e, ERR_DENIED, "permission denied");
	default: return err_set(e, ERR_INVALID, "%s", out.out[0] ? out.out : "the write failed");
	}
}

int files_write(const struct sandbox *s, struct files_via *via, const char *abs,
		unsigned mode, unsigned owner, struct files_source *src, struct err *e)
{
	char name[40], staged[sizeof(STAGE) + 40];
	int rc;

	if (via) {
		via->backend = "docker";
		via->agent_error[0] = 0;
		if (via->network && !agent_write(s, via, abs, mode, src, &rc, e))
			return rc;
	}
	if (randid(name, sizeof(name), "w-", 16))
		return err_set(e, ERR_FAIL, "no randomness");
	snprintf(staged, sizeof(staged), STAGE "/%s", name);
	if ((rc = stage(s, name, owner, src, e))) {
		/* Whatever the engine unpacked before the upload broke off goes (the sticky
		 * stage lets the user remove its own files); best effort, the reason stands. */
		const char *rm[] = { "rm", "-f", "--", staged, NULL };
		struct sandbox_output ignored_out;
		struct err ignored;
		if (sandbox_run(s->container_id, rm, &ignored_out, NULL, &ignored))
			log_warn("sandbox %s: %s stays: %s", s->id, staged, ignored.msg);
		return rc;
	}
	return place(s, staged, abs, mode, e);
}

/* Runs argv (a script of app/sandbox/sh/) in the sandbox as its user, its stdout to sink (stderr
 * dropped), within FILE_CALL_MS; *code gets its exit code. 0, or the engine's error. */
static int run_script(const struct sandbox *s, const char *const *argv, dstream_fn sink,
		      void *arg, int *code, struct err *e)
{
	struct box_exec bx = { .argv = argv, .sink = sink, .sink_arg = arg };
	int rc;

	if ((rc = box_exec(s->container_id, &bx, FILE_CALL_MS, e)))
		return rc;
	*code = bx.exit_code;
	return 0;
}

/* The agent's listing, as flist's entries, counted: once one went on, nothing falls back. */
struct agent_listing {
	flist_fn fn;
	void *arg;
	unsigned got;
};

static int agent_listed(void *arg, const struct agent_entry *ent)
{
	struct agent_listing *a = arg;
	const char *slash = strrchr(ent->path, '/');
	struct flist_entry fe = { ent->path, slash ? slash + 1 : ent->path, ent->type,
				  ent->size, ent->mode, ent->mtime };

	a->got++;
	return a->fn(a->arg, &fe);
}

/* A list's refusal in the words of the engine's path (file-list.sh's exit codes). */
static int list_refused(int rc, const char *why, struct err *e)
{
	switch (rc) {
	case ERR_NOTFOUND: return err_set(e, ERR_NOTFOUND, "no such file");
	case ERR_NOTDIR: return err_set(e, ERR_NOTDIR, "not a directory");
	case ERR_DENIED: return err_set(e, ERR_DENIED, "permission denied");
	default: return err_set(e, rc, "%s", why ? why : "the listing failed");
	}
}

/* 1 when the agent did not serve (via->agent_error says why): the engine's path then. */
static int agent_list(const struct sandbox *s, struct files_via *via, const char *abs,
		      int depth, struct agent_listing *a, int *truncated, int *rc,
		      struct err *e)
{
	struct agent_conn c = { .fd = -1 };
	struct err ea = { .msg = "" };

	int fell = sbagent_connect(s, via->network, &c, &ea) != 0;

	if (!fell) {
		*rc = agent_file_list(&c, abs, depth, agent_listed, a, truncated, &ea);
		agent_close(&c);
		fell = *rc && !a->got && (*rc == ERR_FAIL || *rc == ERR_LIMIT);
	}
	if (fell_back(via, fell, &ea))
		return 1;
	if (*rc && a->got)
		*rc = err_set(e, *rc == ERR_NOMEM ? ERR_NOMEM : ERR_FAIL,
			      "the sandbox's agent broke off the listing: %s", ea.msg);
	else if (*rc)
		*rc = list_refused(*rc, ea.msg, e);
	return 0;
}

/* file-list.sh's stdout into flist; its first failure (the caller's fn's) is kept. */
struct listing {
	struct flist fl;
	int failed;
};

static int listing_feed(void *arg, int stream, const char *p, size_t n)
{
	struct listing *l = arg;

	if (stream != 1 || l->failed)
		return l->failed;
	return l->failed = flist_feed(&l->fl, p, n);
}

int files_list(const struct sandbox *s, struct files_via *via, const char *abs, int depth,
	       flist_fn fn, void *arg, int *truncated, struct err *e)
{
	struct agent_listing a = { fn, arg, 0 };
	char depths[8], most[16];
	struct listing *l;
	int rc, code = 0;

	*truncated = 0;
	if (via) {
		via->backend = "docker";
		via->agent_error[0] = 0;
		if (via->network && !agent_list(s, via, abs, depth, &a, truncated, &rc, e))
			return rc;
	}
	/* Some 12 KiB: not on a worker's stack. */
	if (!(l = calloc(1, sizeof(*l))))
		return err_set(e, ERR_NOMEM, "out of memory");
	if (flist_init(&l->fl, abs, fn, arg)) {
		free(l);
		return err_set(e, ERR_INVALID, "not a path to list");
	}
	snprintf(depths, sizeof(depths), "%d", depth);
	snprintf(most, sizeof(most), "%d", FLIST_MAX + 1);
	const char *argv[] = { "bash", "-c", sh_file_list, "sandboxd-list", abs, depths, most,
			       NULL };
	rc = run_script(s, argv, listing_feed, l, &code, e);
	*truncated = l->fl.truncated;
	if (l->failed)
		rc = err_set(e, l->failed, "listing %s: out of memory", abs);
	free(l);
	if (rc)
		return rc;
	switch (code) {
	case 0: return 0;
	case 3: return list_refused(ERR_NOTFOUND, NULL, e);
	case 4: return list_refused(ERR_NOTDIR, NULL, e);
	case 7: return list_refused(ERR_DENIED, NULL, e);
	default: return err_set(e, ERR_FAIL, "listing a directory: exit %d", code);
	}
}

/* 1 when the agent did not serve (via->agent_error says why): the engine's path then. A
 * remove the agent broke off is tried again there (what is gone stays gone). */
static int agent_remove(const struct sandbox *s, struct files_via *via, const char *abs,
			int recursive, int *rc, struct err *e)
{
	struct agent_conn c = { .fd = -1 };
	struct err ea = { .msg = "" };

	int fell = sbagent_connect(s, via->network, &c, &ea) != 0;

	if (!fell) {
		*rc = agent_file_remove(&c, abs, recursive, &ea);
		agent_close(&c);
		fell = *rc == ERR_FAIL || *rc == ERR_LIMIT;
	}
	if (fell_back(via, fell, &ea))
		return 1;
	switch (*rc) {
	case 0: break;
	/* A parent that is not a directory: nothing is there, as file-remove.sh says. */
	case ERR_NOTFOUND:
	case ERR_NOTDIR: *rc = err_set(e, ERR_NOTFOUND, "no such file"); break;
	case ERR_EXISTS: *rc = err_set(e, ERR_EXISTS, "directory not empty"); break;
	case ERR_DENIED: *rc = err_set(e, ERR_DENIED, "permission denied"); break;
	default:
		*rc = err_set(e, ERR_INVALID, "%s", agent_words(&ea));
	}
	return 0;
}

/* file-remove.sh's stdout: its first line, for a failure's words. */
static int remove_out(void *arg, int stream, const char *p, size_t n)
{
	struct sandbox_output *o = arg;
	size_t room = sizeof(o->out) - 1 - o->len;

	if (stream != 1)
		return 0;
	n = n < room ? n : room;
	memcpy(o->out + o->len, p, n);
	o->len += n;
	o->out[o->len] = 0;
	return 0;
}

int files_remove(const struct sandbox *s, struct files_via *via, const char *abs,
		 int recursive, struct err *e)
{
	struct sandbox_output out = { .len = 0 };
	int rc, code = 0;

	if (strcmp(abs, "/") == 0)
		return err_set(e, ERR_INVALID, "will not remove /");
	if (via) {
		via->backend = "docker";
		via->agent_error[0] = 0;
		if (via->network && !agent_remove(s, via, abs, recursive, &rc, e))
			return rc;
	}
	const char *argv[] = { "bash", "-c", sh_file_remove, "sandboxd-remove", abs,
			       recursive ? "1" : "0", NULL };
	out.out[0] = 0;
	if ((rc = run_script(s, argv, remove_out, &out, &code, e)))
		return rc;
	out.out[strcspn(out.out, "\n")] = 0;
	switch (code) {
	case 0: return 0;
	case 3: return err_set(e, ERR_NOTFOUND, "no such file");
	case 4: return err_set(e, ERR_EXISTS, "directory not empty");
	case 5: return err_set(e, ERR_DENIED, "permission denied");
	default: return err_set(e, ERR_INVALID, "%s", out.out[0] ? out.out : "the remove failed");
	}
}
