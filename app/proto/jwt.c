/* jwt.c: git URL tokens: ES256 JWS compact serialization and claims (see jwt.h). The P-256
 * keys and the ES256 primitives are in jwt_p256.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandboxd/lib/base64.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/proto/jwt_internal.h"
#include "sandboxd/common/banned.h"

/* A payload nests object > ref_policies > policy > ops: 4 levels. */
#define JWT_JSON_DEPTH 8
/* The most one part of a JWT_MAX_LEN token decodes to. */
#define PART_MAX (JWT_MAX_LEN / 4 * 3 + 2)

/* --- character classes --------------------------------------------------------------- */

static int is_printable(int c)
{
	return c > 0x20 && c < 0x7f;
}

static int is_kid_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == ':' || c == '-';
}

static int is_owner_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-';
}

static int is_name_char(int c)
{
	return is_owner_char(c) || c == '.' || c == '_';
}

/* 1 when s[0..n) is non-empty and every byte is in the class. */
static int all_of(const char *s, size_t n, int (*ok)(int))
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!ok((unsigned char)s[i]))
			return 0;
	return 1;
}

static int valid_kid(const char *kid)
{
	size_t n = strnlen(kid, JWT_KID_MAX + 1);

	return n <= JWT_KID_MAX && all_of(kid, n, is_kid_char);
}

/* --- parsing ------------------------------------------------------------------------ */

struct parts {
	const char *h, *p, *s;
	size_t hn, pn, sn;
};

static int split(const char *tok, size_t n, struct parts *t, struct err *e)
{
	const char *dot[2] = { NULL, NULL };
	int dots = 0;

	if (!tok || n == 0)
		return err_set(e, ERR_INVALID, "token is empty");
	if (n > JWT_MAX_LEN)
		return err_set(e, ERR_INVALID, "token is longer than %d bytes", JWT_MAX_LEN);
	for (size_t i = 0; i < n; i++)
		if (tok[i] == '.') {
			if (dots < 2)
				dot[dots] = tok + i;
			dots++;
		}
	if (dots != 2)
		return err_set(e, ERR_INVALID, "token must have 3 parts, not %d", dots + 1);
	t->h = tok;
	t->hn = (size_t)(dot[0] - tok);
	t->p = dot[0] + 1;
	t->pn = (size_t)(dot[1] - t->p);
	t->s = dot[1] + 1;
	t->sn = (size_t)(tok + n - t->s);
	if (!t->hn || !t->pn || !t->sn)
		return err_set(e, ERR_INVALID, "token has an empty part");
	return 0;
}

/* Decodes one base64url part that must hold a JSON object; the caller puts *out. */
static int decode_object(const char *s, size_t n, const char *what, json_object **out,
			 struct err *e)
{
	unsigned char buf[PART_MAX];
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *o;
	size_t len;

	*out = NULL;
	if (base64url_decode(s, n, buf, sizeof(buf), &len))
		return err_set(e, ERR_INVALID, "%s is not base64url without padding", what);
	if (len == 0 || memchr(buf, 0, len))
		return err_set(e, ERR_INVALID, "%s is not a JSON object", what);
	tok = json_tokener_new_ex(JWT_JSON_DEPTH);
	if (!tok)
		return ERR_NOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr != json_tokener_success || !o || json_tokener_get_parse_end(tok) != len ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		json_tokener_free(tok);
		return err_set(e, ERR_INVALID, "%s is not a JSON object", what);
	}
	json_tokener_free(tok);
	*out = o;
	return 0;
}

/* 0 and *v when present and not null; 1 when absent (or null) and optional. */
static int member(json_object *o, const char *what, const char *name, int required,
		  json_object **v, struct err *e)
{
	if (!json_object_object_get_ex(o, name, v) || json_object_is_type(*v, json_type_null)) {
		if (required)
			return err_set(e, ERR_INVALID, "%s '%s' is required", what, name);
		return 1;
	}
	return 0;
}

/* 1 when v is a string equal to s (no embedded NUL). */
static int string_is(json_object *v, const char *s)
{
	return json_object_is_type(v, json_type_string) &&
	       (size_t)json_object_get_string_len(v) == strlen(s) &&
	       strcmp(json_object_get_string(v), s) == 0;
}

/* A string of 1..max bytes, each in the class, copied into out[max + 1]. "" if optional
 * and absent. */
static int get_string(json_object *o, const char *what, const char *name, int required,
		      size_t max, int (*ok)(int), char *out, struct err *e)
{
	json_object *v;
	const char *s;
	size_t n;
	int rc = member(o, what, name, required, &v, e);

	out[0] = 0;
	if (rc == 1)
		return 0;
	if (rc)
		return rc;
	if (!json_object_is_type(v, json_type_string))
		return err_set(e, ERR_INVALID, "%s '%s' must be a string", what, name);
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (n == 0 || n > max)
		return err_set(e, ERR_INVALID, "%s '%s' must be 1 to %zu characters", what, name,
			       max);
	if (!all_of(s, n, ok))
		return err_set(e, ERR_INVALID, "%s '%s' has a character that is not allowed", what,
			       name);
	memcpy(out, s, n);
	out[n] = 0;
	return 0;
}

static int get_time(json_object *o, const char *name, int required, int64_t *out,
		    int *present, struct err *e)
{
	json_object *v;
	int64_t t;
	int rc = member(o, "claim", name, required, &v, e);

	*out = 0;
	if (present)
		*present = 0;
	if (rc == 1)
		return 0;
	if (rc)
		return rc;
	if (!json_object_is_type(v, json_type_int))
		return err_set(e, ERR_INVALID, "claim '%s' must be an integer", name);
	/* json-c clamps numbers out of range to INT64_MIN/MAX, which are out of range here. */
	t = json_object_get_int64(v);
	if (t < 0 || t > JWT_TIME_MAX)
		return err_set(e, ERR_INVALID, "claim '%s' is out of range", name);
	*out = t;
	if (present)
		*present = 1;
	return 0;
}

/* "owner/name" into owner and name. */
static int split_repo(const char *repo, char owner[JWT_OWNER_MAX + 1],
		      char name[JWT_NAME_MAX + 1], struct err *e)
{
	const char *slash = strchr(repo, '/');
	size_t on, nn;

	if (!slash)
		goto bad;
	on = (size_t)(slash - repo);
	nn = strlen(slash + 1);
	if (on > JWT_OWNER_MAX || nn > JWT_NAME_MAX || !all_of(repo, on, is_owner_char) ||
	    !all_of(slash + 1, nn, is_name_char) || slash[1] == '.')
		goto bad;
	memcpy(owner, repo, on);
	owner[on] = 0;
	memcpy(name, slash + 1, nn + 1);
	return 0;
bad:
	return err_set(e, ERR_INVALID, "claim 'repo' must be 'owner/name'");
}

static int get_repo(json_object *o, char owner[JWT_OWNER_MAX + 1], char name[JWT_NAME_MAX + 1],
		    struct err *e)
{
	char repo[JWT_OWNER_MAX + 1 + JWT_NAME_MAX + 1];
	json_object *v;
	size_t n;
	int rc = member(o, "claim", "repo", 1, &v, e);

	owner[0] = name[0] = 0;
	if (rc)
		return rc < 0 ? rc : ERR_INVALID;
	if (!json_object_is_type(v, json_type_string) ||
	    (n = (size_t)json_object_get_string_len(v)) >= sizeof(repo))
		return err_set(e, ERR_INVALID, "claim 'repo' must be 'owner/name'");
	memcpy(repo, json_object_get_string(v), n);
	repo[n] = 0;
	if (strlen(repo) != n)
		return err_set(e, ERR_INVALID, "claim 'repo' must be 'owner/name'");
	return split_repo(repo, owner, name, e);
}

/* The header: alg ES256 (whatever the token says, the key decides: this only refuses
 * tokens that claim another algorithm), typ JWT if present, a kid, no crit. */
static int check_header(json_object *h, char kid[JWT_KID_MAX + 1], struct err *e)
{
	json_object *v;

	if (!json_object_object_get_ex(h, "alg", &v) || !string_is(v, "ES256"))
		return err_set(e, ERR_INVALID, "alg must be ES256");
	if (json_object_object_get_ex(h, "typ", &v) && !string_is(v, "JWT"))
		return err_set(e, ERR_INVALID, "typ must be JWT");
	/* RFC 7515 §4.1.11: extensions listed in crit must be understood; we know none. */
	if (json_object_object_get_ex(h, "crit", &v))
		return err_set(e, ERR_INVALID, "header 'crit' is not supported");
	return get_string(h, "header", "kid", 1, JWT_KID_MAX, is_kid_char, kid, e);
}

static int get_audience(json_object *o, const char *audience, struct err *e)
{
	json_object *v;
	int rc = member(o, "claim", "aud", 1, &v, e);

	if (rc)
		return rc < 0 ? rc : ERR_INVALID;
	if (json_object_is_type(v, json_type_string)) {
		if (string_is(v, audience))
			return 0;
	} else if (json_object_is_type(v, json_type_array)) {
		size_t n = json_object_array_length(v);
		int found = 0;

		for (size_t i = 0; i < n; i++) {
			json_object *a = json_object_array_get_idx(v, i);

			if (!json_object_is_type(a, json_type_string))
				return err_set(e, ERR_INVALID,
					       "claim 'aud' must be a string or an array of strings");
			found |= string_is(a, audience);
		}
		if (found)
			return 0;
	} else {
		return err_set(e, ERR_INVALID, "claim 'aud' must be a string or an array of strings");
	}
	return err_set(e, ERR_INVALID, "token is for another audience");
}

static int get_scopes(json_object *o, unsigned *out, struct err *e)
{
	json_object *v;
	size_t n;
	int rc = member(o, "claim", "scopes", 1, &v, e);

	*out = 0;
	if (rc)
		return rc < 0 ? rc : ERR_INVALID;
	if (!json_object_is_type(v, json_type_array) || (n = json_object_array_length(v)) == 0)
		return err_set(e, ERR_INVALID, "claim 'scopes' must be a non-empty array");
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(v, i);

		if (string_is(s, "git:read"))
			*out |= JWT_SCOPE_READ;
		else if (string_is(s, "git:write"))
			*out |= JWT_SCOPE_WRITE;
		else
			return err_set(e, ERR_INVALID,
				       "claim 'scopes' may only hold 'git:read' and 'git:write'");
	}
	return 0;
}

static int get_kind(json_object *o, int *ephemeral, struct err *e)
{
	json_object *v;
	int rc = member(o, "claim", "kind", 0, &v, e);

	*ephemeral = 0;
	if (rc == 1)
		return 0;
	if (rc)
		return rc;
	if (string_is(v, "normal"))
		return 0;
	if (string_is(v, "ephemeral")) {
		*ephemeral = 1;
		return 0;
	}
	return err_set(e, ERR_INVALID, "claim 'kind' must be 'normal' or 'ephemeral'");
}

static int get_policy(json_object *p, size_t i, struct jwt_ref_policy *out, struct err *e)
{
	json_object *pattern, *ops;
	const char *s;
	size_t n, nops;

	if (!json_object_is_type(p, json_type_object))
		return err_set(e, ERR_INVALID, "ref_policies[%zu] must be an object", i);
	if (json_object_object_length(p) != 2 ||
	    !json_object_object_get_ex(p, "pattern", &pattern) ||
	    !json_object_object_get_ex(p, "ops", &ops))
		return err_set(e, ERR_INVALID,
			       "ref_policies[%zu] must have exactly the members pattern and ops", i);
	if (!json_object_is_type(pattern, json_type_string))
		return err_set(e, ERR_INVALID, "ref_policies[%zu].pattern must be a string", i);
	s = json_object_get_string(pattern);
	n = (size_t)json_object_get_string_len(pattern);
	if (n > JWT_PATTERN_MAX || !all_of(s, n, is_printable))
		return err_set(e, ERR_INVALID,
			       "ref_policies[%zu].pattern must be 1 to %d printable characters", i,
			       JWT_PATTERN_MAX);
	memcpy(out->pattern, s, n);
	out->pattern[n] = 0;
	out->ops = 0;
	if (!json_object_is_type(ops, json_type_array) || (nops = json_object_array_length(ops)) == 0)
		return err_set(e, ERR_INVALID, "ref_policies[%zu].ops must be a non-empty array", i);
	for (size_t j = 0; j < nops; j++) {
		json_object *op = json_object_array_get_idx(ops, j);

		if (string_is(op, "no-push"))
			out->ops |= JWT_OP_NO_PUSH;
		else if (string_is(op, "no-force-push"))
			out->ops |= JWT_OP_NO_FORCE_PUSH;
		else
			return err_set(e, ERR_INVALID,
				       "ref_policies[%zu].ops may only hold 'no-push' and 'no-force-push'",
				       i);
	}
	return 0;
}

static int get_policies(json_object *o, struct jwt_claims *c, struct err *e)
{
	json_object *v;
	size_t n;
	int rc = member(o, "claim", "ref_policies", 0, &v, e);

	c->n_ref_policies = 0;
	if (rc == 1)
		return 0;
	if (rc)
		return rc;
	if (!json_object_is_type(v, json_type_array))
		return err_set(e, ERR_INVALID, "claim 'ref_policies' must be an array");
	n = json_object_array_length(v);
	if (n > JWT_MAX_REF_POLICIES)
		return err_set(e, ERR_INVALID, "claim 'ref_policies' has more than %d policies",
			       JWT_MAX_REF_POLICIES);
	for (size_t i = 0; i < n; i++) {
		rc = get_policy(json_object_array_get_idx(v, i), i, &c->ref_policies[i], e);
		if (rc)
			return rc;
	}
	c->n_ref_policies = n;
	return 0;
}

/* --- claims checks shared by jwt_sign and jwt_verify ----------------------------------- */

static int check_string(const char *s, size_t size, const char *name, int required,
			int (*ok)(int), struct err *e)
{
	size_t n = strnlen(s, size);

	if (n == size)
		return err_set(e, ERR_INVALID, "claim '%s' is too long", name);
	if (n == 0)
		return required ? err_set(e, ERR_INVALID, "claim '%s' is required", name) : 0;
	if (!all_of(s, n, ok))
		return err_set(e, ERR_INVALID, "claim '%s' has a character that is not allowed",
			       name);
	return 0;
}

static int check_time_range(int64_t t, const char *name, struct err *e)
{
	if (t < 0 || t > JWT_TIME_MAX)
		return err_set(e, ERR_INVALID, "claim '%s' is out of range", name);
	return 0;
}

/* Everything about the claims that does not depend on the clock. */
static int check_claims(const struct jwt_claims *c, struct err *e)
{
	int rc;

	if ((rc = check_string(c->iss, sizeof(c->iss), "iss", 1, is_printable, e)) ||
	    (rc = check_string(c->sub, sizeof(c->sub), "sub", 0, is_printable, e)) ||
	    (rc = check_string(c->aud, sizeof(c->aud), "aud", 1, is_printable, e)) ||
	    (rc = check_string(c->jti, sizeof(c->jti), "jti", 0, is_printable, e)))
		return rc;
	if (check_string(c->owner, sizeof(c->owner), "repo", 1, is_owner_char, NULL) ||
	    check_string(c->name, sizeof(c->name), "repo", 1, is_name_char, NULL) ||
	    c->name[0] == '.')
		return err_set(e, ERR_INVALID, "claim 'repo' must be 'owner/name'");
	if (c->scopes == 0 || (c->scopes & ~(unsigned)(JWT_SCOPE_READ | JWT_SCOPE_WRITE)))
		return err_set(e, ERR_INVALID,
			       "claim 'scopes' must hold 'git:read', 'git:write' or both");
	if (c->ephemeral != 0 && c->ephemeral != 1)
		return err_set(e, ERR_INVALID, "claim 'kind' must be 'normal' or 'ephemeral'");
	if (c->n_ref_policies > JWT_MAX_REF_POLICIES)
		return err_set(e, ERR_INVALID, "claim 'ref_policies' has more than %d policies",
			       JWT_MAX_REF_POLICIES);
	for (size_t i = 0; i < c->n_ref_policies; i++) {
		const struct jwt_ref_policy *p = &c->ref_policies[i];

		if (check_string(p->pattern, sizeof(p->pattern), "pattern", 1, is_printable, NULL))
			return err_set(e, ERR_INVALID,
				       "ref_policies[%zu].pattern must be 1 to %d printable characters",
				       i, JWT_PATTERN_MAX);
		if (p->ops == 0 || (p->ops & ~(unsigned)(JWT_OP_NO_PUSH | JWT_OP_NO_FORCE_PUSH)))
			return err_set(e, ERR_INVALID,
				       "ref_policies[%zu].ops must hold 'no-push', 'no-force-push' or both",
				       i);
	}
	if ((rc = check_time_range(c->iat, "iat", e)) || (rc = check_time_range(c->exp, "exp", e)) ||
	    (c->has_nbf && (rc = check_time_range(c->nbf, "nbf", e))))
		return rc;
	if (c->exp <= c->iat)
		return err_set(e, ERR_INVALID, "exp must be after iat");
	if (c->exp - c->iat > JWT_MAX_TTL)
		return err_set(e, ERR_INVALID, "ttl over %d s", JWT_MAX_TTL);
	if (c->has_nbf && c->nbf >= c->exp)
		return err_set(e, ERR_INVALID, "nbf must be before exp");
	return 0;
}

/* --- tokens ---------------------------------------------------------------------------- */

int jwt_peek(const char *tok, size_t n, struct jwt_unverified *out, struct err *e)
{
	struct parts t;
	json_object *h = NULL, *p = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = split(tok, n, &t, e);
	if (rc)
		return rc;
	rc = decode_object(t.h, t.hn, "header", &h, e);
	if (!rc)
		rc = check_header(h, out->kid, e);
	if (!rc)
		rc = decode_object(t.p, t.pn, "payload", &p, e);
	if (!rc)
		rc = get_string(p, "claim", "iss", 1, JWT_ISS_MAX, is_printable, out->iss, e);
	if (!rc)
		rc = get_repo(p, out->owner, out->name, e);
	json_object_put(h);
	json_object_put(p);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

static int put(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return ERR_NOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return ERR_NOMEM;
	}
	return 0;
}

static int push(json_object *a, json_object *v)
{
	if (!v)
		return ERR_NOMEM;
	if (json_object_array_add(a, v)) {
		json_object_put(v);
		return ERR_NOMEM;
	}
	return 0;
}

json_object *jwt_ref_policies_json(const struct jwt_claims *c)
{
	json_object *a = json_object_new_array(), *p, *ops;
	size_t n = c->n_ref_policies < JWT_MAX_REF_POLICIES ? c->n_ref_policies :
							      JWT_MAX_REF_POLICIES;

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct jwt_ref_policy *rp = &c->ref_policies[i];

		p = json_object_new_object();
		if (push(a, p) ||
		    put(p, "pattern", json_object_new_string_len(rp->pattern,
				(int)strnlen(rp->pattern, sizeof(rp->pattern)))))
			goto fail;
		ops = json_object_new_array();
		if (put(p, "ops", ops))
			goto fail;
		if (((rp->ops & JWT_OP_NO_PUSH) && push(ops, json_object_new_string("no-push"))) ||
		    ((rp->ops & JWT_OP_NO_FORCE_PUSH) &&
		     push(ops, json_object_new_string("no-force-push"))))
			goto fail;
	}
	return a;
fail:
	json_object_put(a);
	return NULL;
}

static json_object *claims_json(const struct jwt_claims *c)
{
	json_object *o = json_object_new_object(), *scopes;
	char repo[JWT_OWNER_MAX + 1 + JWT_NAME_MAX + 1];

	if (!o)
		return NULL;
	snprintf(repo, sizeof(repo), "%s/%s", c->owner, c->name);
	if (put(o, "iss", json_object_new_string(c->iss)) ||
	    (c->sub[0] && put(o, "sub", json_object_new_string(c->sub))) ||
	    put(o, "aud", json_object_new_string(c->aud)) ||
	    put(o, "repo", json_object_new_string(repo)))
		goto fail;
	scopes = json_object_new_array();
	if (put(o, "scopes", scopes) ||
	    ((c->scopes & JWT_SCOPE_READ) && push(scopes, json_object_new_string("git:read"))) ||
	    ((c->scopes & JWT_SCOPE_WRITE) && push(scopes, json_object_new_string("git:write"))))
		goto fail;
	if (put(o, "kind", json_object_new_string(c->ephemeral ? "ephemeral" : "normal")) ||
	    (c->n_ref_policies && put(o, "ref_policies", jwt_ref_policies_json(c))) ||
	    put(o, "iat", json_object_new_int64(c->iat)) ||
	    (c->has_nbf && put(o, "nbf", json_object_new_int64(c->nbf))) ||
	    put(o, "exp", json_object_new_int64(c->exp)) ||
	    (c->jti[0] && put(o, "jti", json_object_new_string(c->jti))))
		goto fail;
	return o;
fail:
	json_object_put(o);
	return NULL;
}

int jwt_sign(EVP_PKEY *k, const char *kid, const struct jwt_claims *c, char **out,
	     struct err *e)
{
	json_object *o = NULL;
	const char *payload;
	char header[JWT_KID_MAX + 64], *tok = NULL;
	unsigned char sig[SIG_LEN];
	size_t hn, pn, eh, ep, es, total;
	int rc;

	*out = NULL;
	if (!kid || !valid_kid(kid))
		return err_set(e, ERR_INVALID, "kid must be 1 to %d of [A-Za-z0-9._:-]",
			       JWT_KID_MAX);
	rc = check_claims(c, e);
	if (rc)
		return rc;
	o = claims_json(c);
	payload = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
	if (!payload) {
		rc = ERR_NOMEM;
		goto out;
	}
	pn = strlen(payload);
	hn = (size_t)snprintf(header, sizeof(header), "{\"alg\":\"ES256\",\"typ\":\"JWT\",\"kid\":\"%s\"}",
			      kid);
	eh = base64url_encoded_size(hn) - 1;
	ep = base64url_encoded_size(pn) - 1;
	es = base64url_encoded_size(SIG_LEN) - 1;
	total = eh + 1 + ep + 1 + es;
	if (pn > JWT_MAX_LEN || total > JWT_MAX_LEN) {
		rc = err_set(e, ERR_INVALID, "token would be longer than %d bytes", JWT_MAX_LEN);
		goto out;
	}
	tok = malloc(total + 1);
	if (!tok) {
		rc = ERR_NOMEM;
		goto out;
	}
	base64url_encode((const unsigned char *)header, hn, tok);
	tok[eh] = '.';
	base64url_encode((const unsigned char *)payload, pn, tok + eh + 1);
	rc = jwt_es256_sign(k, tok, eh + 1 + ep, sig, e);
	if (rc)
		goto out;
	tok[eh + 1 + ep] = '.';
	base64url_encode(sig, SIG_LEN, tok + eh + 1 + ep + 1);
	*out = tok;
	tok = NULL;
out:
	free(tok);
	json_object_put(o);
	return rc;
}

static int check_clock(const struct jwt_claims *c, int64_t now, struct err *e)
{
	if (c->iat > now + JWT_SKEW)
		return err_set(e, ERR_INVALID, "token issued in the future (iat)");
	if (c->has_nbf && c->nbf > now + JWT_SKEW)
		return err_set(e, ERR_INVALID, "token not valid yet (nbf)");
	if (c->exp <= now - JWT_SKEW)
		return err_set(e, ERR_INVALID, "token expired");
	return 0;
}

/* The payload's claims into c (whose aud is already the expected audience). */
static int get_claims(json_object *p, const char *audience, int64_t now, struct jwt_claims *c,
		      struct err *e)
{
	int rc;

	if ((rc = get_audience(p, audience, e)) ||
	    (rc = get_string(p, "claim", "iss", 1, JWT_ISS_MAX, is_printable, c->iss, e)) ||
	    (rc = get_string(p, "claim", "sub", 0, JWT_SUB_MAX, is_printable, c->sub, e)) ||
	    (rc = get_string(p, "claim", "jti", 0, JWT_JTI_MAX, is_printable, c->jti, e)) ||
	    (rc = get_repo(p, c->owner, c->name, e)) ||
	    (rc = get_scopes(p, &c->scopes, e)) ||
	    (rc = get_kind(p, &c->ephemeral, e)) ||
	    (rc = get_policies(p, c, e)) ||
	    (rc = get_time(p, "iat", 1, &c->iat, NULL, e)) ||
	    (rc = get_time(p, "exp", 1, &c->exp, NULL, e)) ||
	    (rc = get_time(p, "nbf", 0, &c->nbf, &c->has_nbf, e)) ||
	    (rc = check_claims(c, e)))
		return rc;
	return check_clock(c, now, e);
}

int jwt_verify(const char *tok, size_t n, EVP_PKEY *k, const char *audience, int64_t now,
	       struct jwt_claims *out, struct err *e)
{
	struct parts t;
	json_object *h = NULL, *p = NULL;
	unsigned char sig[128]; /* room to tell a 63- or 65-byte signature from 64 */
	size_t siglen, alen;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!audience || (alen = strlen(audience)) == 0 || alen > JWT_AUD_MAX ||
	    !all_of(audience, alen, is_printable))
		return err_set(e, ERR_INVALID, "audience must be 1 to %d printable characters",
			       JWT_AUD_MAX);
	if (now < 0 || now > JWT_TIME_MAX)
		return err_set(e, ERR_INVALID, "the clock is out of range");
	rc = jwt_check_p256(k, e);
	if (rc)
		return rc;
	rc = split(tok, n, &t, e);
	if (rc)
		return rc;
	rc = decode_object(t.h, t.hn, "header", &h, e);
	if (rc)
		goto out;
	rc = check_header(h, out->kid, e);
	if (rc)
		goto out;
	if (t.sn > sizeof(sig) / 3 * 4) {
		rc = err_set(e, ERR_INVALID, "signature must be 64 bytes (R||S)");
		goto out;
	}
	if (base64url_decode(t.s, t.sn, sig, sizeof(sig), &siglen)) {
		rc = err_set(e, ERR_INVALID, "signature is not base64url without padding");
		goto out;
	}
	/* The signature covers the header and payload exactly as sent. */
	rc = jwt_es256_verify_p256(k, tok, t.hn + 1 + t.pn, sig, siglen, e);
	if (rc)
		goto out;
	rc = decode_object(t.p, t.pn, "payload", &p, e);
	if (rc)
		goto out;
	memcpy(out->aud, audience, alen + 1);
	rc = get_claims(p, audience, now, out, e);
out:
	json_object_put(h);
	json_object_put(p);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}
