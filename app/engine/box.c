/* box.c: the engine interface's calls, each through the table of the engine at hand
 * (box.h), and the kinds of engine this build knows. */
#include <string.h>
#include "sandboxd/engine/box.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/common/banned.h"

/* One row per kind; a second backend adds its table here (decision 0080). */
static const struct {
	const char *kind;
	const struct engine_ops *ops;
} kinds[] = {
	{ "docker", &docker_engine_ops },
};

static const struct engine_ops *cur = &docker_engine_ops;

const struct engine_ops *box_kind(const char *kind)
{
	for (size_t i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].kind, kind) == 0)
			return kinds[i].ops;
	return NULL;
}

void box_select(const struct engine_ops *ops)
{
	if (ops)
		cur = ops;
}

const struct engine_ops *box_selected(void)
{
	return cur;
}

int box_ping(const char *url, struct err *e)
{
	return cur->ping(url, e);
}

int box_isolation(char *out, size_t len, long timeout_ms, struct err *e)
{
	return cur->isolation(out, len, timeout_ms, e);
}

int box_runtimes(const char *want, struct box_runtimes *out, long timeout_ms, struct err *e)
{
	return cur->runtimes(want, out, timeout_ms, e);
}

int box_create(const struct box_spec *s, char id[BOX_ID_MAX], int *disk_enforced,
	       long timeout_ms, struct err *e)
{
	return cur->create(s, id, disk_enforced, timeout_ms, e);
}

int box_input(const char *id, const void *data, size_t len, long timeout_ms, struct err *e)
{
	return cur->input(id, data, len, timeout_ms, e);
}

int box_start(const char *id, long timeout_ms, struct err *e)
{
	return cur->start(id, timeout_ms, e);
}

int box_state(const char *id, struct box_state *out, long timeout_ms, struct err *e)
{
	return cur->state(id, out, timeout_ms, e);
}

int box_address(const char *id, const char *network, char *ip, size_t ip_len,
		long timeout_ms, struct err *e)
{
	return cur->address(id, network, ip, ip_len, timeout_ms, e);
}

int box_resize(const char *id, int64_t memory, int64_t nano_cpus, long timeout_ms,
	       struct err *e)
{
	return cur->resize(id, memory, nano_cpus, timeout_ms, e);
}

int box_disk_used(const char *id, int64_t *bytes, long timeout_ms, struct err *e)
{
	return cur->disk_used(id, bytes, timeout_ms, e);
}

int box_remove(const char *id, long timeout_ms, struct err *e)
{
	return cur->remove(id, timeout_ms, e);
}

int box_list(const char *label, const char *value_label, box_list_fn fn, void *arg,
	     long timeout_ms, struct err *e)
{
	return cur->list(label, value_label, fn, arg, timeout_ms, e);
}

int box_leftovers(const char *label, const char *value_label, box_list_fn fn, void *arg,
		  long timeout_ms, struct err *e)
{
	return cur->leftovers(label, value_label, fn, arg, timeout_ms, e);
}

int box_leftover_remove(const char *name, long timeout_ms, struct err *e)
{
	return cur->leftover_remove(name, timeout_ms, e);
}

int box_file_put(const char *id, const char *dir, const struct box_part *parts,
		 size_t nparts, long timeout_ms, struct err *e)
{
	return cur->file_put(id, dir, parts, nparts, timeout_ms, e);
}

int box_file_put_buf(const char *id, const char *dir, const void *tar, size_t len,
		     long timeout_ms, struct err *e)
{
	struct box_part part = { .data = tar, .len = len };

	return cur->file_put(id, dir, &part, 1, timeout_ms, e);
}

int box_path_stat(const char *id, const char *path, struct box_path_stat *out,
		  long timeout_ms, struct err *e)
{
	return cur->path_stat(id, path, out, timeout_ms, e);
}

int box_exec(const char *id, struct box_exec *x, long timeout_ms, struct err *e)
{
	return cur->exec(id, x, timeout_ms, e);
}

int box_exec_detached(const char *id, const struct box_exec *x, long timeout_ms,
		      struct err *e)
{
	return cur->exec_detached(id, x, timeout_ms, e);
}

int box_image_info(const char *image, const char *label, int64_t *size, char *value,
		   size_t value_len, long timeout_ms, struct err *e)
{
	return cur->image_info(image, label, size, value, value_len, timeout_ms, e);
}

int box_image_pull(const char *image, long timeout_ms, struct err *e)
{
	return cur->image_pull(image, timeout_ms, e);
}
