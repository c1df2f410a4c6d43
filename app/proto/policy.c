/* policy.c: ref policies: glob matching, parsing the claim, deciding an update. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/common/err.h"
#include "sandboxd/proto/policy.h"
#include "sandboxd/common/banned.h"

/* The classic two-pointer glob: on a mismatch, go back to just after the last `*` and let
 * it swallow one more character. Only the last `*` is ever revisited (an earlier one can
 * only swallow what the later one would), so there is no exponential backtracking. */
int policy_glob_match(const char *pattern, const char *name)
{
	const char *p = pattern, *s = name;
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*p == '*') {
			star = ++p;
			resume = s;
		} else if (*p && *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == 0;
}

static const struct {
	const char *name;
	unsigned op;
} ops_known[] = {
	{ "no-push", POLICY_NO_PUSH },
	{ "no-force-push", POLICY_NO_FORCE_PUSH },
};

static int parse_ops(json_object *ops, const char *field, size_t i, unsigned *out,
		     struct err *e)
{
	size_t n;

	*out = 0;
	if (!ops)
		return err_set(e, ERR_INVALID, "%s[%zu].ops is required", field, i);
	if (!json_object_is_type(ops, json_type_array))
		return err_set(e, ERR_INVALID, "%s[%zu].ops must be an array", field, i);
	n = json_object_array_length(ops);
	if (n == 0)
		return err_set(e, ERR_INVALID, "%s[%zu].ops must not be empty", field, i);
	/* Stops at the first unknown or repeated op: at most three elements are looked at. */
	for (size_t j = 0; j < n; j++) {
		json_object *v = json_object_array_get_idx(ops, j);
		unsigned op = 0;
		size_t k = 0;

		if (json_object_is_type(v, json_type_string)) {
			const char *s = json_object_get_string(v);
			size_t len = (size_t)json_object_get_string_len(v);

			for (k = 0; k < sizeof(ops_known) / sizeof(ops_known[0]); k++)
				if (len == strlen(ops_known[k].name) &&
				    memcmp(s, ops_known[k].name, len) == 0) {
					op = ops_known[k].op;
					break;
				}
		}
		if (!op)
			return err_set(e, ERR_INVALID,
				       "%s[%zu].ops[%zu] must be 'no-push' or 'no-force-push'",
				       field, i, j);
		if (*out & op)
			return err_set(e, ERR_INVALID, "%s[%zu].ops[%zu] repeats '%s'", field, i,
				       j, ops_known[k].name);
		*out |= op;
	}
	return 0;
}

static int parse_one(json_object *o, const char *field, size_t i, struct policy *out,
		     struct err *e)
{
	json_object *pat = NULL, *ops = NULL;
	const char *s;
	size_t len;

	if (!json_object_is_type(o, json_type_object))
		return err_set(e, ERR_INVALID, "%s[%zu] must be an object", field, i);
	json_object_object_get_ex(o, "pattern", &pat);
	json_object_object_get_ex(o, "ops", &ops);
	if (!pat)
		return err_set(e, ERR_INVALID, "%s[%zu].pattern is required", field, i);
	if (!json_object_is_type(pat, json_type_string))
		return err_set(e, ERR_INVALID, "%s[%zu].pattern must be a string", field, i);
	s = json_object_get_string(pat);
	len = (size_t)json_object_get_string_len(pat);
	if (len < 1 || len > POLICY_PATTERN_MAX)
		return err_set(e, ERR_INVALID, "%s[%zu].pattern must be 1 to %d characters long",
			       field, i, POLICY_PATTERN_MAX);
	/* NUL included: the pattern is matched as a C string and quoted on one line. */
	for (size_t k = 0; k < len; k++)
		if ((unsigned char)s[k] < 0x20 || s[k] == 0x7f)
			return err_set(e, ERR_INVALID,
				       "%s[%zu].pattern must not contain control characters",
				       field, i);
	memcpy(out->pattern, s, len);
	out->pattern[len] = 0;
	return parse_ops(ops, field, i, &out->ops, e);
}

int policy_parse(json_object *arr, const char *field, struct policy_list *out,
		 struct err *e)
{
	size_t n;
	int rc;

	out->n = 0;
	if (!field)
		field = "ref_policies";
	if (!arr)
		return 0;
	if (!json_object_is_type(arr, json_type_array))
		return err_set(e, ERR_INVALID, "%s must be an array", field);
	n = json_object_array_length(arr);
	if (n > POLICY_MAX)
		return err_set(e, ERR_INVALID, "%s must have at most %d policies", field,
			       POLICY_MAX);
	for (size_t i = 0; i < n; i++) {
		rc = parse_one(json_object_array_get_idx(arr, i), field, i, &out->v[i], e);
		if (rc)
			return rc;
	}
	out->n = n;
	return 0;
}

int policy_parse_json(const char *text, struct policy_list *out, struct err *e)
{
	struct json_tokener *tok;
	json_object *arr;
	enum json_tokener_error jerr;
	size_t len = text ? strnlen(text, POLICY_JSON_MAX + 1) : 0, end;
	int rc;

	out->n = 0;
	if (len > POLICY_JSON_MAX)
		return err_set(e, ERR_TOOBIG, "ref_policies must be at most %d bytes of JSON",
			       POLICY_JSON_MAX);
	if (len == 0)
		return 0;
	/* An array of objects of arrays: depth 3; a little room, never unbounded. */
	tok = json_tokener_new_ex(8);
	if (!tok)
		return err_set(e, ERR_NOMEM, "out of memory parsing ref_policies");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* The terminating NUL (text[len], as strnlen stopped there) ends a bare literal such
	 * as "null", which the strict tokener would otherwise wait to see delimited. */
	arr = json_tokener_parse_ex(tok, text, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	if (!arr && jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	end = json_tokener_get_parse_end(tok);
	while (end < len && strchr(" \t\r\n", text[end]))
		end++;
	if (jerr == json_tokener_success && end != len)
		rc = err_set(e, ERR_INVALID, "ref_policies is not valid JSON: trailing characters");
	else if (jerr != json_tokener_success)
		rc = err_set(e, ERR_INVALID, "ref_policies is not valid JSON: %s",
			     json_tokener_error_desc(jerr));
	else
		rc = policy_parse(arr, "ref_policies", out, e);
	json_object_put(arr);
	json_tokener_free(tok);
	return rc;
}

unsigned policy_decide(const struct policy_list *list, const char *refname,
		       const char **pattern)
{
	if (pattern)
		*pattern = NULL;
	if (list->n == 0)
		return 0;
	if (strnlen(refname, POLICY_REFNAME_MAX + 1) > POLICY_REFNAME_MAX)
		return POLICY_NO_PUSH;
	for (size_t i = 0; i < list->n && i < POLICY_MAX; i++)
		if (policy_glob_match(list->v[i].pattern, refname)) {
			if (pattern)
				*pattern = list->v[i].pattern;
			return list->v[i].ops;
		}
	return 0;
}

/* 1 when pattern matches every name that starts with base: a prefix of base, then only
 * stars (a star matches any run, slashes included). */
static int covers(const char *pattern, const char *base)
{
	size_t i;

	for (i = 0; pattern[i] && pattern[i] != '*'; i++)
		if (base[i] != pattern[i])
			return 0;
	return pattern[i] == '*' && pattern[i + strspn(pattern + i, "*")] == 0;
}

int policy_may_push_some(const struct policy_list *list, const char *base)
{
	for (size_t i = 0; i < list->n && i < POLICY_MAX; i++) {
		if (!(list->v[i].ops & POLICY_NO_PUSH))
			return 1;
		if (covers(list->v[i].pattern, base))
			return 0;
	}
	return 1;
}

int policy_refused(unsigned ops, const char *pattern, const char *refname,
		   enum policy_update update, char *reason, size_t reasonsz)
{
	const char *why;

	if (reasonsz > 0)
		reason[0] = 0;
	if (ops & POLICY_NO_PUSH)
		why = "no-push";
	else if ((ops & POLICY_NO_FORCE_PUSH) && update == POLICY_DELETE)
		why = "no-force-push: deletion";
	else if ((ops & POLICY_NO_FORCE_PUSH) && update == POLICY_NON_FAST_FORWARD)
		why = "no-force-push: not a fast-forward";
	else
		return 0;
	if (reasonsz == 0)
		return 1;
	if (!pattern)
		snprintf(reason, reasonsz, "%.64s...: push refused: ref name is longer than %d bytes",
			 refname, POLICY_REFNAME_MAX);
	else
		snprintf(reason, reasonsz, "%s: push refused by ref policy '%s' (%s)", refname,
			 pattern, why);
	return 1;
}

int policy_check(const struct policy_list *list, const char *refname,
		 enum policy_update update, char *reason, size_t reasonsz)
{
	const char *pattern;
	unsigned ops = policy_decide(list, refname, &pattern);

	return policy_refused(ops, pattern, refname, update, reason, reasonsz);
}

/* fast_forward answered once: -1 until asked. */
static int is_ff(const struct policy_push *p, int *ff)
{
	if (*ff < 0)
		*ff = p->fast_forward ? p->fast_forward(p->arg) != 0 : 0;
	return *ff;
}

int policy_push_refused(const struct policy_push *p, char *reason, size_t reasonsz)
{
	const char *pattern = NULL;
	unsigned ops = policy_decide(p->policies, p->ref, &pattern);
	int ff = -1;  /* unknown until needed: the answer may cost a walk of the history */
	const char *why;

	if (reasonsz > 0)
		reason[0] = 0;
	if (ops) {
		enum policy_update up = POLICY_CREATE;
		if (p->deleting)
			up = POLICY_DELETE;
		else if (!p->creating && !(ops & POLICY_NO_PUSH))
			up = is_ff(p, &ff) ? POLICY_FAST_FORWARD : POLICY_NON_FAST_FORWARD;
		else if (!p->creating)
			up = POLICY_NON_FAST_FORWARD; /* no-push refuses either way */
		if (policy_refused(ops, pattern, p->ref, up, reason, reasonsz))
			return 1;
	}
	if (!p->default_ref[0] || strcmp(p->ref, p->default_ref))
		return 0;
	if (p->agent)
		why = "agents may not update the default branch";
	else if (p->deleting)
		why = "the default branch can't be deleted";
	else if (!p->creating && !is_ff(p, &ff))
		why = "the default branch takes no force-push (not a fast-forward)";
	else
		return 0;
	if (reasonsz > 0)
		snprintf(reason, reasonsz, "%s: %s", p->ref, why);
	return 1;
}
