/* relay_http.c: the worker's side of the relay between hosts (relay_http.h). */
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>
#include "sandboxd/lib/clock.h"
#include "sandboxd/lib/keyfile.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/http/relay_http.h"
#include "sandboxd/common/banned.h"

static unsigned char key[RELAY_KEY_LEN];
static int have_key;

int relay_http_key_load(const char *path, struct err *e)
{
	char text[2 * RELAY_KEY_LEN + 2];
	size_t n;
	int rc = keyfile_read(path, text, sizeof(text) - 1, &n, e);

	if (!rc && relay_key_parse(text, n, key, e))
		rc = err_set(e, ERR_INVALID, "'%s': %.200s", path, e->msg);
	have_key = rc == 0;
	OPENSSL_cleanse(text, sizeof(text));
	return rc;
}

/* The wall clock when the request first arrived: a parked call's replay started then. */
static int64_t arrived(const struct req *r)
{
	return (int64_t)time(NULL) - clock_us_since(&r->started) / 1000000;
}

int relay_http_accept(struct req *r, const char *token, struct err *e)
{
	struct relay_request q = { r->method, http_param(r, "REQUEST_URI"), r->cfg->relay_url };
	struct relay_claims c;
	int rc;

	if (!have_key || !r->cfg->relay_url[0])
		return err_set(e, ERR_DENIED, "relay refused: this host takes no relays");
	if ((rc = relay_parse(token, strlen(token), &c, e)) ||
	    (rc = relay_verify(key, &q, &c, arrived(r), e)))
		return rc;
	char *addr = pool_strdup(r->pool, c.addr);
	if (!addr)
		return err_set(e, ERR_NOMEM, "out of memory");
	r->relayed = 1;
	r->remote_addr = addr;
	memcpy(r->request_id, c.request_id, sizeof(c.request_id));
	log_set_request(r->request_id);
	return 0;
}

int relay_http_redirect(struct req *r, struct err *e)
{
	struct relay_request q = { r->method, http_param(r, "REQUEST_URI"), r->relay_to };
	char token[RELAY_TOKEN_MAX + 1], path[RELAY_PATH_MAX + 1];
	int rc;

	if (r->relayed)
		return err_http(e, 503, "the sandbox runs on the host at %s, and this request came "
				"here by relay already: it is not relayed again", r->relay_to);
	if (r->no_relay)
		return err_http(e, 503, "the sandbox runs on another host: call it in a request "
				"of its own, not in a batch");
	if (!have_key || !r->cfg->relay_url[0])
		return err_http(e, 503, "the sandbox runs on the host at %s, and this host relays "
				"to none (SANDBOXD_RELAY_URL)", r->relay_to);
	if (!q.uri || (rc = relay_sign(key, &q, (int64_t)time(NULL), r->remote_addr,
				       r->request_id, token, e)) ||
	    (rc = relay_redirect(r->relay_to, r->method, token, path, e))) {
		log_error("relaying %s %s to %s: %s", r->method, r->path, r->relay_to,
			  q.uri ? e->msg : "no REQUEST_URI");
		return err_http(e, 503, "the request could not be relayed to the sandbox's host");
	}
	http_header(r, "X-Accel-Redirect", path);
	http_empty(r, 200);
	r->relay_out = 1;
	log_info("%s %s: relayed to %s", r->method, r->path, r->relay_to);
	return 0;
}
