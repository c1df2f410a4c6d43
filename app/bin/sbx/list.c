/* list.c: sbx list, the caller's sandboxes on every repository (GET /api/v3/user/sandboxes,
 * newest first), page after page of 100. One line each: id, state, repository, ref,
 * created_at, tab-separated (for cut and awk). --json prints one array of them all. */
#include <stdio.h>
#include <string.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

#define PER_PAGE 100
#define MAX_PAGES 1000

static void print_row(struct json_object *o)
{
	const char *k[] = { "id", "state", "repository", "ref", "created_at" };

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		const char *v = str_field(o, k[i]);

		printf("%s%s", i ? "\t" : "", v ? v : "-");
	}
	putchar('\n');
}

int cmd_list(struct sbx *s, int argc, char **argv)
{
	char path[256], state[64] = "";
	struct json_object *all = json_object_new_array();
	int rc = SBX_OK;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "--state") && i + 1 < argc)
			v = argv[++i];
		else if (!strncmp(argv[i], "--state=", 8))
			v = argv[i] + 8;
		if (!v || !*v || url_escape(v, state, sizeof(state))) {
			json_object_put(all);
			return usage("list takes only --state STATE");
		}
	}
	for (int page = 1; page <= MAX_PAGES; page++) {
		struct reply r;
		struct json_object *a;
		size_t n;

		snprintf(path, sizeof(path), "/api/v3/user/sandboxes?per_page=%d&page=%d%s%s",
			 PER_PAGE, page, state[0] ? "&state=" : "", state);
		if (http_json(s, "GET", path, NULL, &r) || r.status != 200) {
			rc = http_fail(&r);
			buf_free(&r.body);
			break;
		}
		a = json_tokener_parse(r.body.p);
		buf_free(&r.body);
		if (!a || !json_object_is_type(a, json_type_array)) {
			json_object_put(a);
			rc = say(SBX_FAIL, "the server's answer is not a JSON array");
			break;
		}
		n = json_object_array_length(a);
		for (size_t i = 0; i < n; i++) {
			struct json_object *o = json_object_array_get_idx(a, i);

			if (s->json)
				json_object_array_add(all, json_object_get(o));
			else
				print_row(o);
		}
		json_object_put(a);
		if (n < PER_PAGE)
			break;
	}
	if (!rc && s->json)
		printf("%s\n", json_object_to_json_string_ext(all, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(all);
	return rc;
}
