/* mcp.h: the Model Context Protocol's JSON-RPC layer and its five sandbox tools, without
 * any I/O, so that all of it can be unit-tested and fuzzed. app/api/mcp.c serves it on
 * POST /mcp (streamable HTTP, stateless: no session is kept, every POST stands alone). */
#ifndef SANDBOXD_MCP_H
#define SANDBOXD_MCP_H
#include <stddef.h>
#include <json-c/json.h>
#include "sandboxd/common/err.h"

/* JSON-RPC 2.0's error codes. */
#define MCP_PARSE_ERROR -32700
#define MCP_INVALID_REQUEST -32600
#define MCP_METHOD_NOT_FOUND -32601
#define MCP_INVALID_PARAMS -32602
#define MCP_INTERNAL_ERROR -32603

#define MCP_LATEST_VERSION "2025-11-25"
/* The version assumed when a client sends no MCP-Protocol-Version header (the transport
 * specification says so, for clients older than the header). */
#define MCP_DEFAULT_VERSION "2025-03-26"
#define MCP_BATCH_MAX 32
/* The largest tool result (as JSON text); it is sent twice (text and structuredContent). */
#define MCP_RESULT_MAX (24 << 20)

/* 1 when v is a protocol version we speak. */
int mcp_version_supported(const char *v) __attribute__((warn_unused_result));
/* The version to answer an initialize asking for v: v itself when supported, else ours. */
const char *mcp_version_pick(const char *v);
/* 1 when version v allows JSON-RPC batches (only 2025-03-26 did). */
int mcp_version_batches(const char *v) __attribute__((warn_unused_result));

enum mcp_kind { MCP_REQUEST, MCP_NOTIFICATION, MCP_RESPONSE, MCP_INVALID };

/* One message of a POST body. Pointers borrow from the parsed message. */
struct mcp_msg {
	enum mcp_kind kind;
	json_object *id;      /* requests: a string or an integer; else NULL */
	const char *method;
	json_object *params;  /* an object, or NULL when absent */
	int code;             /* MCP_INVALID: the error code to answer with */
	const char *error;    /* MCP_INVALID: why (a static string) */
};

/* Classifies m. Never fails: what is not a valid message is MCP_INVALID with code and
 * error set (and id, when the message had a usable one). */
void mcp_classify(json_object *m, struct mcp_msg *out);
/* {"jsonrpc": "2.0", "id": id, "result": result}; takes result. */
json_object *mcp_result(json_object *id, json_object *result);
/* {"jsonrpc": "2.0", "id": id or null, "error": {code, message}}. */
json_object *mcp_error(json_object *id, int code, const char *message);
/* The initialize result for the negotiated version. */
json_object *mcp_initialize_result(const char *version);

/* The tools. */
enum mcp_tool_id { TOOL_CREATE, TOOL_EXEC, TOOL_READ, TOOL_WRITE, TOOL_CLOSE, TOOL_PREVIEW, TOOL_LIST_FILES,
		   TOOL_LIST };

struct mcp_tool {
	const char *name;
	enum mcp_tool_id id;
	/* The REST route that runs the call: method, and the path after
	 * /api/v3/repos/{owner}/{repo}/diffinery/sandboxes[/{sandbox_id}]. */
	const char *method;
	const char *tail;
	const struct mcp_arg *args;
	const char *schema;       /* the tools/list entry, as JSON text */
	/* A route of no repository (sandbox_list's /api/v3/user/sandboxes): its whole path,
	 * and tail unused; NULL for the others. */
	const char *route;
};

/* What a tool call becomes: the REST route's path parameters and JSON body. */
struct mcp_call {
	const char *owner, *repo, *sandbox_id; /* borrowed from the arguments */
	json_object *body;                     /* owned by the caller */
	/* The query string of a GET (sandbox_list's state, page, per_page), as a REST client
	 * would send it; "" for the others. */
	char query[128];
};

const struct mcp_tool *mcp_tool_find(const char *name);
/* {"tools": [...]}, or NULL when out of memory. */
json_object *mcp_tools_list(void);
/* Checks the arguments of a call against the tool's schema and translates them into the
 * REST request. 0, ERR_INVALID naming the argument that is wrong, or ERR_NOMEM. */
int mcp_tool_request(const struct mcp_tool *t, json_object *args, struct mcp_call *c,
		     struct err *e) __attribute__((warn_unused_result));
/* The tool result for the REST answer (status and body) of the call: text content and
 * structuredContent, or isError with the REST error text (error, when status >= 400), or
 * isError when the result is larger than MCP_RESULT_MAX. NULL when out of memory. */
json_object *mcp_tool_result(const struct mcp_tool *t, int status, const char *body, size_t len,
			     const char *error);
/* An isError result with text. */
json_object *mcp_tool_error(const char *text);
/* 1 when origin (an Origin header's value) is one of allowed, a comma-separated list of
 * origins written as browsers send them (scheme://host[:port], no path), compared without
 * regard to ASCII case; 0 otherwise (an empty origin or list allows nothing). The transport
 * says servers must check Origin against DNS rebinding: a page of another site that gets
 * a browser to post to /mcp sends its own origin. */
int mcp_origin_allowed(const char *origin, const char *allowed) __attribute__((warn_unused_result));
/* 1 when s[0..n) is valid UTF-8 without NUL bytes (what read_file returns as text). */
int mcp_text_ok(const unsigned char *s, size_t n) __attribute__((warn_unused_result));

#endif
