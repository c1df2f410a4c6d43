/* lfs.c: the Git LFS batch request, checked (lfs.h). */
#include <stdio.h>
#include <string.h>
#include "sandboxd/proto/lfs.h"
#include "sandboxd/common/banned.h"

int lfs_oid_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (i >= LFS_OID_LEN || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == LFS_OID_LEN;
}

static int get(json_object *o, const char *key, json_type t, json_object **v)
{
	return json_object_object_get_ex(o, key, v) && json_object_is_type(*v, t);
}

static int operation(json_object *body, struct lfs_batch *out, struct err *e)
{
	json_object *v;
	const char *op;

	if (!get(body, "operation", json_type_string, &v))
		return err_set(e, ERR_INVALID, "field 'operation' must be \"download\" or \"upload\"");
	op = json_object_get_string(v);
	if (strcmp(op, "download") && strcmp(op, "upload"))
		return err_set(e, ERR_INVALID, "field 'operation' must be \"download\" or \"upload\"");
	out->upload = op[0] == 'u';
	return 0;
}

/* transfers, when given, must offer "basic" (the only one served); hash_algo "sha256". */
static int options(json_object *body, struct err *e)
{
	json_object *v;
	int basic = 0;

	if (json_object_object_get_ex(body, "transfers", &v) && !json_object_is_type(v, json_type_null)) {
		size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
		if (!json_object_is_type(v, json_type_array) || n > 64)
			return err_set(e, ERR_INVALID, "field 'transfers' must be an array of names");
		for (size_t i = 0; i < n; i++) {
			json_object *t = json_object_array_get_idx(v, i);
			if (json_object_is_type(t, json_type_string) &&
			    strcmp(json_object_get_string(t), "basic") == 0)
				basic = 1;
		}
		if (!basic)
			return err_set(e, ERR_INVALID, "field 'transfers' must offer \"basic\"");
	}
	if (json_object_object_get_ex(body, "hash_algo", &v) && !json_object_is_type(v, json_type_null) &&
	    (!json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "sha256")))
		return err_set(e, ERR_INVALID, "field 'hash_algo' must be \"sha256\"");
	return 0;
}

int lfs_batch_parse(json_object *body, struct lfs_batch *out, struct err *e)
{
	json_object *arr;
	int rc;

	out->n = 0;
	if ((rc = operation(body, out, e)) || (rc = options(body, e)))
		return rc;
	if (!get(body, "objects", json_type_array, &arr) || json_object_array_length(arr) == 0 ||
	    json_object_array_length(arr) > LFS_BATCH_MAX)
		return err_set(e, ERR_INVALID, "field 'objects' must be an array of 1 to %d objects",
			       LFS_BATCH_MAX);
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i), *oid, *size;

		if (!json_object_is_type(o, json_type_object) ||
		    !get(o, "oid", json_type_string, &oid) || !lfs_oid_valid(json_object_get_string(oid)))
			return err_set(e, ERR_INVALID, "objects[%zu]: 'oid' must be 64 lower-case hex "
				       "digits", i);
		if (!get(o, "size", json_type_int, &size) || json_object_get_int64(size) < 0)
			return err_set(e, ERR_INVALID, "objects[%zu]: 'size' must be a byte count", i);
		memcpy(out->objects[out->n].oid, json_object_get_string(oid), LFS_OID_LEN + 1);
		out->objects[out->n++].size = json_object_get_int64(size);
	}
	return 0;
}

int lfs_object_path(char *out, size_t n, const char *repo_dir, const char *oid)
{
	int w = snprintf(out, n, "%s/lfs/objects/%.2s/%.2s/%s", repo_dir, oid, oid + 2, oid);

	return w < 0 || (size_t)w >= n ? ERR_TOOBIG : 0;
}

int lfs_pointer_oid(const char *d, size_t n, char oid[LFS_OID_LEN + 1])
{
	static const char version[] = "version https://", key[] = "oid sha256:";
	size_t i = 0;

	oid[0] = 0;
	if (n >= LFS_POINTER_MAX || n < sizeof(version) - 1 ||
	    memcmp(d, version, sizeof(version) - 1))
		return 0;
	/* Line by line: the oid line, its 64 digits and the line's end. */
	while (i < n) {
		const char *nl = memchr(d + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (d + i)) : n - i;

		if (len == sizeof(key) - 1 + LFS_OID_LEN && memcmp(d + i, key, sizeof(key) - 1) == 0) {
			memcpy(oid, d + i + sizeof(key) - 1, LFS_OID_LEN);
			oid[LFS_OID_LEN] = 0;
			if (lfs_oid_valid(oid))
				return 1;
			oid[0] = 0;
			return 0;
		}
		i += len + 1;
	}
	return 0;
}
