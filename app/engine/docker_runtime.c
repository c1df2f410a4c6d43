/* docker_runtime.c: the runtimes an engine has, from its /info (docker.h): whether it lists
 * one by name, and which it runs by default. What isolation.c asks before it makes a
 * gVisor sandbox, so that one never runs under another runtime unasked. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "sandboxd/engine/docker.h"
#include "sandboxd/engine/docker_int.h"
#include "sandboxd/common/banned.h"

/* Docker's /info: "Runtimes": {"runc": {"path": "runc"}, "runsc": {"path": …}, …} (since
 * 1.12) and "DefaultRuntime": "runc". */
static void runtimes_of(json_object *info, const char *want, struct docker_runtimes *out)
{
	json_object *rts, *def, *one;

	memset(out, 0, sizeof(*out));
	if (json_object_object_get_ex(info, "Runtimes", &rts) &&
	    json_object_is_type(rts, json_type_object)) {
		out->listed = 1;
		out->has = want && *want && json_object_object_get_ex(rts, want, &one) &&
			   json_object_is_type(one, json_type_object);
	}
	if (json_object_object_get_ex(info, "DefaultRuntime", &def) &&
	    json_object_is_type(def, json_type_string) &&
	    json_object_get_string_len(def) <= DOCKER_RUNTIME_MAX)
		snprintf(out->deflt, sizeof(out->deflt), "%s", json_object_get_string(def));
}

int docker_info_parse_runtimes(const char *json, const char *want, struct docker_runtimes *out)
{
	json_object *info = json ? json_tokener_parse(json) : NULL;

	memset(out, 0, sizeof(*out));
	if (!info || !json_object_is_type(info, json_type_object)) {
		json_object_put(info);
		return ERR_FAIL;
	}
	runtimes_of(info, want, out);
	json_object_put(info);
	return 0;
}

int docker_info_runtimes(const char *want, struct docker_runtimes *out, long timeout_ms,
			 struct err *e)
{
	json_object *info = NULL;
	struct call c;
	int rc;

	memset(out, 0, sizeof(*out));
	dk_call_init(&c, "info", "GET", "/info", timeout_ms, e);
	if ((rc = dk_call_json(&c, json_type_object, &info)))
		return rc;
	runtimes_of(info, want, out);
	json_object_put(info);
	return 0;
}
