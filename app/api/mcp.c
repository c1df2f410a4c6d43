/* api_mcp.c: POST /mcp, MCP's streamable HTTP transport in its stateless form. Every POST
 * carries one JSON-RPC message (or, in protocol 2025-03-26, a batch) and is answered with
 * one application/json body; no session is kept and no server stream is opened (GET /mcp
 * is 405). Each message is its own transaction with its own audit row (via 'mcp'); a tool
 * call runs the REST route of the same action, so both doors behave alike. */
#include <stdio.h>
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/api/dispatch.h"
#include "sandboxd/holder/handover.h"
#include "sandboxd/lib/json.h"
#include "sandboxd/lib/log.h"
#include "sandboxd/proto/mcp.h"
#include "sandboxd/common/banned.h"

/* The HTTP answer when the body as a whole is refused: a JSON-RPC error without an id.
 * MCP's answers are JSON-RPC documents, errors too, so MCP writes them itself; the
 * handler then returns 0 (it answered as the protocol says). */
static void refuse(struct req *r, int status, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void refuse(struct req *r, int status, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	http_json(r, status, mcp_error(NULL, code, msg));
	r->error = pool_strdup(r->pool, msg);
}

/* A JSON-RPC error answer to one message; status is what its audit row records. */
static json_object *fail(struct req *r, json_object *id, int status, int code, const char *msg)
{
	r->status = status;
	r->error = pool_strdup(r->pool, msg);
	return mcp_error(id, code, msg);
}

/* Clears what the previous message left in the request. */
static void next_message(struct req *r)
{
	request_clear_answer(r);
	buf_clear(&r->out);
	r->audit_details = json_object_new_object();
}

/* s percent-encoded as one path segment (all but RFC 3986's unreserved bytes), so that the
 * router decodes it back to s: the tool's arguments reach the route as a REST client's
 * path would bring them. */
static const char *segment(struct pool *pool, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), o = 0;
	char *out = pool_alloc(pool, 3 * n + 1);

	for (size_t i = 0; out && i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (out)
		out[o] = 0;
	return out;
}

/* The REST route of a call, through the router as any request: its path parameters are
 * the router's, decoded and bounded as for REST. */
static int route_call(struct req *r, const struct mcp_tool *t, const struct mcp_call *c,
		      struct err *e)
{
	const char *owner, *repo, *id, *path;

	/* A route of its own names no repository: nothing of the arguments goes in its path. */
	if (t->route) {
		if (router_match(r->routes, r->nroutes, t->method, t->route, &r->match))
			return err_set(e, ERR_FAIL, "%s matches no route", t->route);
		return 0;
	}
	owner = segment(r->pool, c->owner);
	repo = segment(r->pool, c->repo);
	id = c->sandbox_id ? segment(r->pool, c->sandbox_id) : NULL;
	if (!owner || !repo || (c->sandbox_id && !id))
		return err_set(e, ERR_NOMEM, "out of memory");
	path = pool_printf(r->pool, "/api/v3/repos/%s/%s" API_SANDBOXES "%s%s%s", owner, repo,
			   id ? "/" : "", id ? id : "", t->tail);
	if (!path)
		return err_set(e, ERR_NOMEM, "out of memory");
	/* A name holding '/' or NUL matches no route: it names nothing. */
	if (router_match(r->routes, r->nroutes, t->method, path, &r->match))
		return err_set(e, ERR_NOTFOUND, "%s not found",
			       c->sandbox_id ? "repository or sandbox" : "repository");
	return 0;
}

static json_object *tool_call(struct req *r, const struct mcp_msg *m, int in_batch,
			      const char *tail, const char **action)
{
	json_object *v, *args = NULL;
	const struct mcp_tool *t;
	struct mcp_call c;
	struct err e = { .msg = "" };
	char msg[512];

	if (!m->params || !json_object_object_get_ex(m->params, "name", &v) ||
	    !json_object_is_type(v, json_type_string))
		return fail(r, m->id, 400, MCP_INVALID_PARAMS, "params.name must be a tool's name");
	if (!(t = mcp_tool_find(json_object_get_string(v)))) {
		snprintf(msg, sizeof(msg), "unknown tool: %.64s", json_object_get_string(v));
		return fail(r, m->id, 400, MCP_INVALID_PARAMS, msg);
	}
	json_add_str(r->audit_details, "tool", t->name);
	if (json_object_object_get_ex(m->params, "arguments", &args) &&
	    !json_object_is_type(args, json_type_null) && !json_object_is_type(args, json_type_object))
		return fail(r, m->id, 400, MCP_INVALID_PARAMS, "params.arguments must be an object");
	json_object *none = args && json_object_is_type(args, json_type_object)
				    ? NULL : json_object_new_object();
	int rc = mcp_tool_request(t, none ? none : args, &c, &e);
	json_object_put(none);
	if (!rc && (rc = route_call(r, t, &c, &e)))
		json_object_put(c.body);
	if (r->match.route)
		*action = r->match.route->action;
	/* Wrong arguments are the tool's error, not the protocol's: a model reads them. */
	if (rc) {
		r->status = err_status(rc);
		r->error = pool_strdup(r->pool, e.msg);
		return mcp_result(m->id, mcp_tool_error(e.msg));
	}
	r->json = c.body;
	/* A lone call's answer, or a batch's last one, may be the holder's (a running
	 * sandbox_exec costs no worker; the holder writes a batch's others before it). A lone
	 * call may be another host's: the whole request is relayed when the sandbox is there. */
	if ((!in_batch || tail) && m->id) {
		r->rpc_id = json_object_to_json_string_ext(m->id, JSON_C_TO_STRING_PLAIN);
		r->batch = tail;
	}
	r->no_relay = in_batch;
	/* The call's own query (sandbox_list's), in place of POST /mcp's, for this call only. */
	const char *query = r->query;
	r->query = c.query;
	request_call(r, r->match.route);
	r->query = query;
	if (r->handed || r->relay_out)
		return NULL;
	return mcp_result(m->id, mcp_tool_result(t, r->status, r->out.data, r->out.len, r->error));
}

/* Answers one request; *action is its audit verb. */
static json_object *serve_request(struct req *r, const struct mcp_msg *m, int in_batch,
				  const char *tail, const char **action)
{
	json_object *v;
	char msg[160];

	json_add_str(r->audit_details, "rpc_method", m->method);
	if (strcmp(m->method, "tools/call") == 0) {
		*action = "mcp.tools_call";
		return tool_call(r, m, in_batch, tail, action);
	}
	r->status = 200;
	if (strcmp(m->method, "initialize") == 0) {
		*action = "mcp.initialize";
		if (in_batch)
			return fail(r, m->id, 400, MCP_INVALID_REQUEST,
				    "initialize may not be part of a batch");
		if (!m->params || !json_object_object_get_ex(m->params, "protocolVersion", &v) ||
		    !json_object_is_type(v, json_type_string))
			return fail(r, m->id, 400, MCP_INVALID_PARAMS,
				    "params.protocolVersion must be a string");
		const char *version = mcp_version_pick(json_object_get_string(v));
		json_add_str(r->audit_details, "protocol_version", version);
		return mcp_result(m->id, mcp_initialize_result(version));
	}
	if (strcmp(m->method, "ping") == 0) {
		*action = "mcp.ping";
		return mcp_result(m->id, json_object_new_object());
	}
	if (strcmp(m->method, "tools/list") == 0) {
		*action = "mcp.tools_list";
		return mcp_result(m->id, mcp_tools_list());
	}
	*action = "mcp.unknown";
	snprintf(msg, sizeof(msg), "method not found: %.64s", m->method);
	return fail(r, m->id, 404, MCP_METHOD_NOT_FOUND, msg);
}

/* Serves one message in its own transaction (the one open on entry) with its audit row,
 * and opens the next. The answer, or NULL for notifications and responses. *rows counts
 * the audit rows written. tail: the message is the last of a batch with an answer due,
 * and tail the others' answers so far (JSON values joined by commas); NULL otherwise. */
static json_object *serve(struct req *r, json_object *m, int in_batch, const char *tail,
			  int *rows)
{
	struct mcp_msg msg;
	struct err e = { .msg = "" };
	const char *action = "mcp.invalid";
	json_object *answer;
	int status;

	next_message(r);
	mcp_classify(m, &msg);
	if (msg.kind == MCP_NOTIFICATION || msg.kind == MCP_RESPONSE)
		return NULL; /* nothing to do: we track no client state */
	if (msg.kind == MCP_INVALID)
		answer = fail(r, msg.id, 400, msg.code, msg.error);
	else
		answer = serve_request(r, &msg, in_batch, tail, &action);
	/* Handed to the holder, which answers and writes the row; the dispatcher commits. Or
	 * relayed to another host, which does both. */
	if (r->handed || r->relay_out)
		return NULL;
	if (!answer)
		answer = fail(r, msg.id, 500, MCP_INTERNAL_ERROR, "internal error");
	status = r->status;
	request_finish(r, action);
	(*rows)++;
	/* The audit row could not be written: the work was rolled back, so was the answer. */
	if (r->status != status) {
		json_object_put(answer);
		answer = mcp_error(msg.id, MCP_INTERNAL_ERROR, "database unavailable");
	}
	if (db_begin(r->db, &e))
		log_warn("mcp: next transaction: %s", e.msg);
	return answer;
}

/* Parses the body: one message (an object) or a batch (an array). */
static int parse(struct req *r, json_object **out, struct err *e)
{
	size_t i = 0;

	while (i < r->body_len && strchr(" \t\r\n", r->body[i]))
		i++;
	if (i == r->body_len)
		return err_set(e, ERR_INVALID, "the body is empty");
	if (r->body[i] == '{')
		return json_parse_object(r->body, r->body_len, out, e);
	/* Anything else is wrapped in an object, for the same strict parser. */
	char *wrapped = pool_alloc(r->pool, r->body_len + 8);
	json_object *o = NULL;
	int rc;
	if (!wrapped)
		return err_set(e, ERR_NOMEM, "out of memory");
	memcpy(wrapped, "{\"m\":", 5);
	memcpy(wrapped + 5, r->body, r->body_len);
	memcpy(wrapped + 5 + r->body_len, "\n}", 3);
	if ((rc = json_parse_object(wrapped, r->body_len + 7, &o, e)))
		return rc;
	*out = json_object_get(json_object_object_get(o, "m"));
	json_object_put(o);
	return 0;
}

#define BIG_BODY_TEXT "request body is larger than %zu bytes (only sandbox_write_file may be larger)"

/* 1 when m is a tools/call of sandbox_write_file (the one message that carries a file). */
static int is_write_call(json_object *m)
{
	json_object *v, *params;

	return json_object_is_type(m, json_type_object) &&
	       json_object_object_get_ex(m, "method", &v) &&
	       json_object_is_type(v, json_type_string) &&
	       strcmp(json_object_get_string(v), "tools/call") == 0 &&
	       json_object_object_get_ex(m, "params", &params) &&
	       json_object_object_get_ex(params, "name", &v) &&
	       json_object_is_type(v, json_type_string) &&
	       strcmp(json_object_get_string(v), "sandbox_write_file") == 0;
}

/* The index of the batch's last request (a message that is answered), n when none. */
static size_t last_request(json_object *body, size_t n)
{
	struct mcp_msg m;

	for (size_t i = n; i-- > 0;) {
		mcp_classify(json_object_array_get_idx(body, i), &m);
		if (m.kind != MCP_NOTIFICATION && m.kind != MCP_RESPONSE)
			return i;
	}
	return n;
}

/* The answers so far, as JSON values joined by commas (the array without its brackets),
 * in the request's arena; NULL when they are too long to hand over (the worker then keeps
 * the last call). */
static const char *others(struct req *r, json_object *answers)
{
	const char *t = json_object_to_json_string_ext(answers, JSON_C_TO_STRING_PLAIN);
	size_t n = t ? strlen(t) : 0;

	if (n < 2 || n - 2 > HANDOVER_BATCH_MAX)
		return NULL;
	return pool_strndup(r->pool, t + 1, n - 2);
}

/* A batch: each message served in turn; the answers, or NULL when none is due. NULL with
 * the HTTP answer written when the batch as a whole is refused. */
static json_object *serve_batch(struct req *r, json_object *body, const char *version,
				int *rows, int *refused)
{
	const char *v = version ? version : MCP_DEFAULT_VERSION;
	size_t n = json_object_array_length(body);
	json_object *answers;

	*refused = 1;
	if (!mcp_version_batches(v)) {
		refuse(r, 400, MCP_INVALID_REQUEST, "protocol version %s does not allow batches", v);
		return NULL;
	}
	if (n == 0) {
		refuse(r, 400, MCP_INVALID_REQUEST, "the batch is empty");
		return NULL;
	}
	if (n > MCP_BATCH_MAX) {
		refuse(r, 400, MCP_INVALID_REQUEST, "a batch may hold at most %d messages",
		       MCP_BATCH_MAX);
		return NULL;
	}
	*refused = 0;
	answers = json_object_new_array();
	size_t last = last_request(body, n);
	for (size_t i = 0; answers && i < n && !r->handed; i++) {
		const char *tail = i == last ? others(r, answers) : NULL;
		json_object *a = serve(r, json_object_array_get_idx(body, i), 1, tail, rows);
		if (a && json_object_array_add(answers, a))
			json_object_put(a);
	}
	/* Its last call handed to the holder, which answers the whole batch: what came after
	 * it needs no answer (notifications and responses), and nothing is done for them. */
	if (r->handed) {
		json_object_put(answers);
		return NULL;
	}
	if (answers && json_object_array_length(answers) == 0) {
		json_object_put(answers);
		answers = NULL;
	}
	return answers;
}

/* The body read and parsed into *body: 0, with *refused set when the body was refused (the
 * answer written), or an error code. Only a file write
 * may be big, as on REST (ROUTE_BIG_BODY): a body over the ordinary limit must be one
 * message (a batch of small ones would parse into millions of objects), and once parsed, a
 * sandbox_write_file call. */
static int read_messages(struct req *r, json_object **body, int *refused, struct err *e)
{
	size_t n;
	int rc, big;

	*refused = 1;
	if ((rc = http_read_body(r, r->cfg->file_limit / 3 * 4 + 65536, e))) {
		refuse(r, rc == ERR_TOOBIG ? 413 : 400,
		       rc == ERR_TOOBIG ? MCP_INVALID_REQUEST : MCP_PARSE_ERROR, "%s", e->msg);
		return 0;
	}
	big = r->body_len > r->cfg->body_limit;
	for (n = 0; big && n < r->body_len && strchr(" \t\r\n", r->body[n]); n++)
		;
	if (big && (n == r->body_len || r->body[n] != '{')) {
		refuse(r, 413, MCP_INVALID_REQUEST, BIG_BODY_TEXT, r->cfg->body_limit);
		return 0;
	}
	if ((rc = parse(r, body, e)) && rc != ERR_INVALID)
		return rc;
	if (rc) {
		refuse(r, 400, MCP_PARSE_ERROR, "parse error: %s", e->msg);
		return 0;
	}
	if (big && !is_write_call(*body)) {
		json_object_put(*body);
		refuse(r, 413, MCP_INVALID_REQUEST, BIG_BODY_TEXT, r->cfg->body_limit);
		return 0;
	}
	*refused = 0;
	return 0;
}

int api_mcp(struct req *r, struct err *e)
{
	const char *version = http_param(r, "HTTP_MCP_PROTOCOL_VERSION");
	const char *origin = http_param(r, "HTTP_ORIGIN");
	json_object *body = NULL, *answers = NULL;
	struct mcp_msg first;
	int rc, rows = 0, batch, refused = 0;

	/* Present and not ours: a page of another site (DNS rebinding, MCP's transport §
	 * Security Warning). Absent: a client that is not a browser. */
	if (origin && !mcp_origin_allowed(origin, r->cfg->mcp_origins)) {
		refuse(r, 403, MCP_INVALID_REQUEST,
		       "Origin %.200s is not allowed (SANDBOXD_MCP_ORIGINS)", origin);
		return 0;
	}
	if ((rc = read_messages(r, &body, &refused, e)) || refused)
		return rc;
	/* The header names the version agreed at initialize; an initialize has none yet. */
	mcp_classify(body, &first);
	if (version && !mcp_version_supported(version) &&
	    !(first.kind == MCP_REQUEST && strcmp(first.method, "initialize") == 0)) {
		json_object_put(body);
		refuse(r, 400, MCP_INVALID_REQUEST,
		       "unsupported MCP-Protocol-Version: %.32s (this server speaks %s, "
		       "2025-06-18 and 2025-03-26)", version, MCP_LATEST_VERSION);
		return 0;
	}
	batch = json_object_is_type(body, json_type_array);
	answers = batch ? serve_batch(r, body, version, &rows, &refused)
			: serve(r, body, 0, NULL, &rows);
	json_object_put(body);
	if (refused || r->handed || r->relay_out)
		return 0;
	/* The HTTP answer; the rows of the messages stand for the request. */
	next_message(r);
	r->audited = rows > 0;
	/* A lone message that is not JSON-RPC is a bad request at the HTTP level too. */
	if (answers)
		http_json(r, !batch && first.kind == MCP_INVALID ? 400 : 200, answers);
	else
		http_empty(r, 202);
	return 0;
}
