/* ls.c: sbx ls ID [PATH] (POST …/list, one level). One line an entry: its type as ls -l
 * shows it (d, -, l, ?), its size, its name (a directory's with a trailing /). */
#include <stdio.h>
#include <string.h>
#include "sbx.h"
#include "sandboxd/common/banned.h"

static int show_entries(struct json_object *o)
{
	struct json_object *entries, *t;

	if (!json_object_object_get_ex(o, "entries", &entries) ||
	    !json_object_is_type(entries, json_type_array))
		return say(SBX_FAIL, "the server's answer has no entries");
	for (size_t i = 0; i < json_object_array_length(entries); i++) {
		struct json_object *e = json_object_array_get_idx(entries, i), *size;
		const char *type = str_field(e, "type"), *name = str_field(e, "name");
		char c = '?';

		if (!type || !name)
			continue;
		c = !strcmp(type, "dir") ? 'd' : !strcmp(type, "file") ? '-' :
		    !strcmp(type, "symlink") ? 'l' : '?';
		printf("%c %12lld  %s%s\n", c,
		       json_object_object_get_ex(e, "size", &size) ? (long long)json_object_get_int64(size) : 0LL,
		       name, c == 'd' ? "/" : "");
	}
	if (json_object_object_get_ex(o, "truncated", &t) && json_object_get_boolean(t))
		fprintf(stderr, "sbx: the listing is truncated (at most 10,000 entries)\n");
	return SBX_OK;
}

int cmd_ls(struct sbx *s, int argc, char **argv)
{
	char path[2048];
	struct json_object *body;
	int rc;

	if (argc != 2 && argc != 3)
		return usage("ls takes ID [PATH]");
	if ((rc = sandbox_path(s, argv[1], path, sizeof(path) - 8)))
		return rc;
	strncat(path, "/list", sizeof(path) - strlen(path) - 1);
	body = json_object_new_object();
	json_object_object_add(body, "path", json_object_new_string(argc == 3 ? argv[2] : "."));
	rc = call_json(s, "POST", path, json_object_to_json_string(body), 200, show_entries);
	json_object_put(body);
	return rc;
}
