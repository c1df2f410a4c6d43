/* api_images.c: GET /api/v3/sandbox-images (SPEC §4 "What's inside"): the images
 * SANDBOXD_IMAGES names, each with its size and main tools' versions as the engine's copy
 * of the image says. The versions are the image's own label (sandboxd.packages, written
 * by deploy/build-runner-image.sh running each tool's --version at build time), never a
 * list kept here: an operator's image built FROM one of ours inherits it. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/common/banned.h"

#define IMAGE_PACKAGES_LABEL "sandboxd.packages"

/* "name=version name=version …" to [{name, version}], skipping words without '='. */
static json_object *packages_json(const char *label)
{
	json_object *a = json_object_new_array();
	char word[256];

	while (*label) {
		size_t n = strcspn(label, " ");
		if (n > 0 && n < sizeof(word)) {
			memcpy(word, label, n);
			word[n] = 0;
			char *eq = strchr(word, '=');
			if (eq && eq > word && eq[1]) {
				json_object *p = json_object_new_object();
				*eq = 0;
				json_add_str(p, "name", word);
				json_add_str(p, "version", eq + 1);
				json_object_array_add(a, p);
			}
		}
		label += n;
		label += strspn(label, " ");
	}
	return a;
}

/* One image's entry. The engine lacking the image is no error: size null, no packages,
 * present false (a create of it would pull it or answer 503). */
static int image_json(const struct config_image *im, int is_default, json_object **out,
		      struct err *e)
{
	char label[4096];
	int64_t size = 0;
	int rc = box_image_info(im->ref, IMAGE_PACKAGES_LABEL, &size, label, sizeof(label),
				BOX_CALL_MS, e);
	json_object *o;

	if (rc && rc != ERR_NOTFOUND)
		return rc;
	*out = o = json_object_new_object();
	json_add_str(o, "name", im->name);
	json_add_str(o, "image", im->ref);
	json_add_bool(o, "default", is_default);
	json_add_bool(o, "present", rc == 0);
	if (rc == 0)
		json_add_int(o, "size", size);
	else
		json_object_object_add(o, "size", NULL);
	json_object_object_add(o, "packages", packages_json(rc == 0 ? label : ""));
	return 0;
}

int api_sandbox_images(struct req *r, struct err *e)
{
	json_object *list = json_object_new_array(), *o;

	for (int i = 0; i < r->cfg->nimages; i++) {
		int rc = image_json(&r->cfg->images[i], i == 0, &o, e);
		if (rc) {
			char why[sizeof(e->msg)];
			json_object_put(list);
			snprintf(why, sizeof(why), "%s", e->msg);
			return err_http(e, 503, "the Docker engine did not answer: %s", why);
		}
		json_object_array_add(list, o);
	}
	http_json(r, 200, list);
	return 0;
}
