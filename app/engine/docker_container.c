/* docker_container.c: containers and volumes on the engine: the create body, start,
 * inspect, size, address, update, remove, the lists by label; and the JSON building and the
 * calls on one object by its id that execs use too (docker_int.h). */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "sandboxd/engine/docker.h"
#include "sandboxd/engine/docker_int.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"

#define DEFAULT_USER "61000:61000"  /* SANDBOXD_SANDBOX_UID's default */

/* ---- JSON building ---- */

int dk_add_strings(json_object *o, const char *key, const char *const *list)
{
	json_object *a;

	if (!list)
		return 0;
	if (!(a = json_object_new_array()))
		return ERR_NOMEM;
	json_object_object_add(o, key, a);
	for (; *list; list++) {
		json_object *s = json_object_new_string(*list);
		if (!s || json_object_array_add(a, s)) {
			json_object_put(s);
			return ERR_NOMEM;
		}
	}
	return 0;
}

static int add_object(json_object *o, const char *key, json_object **out)
{
	if (!(*out = json_object_new_object()))
		return ERR_NOMEM;
	json_object_object_add(o, key, *out);
	return 0;
}

int dk_env_valid(const char *what, const char *const *list, int need_eq, struct err *e)
{
	for (; list && *list; list++) {
		const char *eq = strchr(*list, '=');
		if (need_eq && (!eq || eq == *list))
			return err_set(e, ERR_INVALID, "%s entry '%.64s' must be NAME=value", what, *list);
	}
	return 0;
}

/* ---- containers ---- */

/* {"key": "value", …} of "key=value" strings (which the caller checked have their '='). */
static json_object *labels_object(const char *const *l)
{
	json_object *labels = json_object_new_object();

	for (; labels && l && *l; l++) {
		const char *eq = strchr(*l, '=');
		char key[256];
		json_object *v;

		snprintf(key, sizeof(key), "%.*s", (int)(eq - *l), *l);
		if (!(v = json_object_new_string(eq + 1))) {
			json_object_put(labels);
			return NULL;
		}
		json_object_object_add(labels, key, v);
	}
	return labels;
}

/* /workspace in the writable layer (so that the disk limit counts it), or on a volume or
 * a bind the caller names: the archive API sees neither tmpfs nor a read-only root. A
 * volume gets c->volume_labels when the engine makes it. */
static int add_workspace(json_object *hc, const struct docker_create *c)
{
	json_object *mounts, *mount;

	if (!(mounts = json_object_new_array()))
		return ERR_NOMEM;
	json_object_object_add(hc, "Mounts", mounts);
	if (!c->workspace || !*c->workspace)
		goto agent;
	if (!(mount = json_object_new_object()) || json_object_array_add(mounts, mount)) {
		json_object_put(mount);
		return ERR_NOMEM;
	}
	json_add_str(mount, "Type", c->workspace[0] == '/' ? "bind" : "volume");
	json_add_str(mount, "Source", c->workspace);
	json_add_str(mount, "Target", "/workspace");
	if (c->volume_labels && c->workspace[0] != '/') {
		json_object *vo = json_object_new_object(), *vl = labels_object(c->volume_labels);
		if (!vo || !vl) {
			json_object_put(vo);
			json_object_put(vl);
			return ERR_NOMEM;
		}
		json_object_object_add(vo, "Labels", vl);
		json_object_object_add(mount, "VolumeOptions", vo);
	}
agent:
	/* One host file read-only (the sandbox's agent). */
	if (c->ro_bind_source && c->ro_bind_target) {
		if (!(mount = json_object_new_object()) || json_object_array_add(mounts, mount)) {
			json_object_put(mount);
			return ERR_NOMEM;
		}
		json_add_str(mount, "Type", "bind");
		json_add_str(mount, "Source", c->ro_bind_source);
		json_add_str(mount, "Target", c->ro_bind_target);
		json_add_bool(mount, "ReadOnly", 1);
	}
	return 0;
}

static int create_body(const struct docker_create *c, json_object **out)
{
	json_object *o, *hc, *labels, *logc;
	static const char *const drop_all[] = {"ALL", NULL};
	static const char *const nnp[] = {"no-new-privileges", NULL};
	int rc;

	if (!(o = *out = json_object_new_object()))
		return ERR_NOMEM;
	json_add_str(o, "Image", c->image);
	json_add_str(o, "User", c->user ? c->user : DEFAULT_USER);
	json_add_str(o, "WorkingDir", "/workspace");
	json_add_bool(o, "AttachStdin", 0);
	/* An input the service writes once before the start (docker_stdin_put), closed when
	 * it has written (StdinOnce): no later attach reaches the process. */
	json_add_bool(o, "OpenStdin", c->open_stdin != 0);
	json_add_bool(o, "StdinOnce", c->open_stdin != 0);
	json_add_bool(o, "Tty", 0);
	json_add_bool(o, "NetworkDisabled", 0);
	if ((rc = dk_add_strings(o, "Env", c->env)) || (rc = dk_add_strings(o, "Cmd", c->cmd)))
		return rc;
	if (!(labels = labels_object(c->labels)))
		return ERR_NOMEM;
	json_object_object_add(o, "Labels", labels);
	if ((rc = add_object(o, "HostConfig", &hc)) ||
	    (rc = dk_add_strings(hc, "CapDrop", c->cap_drop ? c->cap_drop : drop_all)) ||
	    (rc = dk_add_strings(hc, "CapAdd", c->cap_add)) ||
	    (rc = dk_add_strings(hc, "SecurityOpt", nnp)) ||
	    (rc = dk_add_strings(hc, "ExtraHosts", c->extra_hosts)) ||
	    (rc = add_object(hc, "LogConfig", &logc)))
		return rc;
	json_add_bool(hc, "Init", 1);
	json_add_bool(hc, "Privileged", 0);
	json_add_str(hc, "NetworkMode", c->network ? c->network : "bridge");
	if (c->runtime)
		json_add_str(hc, "Runtime", c->runtime);
	if (c->userns_host)
		json_add_str(hc, "UsernsMode", "host");
	json_add_str(logc, "Type", "none");
	if (c->memory > 0) {
		json_add_int(hc, "Memory", c->memory);
		json_add_int(hc, "MemorySwap", c->memory);
	}
	if (c->nano_cpus > 0)
		json_add_int(hc, "NanoCpus", c->nano_cpus);
	if (c->pids_limit > 0)
		json_add_int(hc, "PidsLimit", c->pids_limit);
	if (c->storage_size > 0) {
		json_object *so;
		char size[24];
		snprintf(size, sizeof(size), "%lld", (long long)c->storage_size);
		if ((rc = add_object(hc, "StorageOpt", &so)))
			return rc;
		json_add_str(so, "size", size);
	}
	return add_workspace(hc, c);
}

int docker_storage_refused(const struct err *e)
{
	/* moby's overlay2: "--storage-opt is supported only for overlay over xfs with 'pquota'
	 * mount option"; other drivers: "--storage-opt is not supported for <driver>". */
	return strstr(e->msg, "storage-opt is supported only") != NULL ||
	       strstr(e->msg, "storage-opt is not supported") != NULL;
}

/* POSTs body to path and reads the "Id" of what Docker made (a container or an exec) into
 * id_out. */
int dk_post_for_id(const char *kind, const char *path, json_object *body, char *id_out,
		long timeout_ms, struct err *e)
{
	json_object *resp = NULL, *id;
	char what[32];
	struct call c;
	int rc;

	snprintf(what, sizeof(what), "create %s", kind);
	dk_call_init(&c, what, "POST", path, timeout_ms, e);
	dk_call_body(&c, json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
	if ((rc = dk_call_json(&c, json_type_object, &resp)))
		goto out;
	if (!json_object_object_get_ex(resp, "Id", &id) || !json_object_is_type(id, json_type_string) ||
	    dk_id_valid(kind, json_object_get_string(id), NULL)) {
		rc = err_set(e, ERR_FAIL, "docker %s: no id in the answer", what);
		goto out;
	}
	snprintf(id_out, DOCKER_ID_MAX + 1, "%s", json_object_get_string(id));
out:
	json_object_put(resp);
	return rc;
}

int docker_container_create(const struct docker_create *c, char *id_out, long timeout_ms,
			    struct err *e)
{
	json_object *body = NULL;
	const char *const *l;
	char path[256];
	const char *s;
	int rc;

	id_out[0] = 0;
	if (!c->image || !*c->image || strlen(c->image) > 255)
		return err_set(e, ERR_INVALID, "docker create container: an image is required");
	if (c->name && (rc = dk_id_valid("container name", c->name, e)))
		return rc;
	for (int k = 0; k < 2; k++)
		for (l = k ? c->volume_labels : c->labels; l && *l; l++) {
			s = strchr(*l, '=');
			if (!s || s == *l || s - *l > 255)
				return err_set(e, ERR_INVALID, "label '%.64s' must be key=value", *l);
		}
	if ((rc = dk_env_valid("env", c->env, 1, e)))
		return rc;
	if (c->memory < 0 || c->nano_cpus < 0 || c->pids_limit < 0)
		return err_set(e, ERR_INVALID, "docker create container: negative limit");
	if ((rc = create_body(c, &body))) {
		rc = err_set(e, rc, "out of memory");
		goto out;
	}
	if (c->name)
		snprintf(path, sizeof(path), "/containers/create?name=%s", c->name);
	else
		snprintf(path, sizeof(path), "/containers/create");
	rc = dk_post_for_id("container", path, body, id_out, timeout_ms, e);
out:
	json_object_put(body);
	return rc;
}

/* The objects calls are about: the name their ids have in messages, and where they are. */
static const struct {
	const char *kind, *collection;
} objects[] = {
	[DK_CONTAINER] = { "container", "/containers/" },
	[DK_VOLUME] = { "volume", "/volumes/" },
	[DK_EXEC] = { "exec", "/exec/" },
};

/* The id checked, then /<collection>/<id><rest> into path[DK_OBJECT_PATH_MAX]. */
int dk_object_path(char *path, enum object o, const char *id, const char *rest,
		struct err *e)
{
	int rc;

	if ((rc = dk_id_valid(objects[o].kind, id, e)))
		return rc;
	snprintf(path, DK_OBJECT_PATH_MAX, "%s%s%s", objects[o].collection, id, rest);
	return 0;
}

/* A call on one object with no body and no answer to read: METHOD /<collection>/<id><rest>. */
static int object_call(enum object o, const char *what, const char *method, const char *id,
		       const char *rest, long timeout_ms, struct err *e)
{
	char path[DK_OBJECT_PATH_MAX];
	struct call c;
	int rc;

	if ((rc = dk_object_path(path, o, id, rest, e)))
		return rc;
	dk_call_init(&c, what, method, path, timeout_ms, e);
	return dk_perform(&c);
}

/* GET /<collection>/<id><rest>, whose answer is a JSON object: *out is the caller's. */
int dk_object_get(enum object o, const char *what, const char *id, const char *rest,
	       long timeout_ms, json_object **out, struct err *e)
{
	char path[DK_OBJECT_PATH_MAX];
	struct call c;
	int rc;

	*out = NULL;
	if ((rc = dk_object_path(path, o, id, rest, e)))
		return rc;
	dk_call_init(&c, what, "GET", path, timeout_ms, e);
	return dk_call_json(&c, json_type_object, out);
}

int docker_container_start(const char *id, long timeout_ms, struct err *e)
{
	/* 304: already started. */
	return object_call(DK_CONTAINER, "start container", "POST", id, "/start", timeout_ms, e);
}

/* A network entry's IPv4 address (its "IPAddress", checked to be one) into ip (ip_len bytes);
 * -1, ip untouched, when it has none. */
static int net_ip(json_object *net, char *ip, size_t ip_len)
{
	json_object *addr;
	struct in_addr a;

	if (!json_object_object_get_ex(net, "IPAddress", &addr) ||
	    !json_object_is_type(addr, json_type_string) ||
	    (size_t)json_object_get_string_len(addr) >= ip_len ||
	    inet_pton(AF_INET, json_object_get_string(addr), &a) != 1)
		return -1;
	memcpy(ip, json_object_get_string(addr), (size_t)json_object_get_string_len(addr) + 1);
	return 0;
}

/* The one network's IPv4 address of an inspect answer into ip[16]; "" when the container is
 * on none or on several (then the caller asks by network: docker_container_ip). */
static void one_ip(json_object *resp, char ip[16])
{
	json_object *ns, *nets;

	ip[0] = 0;
	if (!json_object_object_get_ex(resp, "NetworkSettings", &ns) ||
	    !json_object_object_get_ex(ns, "Networks", &nets) ||
	    !json_object_is_type(nets, json_type_object) || json_object_object_length(nets) != 1)
		return;
	json_object_object_foreach(nets, name, net) {
		(void)name;
		(void)net_ip(net, ip, 16);
	}
}

int docker_container_inspect(const char *id, struct box_state *out,
			     long timeout_ms, struct err *e)
{
	json_object *resp = NULL, *st, *status;
	int64_t code = 0, pid = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = dk_object_get(DK_CONTAINER, "inspect container", id, "/json", timeout_ms, &resp, e)))
		return rc;
	if (!json_object_object_get_ex(resp, "State", &st) ||
	    !json_object_object_get_ex(st, "Status", &status) ||
	    get_bool(st, "Running", &out->running) || get_bool(st, "OOMKilled", &out->oom_killed) ||
	    get_int(st, "ExitCode", &code) || get_int(st, "Pid", &pid)) {
		rc = err_set(e, ERR_FAIL, "docker inspect container: no State in the answer");
		goto out;
	}
	snprintf(out->status, sizeof(out->status), "%s", json_object_get_string(status));
	out->exit_code = (int)code;
	out->pid = pid;
	one_ip(resp, out->ip);
out:
	json_object_put(resp);
	return rc;
}

int docker_container_size(const char *id, int64_t *size_rw, long timeout_ms, struct err *e)
{
	json_object *resp = NULL;
	int rc;

	*size_rw = 0;
	if ((rc = dk_object_get(DK_CONTAINER, "measure container", id, "/json?size=1", timeout_ms,
			     &resp, e)))
		return rc;
	/* Absent when the engine could not measure (the container is being removed): 0. */
	if (get_int(resp, "SizeRw", size_rw) || *size_rw < 0)
		*size_rw = 0;
	json_object_put(resp);
	return 0;
}

int docker_container_ip(const char *id, const char *network, char *ip, size_t ip_len,
			long timeout_ms, struct err *e)
{
	char path[DOCKER_ID_MAX + 64];
	json_object *resp = NULL, *ns, *nets, *net;
	struct call c;
	int rc;

	ip[0] = 0;
	if ((rc = dk_id_valid("container", id, e)))
		return rc;
	snprintf(path, sizeof(path), "/containers/%s/json", id);
	dk_call_init(&c, "inspect container", "GET", path, timeout_ms, e);
	if ((rc = dk_call_json(&c, json_type_object, &resp)))
		return rc;
	if (!json_object_object_get_ex(resp, "NetworkSettings", &ns) ||
	    !json_object_object_get_ex(ns, "Networks", &nets) ||
	    !json_object_object_get_ex(nets, network, &net) || net_ip(net, ip, ip_len))
		rc = err_set(e, ERR_NOTFOUND, "container %.12s has no IPv4 address on %s", id,
			     network);
	json_object_put(resp);
	return rc;
}

int docker_container_update(const char *id, int64_t memory, int64_t nano_cpus, long timeout_ms,
			    struct err *e)
{
	char path[DK_OBJECT_PATH_MAX], body[128];
	struct call c;
	int rc;

	if ((rc = dk_object_path(path, DK_CONTAINER, id, "/update", e)))
		return rc;
	/* Swap stays equal to memory: no swap, as at create. */
	snprintf(body, sizeof(body), "{\"Memory\":%lld,\"MemorySwap\":%lld,\"NanoCpus\":%lld}",
		 (long long)memory, (long long)memory, (long long)nano_cpus);
	dk_call_init(&c, "update container", "POST", path, timeout_ms, e);
	dk_call_body(&c, body);
	return dk_perform(&c);
}

int docker_container_remove(const char *id, long timeout_ms, struct err *e)
{
	return object_call(DK_CONTAINER, "remove container", "DELETE", id, "?force=1&v=1", timeout_ms, e);
}

/* What a list call is: its path, where the items are in the answer (an array, or the array
 * under a key), and an item's id key. */
struct list_kind {
	const char *what, *path, *items, *id;
};

/* Calls fn for each item of the list, filtered by the label "key" or "key=value". */
static int list_by_label(const struct list_kind *k, const char *label, const char *value_label,
			 docker_list_fn fn, void *arg, long timeout_ms, struct err *e)
{
	json_object *filter = NULL, *arr = NULL, *resp = NULL, *items;
	char key[256], *q = NULL;
	const char *eq = strchr(label, '=');
	struct buf path;
	struct call c;
	int rc;

	buf_init(&path, 2048);
	snprintf(key, sizeof(key), "%.*s", (int)(eq ? eq - label : (long)strlen(label)), label);
	if (!key[0] || strlen(label) > 512) {
		rc = err_set(e, ERR_INVALID, "label filter must be key or key=value");
		goto out;
	}
	if (!(filter = json_object_new_object()) || !(arr = json_object_new_array()) ||
	    json_object_object_add(filter, "label", arr) ||
	    json_object_array_add(arr, json_object_new_string(label)) ||
	    !(q = curl_easy_escape(NULL, json_object_to_json_string_ext(filter, JSON_C_TO_STRING_PLAIN), 0)) ||
	    buf_printf(&path, "%s%cfilters=%s", k->path, strchr(k->path, '?') ? '&' : '?', q)) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	dk_call_init(&c, k->what, "GET", path.data, timeout_ms, e);
	if ((rc = dk_call_json(&c, k->items ? json_type_object : json_type_array, &resp)))
		goto out;
	items = resp;
	if (k->items && (!json_object_object_get_ex(resp, k->items, &items) ||
			 !json_object_is_type(items, json_type_array)))
		goto out;  /* none: Docker answers null for an empty list */
	for (size_t i = 0, n = json_object_array_length(items); i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i), *id, *labels, *v, *state;
		const char *value = "", *st = "";

		if (!json_object_object_get_ex(it, k->id, &id) || !json_object_is_type(id, json_type_string))
			continue;
		if (json_object_object_get_ex(it, "Labels", &labels) &&
		    json_object_object_get_ex(labels, value_label ? value_label : key, &v) &&
		    json_object_is_type(v, json_type_string))
			value = json_object_get_string(v);
		if (json_object_object_get_ex(it, "State", &state) && json_object_is_type(state, json_type_string))
			st = json_object_get_string(state);
		if ((rc = fn(arg, json_object_get_string(id), value, st)))
			goto out;
	}
out:
	curl_free(q);
	json_object_put(filter);
	json_object_put(resp);
	buf_release(&path);
	return rc;
}

int docker_container_list(const char *label, const char *value_label, docker_list_fn fn,
			  void *arg, long timeout_ms, struct err *e)
{
	static const struct list_kind k = { "list containers", "/containers/json?all=1", NULL, "Id" };

	return list_by_label(&k, label, value_label, fn, arg, timeout_ms, e);
}

int docker_volume_list(const char *label, const char *value_label, docker_list_fn fn,
		       void *arg, long timeout_ms, struct err *e)
{
	static const struct list_kind k = { "list volumes", "/volumes", "Volumes", "Name" };

	return list_by_label(&k, label, value_label, fn, arg, timeout_ms, e);
}

int docker_volume_remove(const char *name, long timeout_ms, struct err *e)
{
	return object_call(DK_VOLUME, "remove volume", "DELETE", name, "", timeout_ms, e);
}
