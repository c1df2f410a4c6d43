/* api_admin_page.c: GET /admin, the operators' page (SPEC §8): the engine, sandboxes by
 * state, the warm pool, recent denials and failures. Server-rendered HTML that needs no
 * script; every value from the database goes through html_text (html.h). Each section
 * names the view or query a DBA runs for more (sql/README.md). A browser signs in with
 * HTTP Basic; the dispatcher keeps its replayed credentials off every state-changing route
 * (check_forgeable in dispatch.c). */
#include <string.h>
#include "sandboxd/api/handlers.h"
#include "sandboxd/forge/auth.h"
#include "sandboxd/engine/boxuser.h"
#include "sandboxd/engine/box.h"
#include "sandboxd/lib/html.h"
#include "sandboxd/common/banned.h"

/* Read-only: a site admin's token of either scope, as for /metrics. */
static int allowed(struct req *r, struct err *e)
{
	const struct caller *c = &r->caller;

	r->basic_realm = 1;   /* a 401 asks the browser for a user name and password */
	return auth_site_admin_read(c, e);
}

/* One section: a heading, a table of what sql answers (each cell escaped), and where a
 * DBA reads more. Bounded by each query's LIMIT. */
struct section {
	const char *id, *title, *columns, *sql, *more;
};

static const struct section sections[] = {
	{ "states", "Sandboxes by state", "state|live, or made in the last day",
	  "SELECT s, (SELECT count(*) FROM sandboxes WHERE state = s AND"
	  "           (s IN ('starting', 'ready') OR created_at > now() - interval '1 day'))"
	  "  FROM unnest(ARRAY['starting', 'ready', 'stopped', 'closed', 'failed']) s",
	  "SELECT state, count(*) FROM sandboxes GROUP BY state" },
	{ "sandboxes", "Running sandboxes", "sandbox|state|creator|repository|age|idle deadline (UTC)",
	  "SELECT s.id, s.state, a.login || coalesce(' (' || a.name || ')', ''),"
	  "       o.login || '/' || r.name, date_trunc('second', now() - s.created_at)::text,"
	  "       to_char(s.idle_stop_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
	  "  FROM sandboxes s JOIN repositories r ON r.id = s.repository_id"
	  "  JOIN accounts o ON o.id = r.owner_id JOIN accounts a ON a.id = s.account_id"
	  " WHERE s.state IN ('starting', 'ready') ORDER BY s.created_at DESC LIMIT 200",
	  "SELECT * FROM audit_running_sandboxes" },
	{ "pool", "Warm pool", "image|state|containers|oldest (UTC)",
	  "SELECT image, state, count(*),"
	  "       to_char(min(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
	  "  FROM warm_containers WHERE state IN ('starting', 'ready')"
	  " GROUP BY image, state ORDER BY image, state",
	  "SELECT * FROM warm_containers WHERE state IN ('starting', 'ready')" },
	{ "denials", "Recent denials and failures (last day, newest 50)",
	  "at (UTC)|status|action|account|repository|request|why",
	  "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), status, action,"
	  "       coalesce(login, ''), coalesce(repository, ''),"
	  "       coalesce(details->>'method', '') || ' ' || coalesce(details->>'path', ''),"
	  "       coalesce(details->>'reason', details->>'error', '')"
	  "  FROM audit_log WHERE at > now() - interval '1 day' AND status >= 400"
	  " ORDER BY at DESC LIMIT 50",
	  "SELECT * FROM audit_denied ORDER BY at DESC; failures: SELECT * FROM audit_log"
	  " WHERE outcome IN ('failed', 'error') ORDER BY at DESC" },
};

/* "a|b|c" as <th> cells. */
static int head_cells(struct buf *b, const char *columns)
{
	int rc = 0;

	while (!rc && *columns) {
		size_t n = strcspn(columns, "|");
		rc = buf_printf(b, "<th>%.*s</th>", (int)n, columns);
		columns += n + (columns[n] == '|');
	}
	return rc;
}

/* A cell's text, escaped. */
static int cell(struct buf *b, const char *text)
{
	int rc = buf_puts(b, "<td>");

	if (!rc)
		rc = html_text(b, text ? text : "");
	return rc ? rc : buf_puts(b, "</td>");
}

/* A table's heading and opening row: "a|b|c" as <th> cells. */
static int table_open(struct buf *b, const char *id, const char *title, const char *columns)
{
	int rc = buf_printf(b, "<h2 id=\"%s\">%s</h2>\n<table id=\"%s-table\"><tr>", id, title,
			    id);

	if (!rc)
		rc = head_cells(b, columns);
	return rc ? rc : buf_puts(b, "</tr>\n");
}

/* The table's end, and the query a DBA runs for more. */
static int table_close(struct buf *b, const char *more)
{
	int rc = buf_puts(b, "</table>\n<p class=\"more\">More, in psql: <code>");

	if (!rc)
		rc = html_text(b, more);
	return rc ? rc : buf_puts(b, "</code></p>\n");
}

static int section(struct req *r, const struct section *s, struct err *e)
{
	struct buf *b = &r->out;
	int code = 0, rc;
	PGresult *res = db_exec(r->db, e, &code, s->sql, 0);

	if (!res)
		return code;
	rc = table_open(b, s->id, s->title, s->columns);
	for (int i = 0; !rc && i < PQntuples(res); i++) {
		rc = buf_puts(b, "<tr>");
		for (int j = 0; !rc && j < PQnfields(res); j++)
			rc = cell(b, db_val(res, i, j));
		if (!rc)
			rc = buf_puts(b, "</tr>\n");
	}
	if (!rc && PQntuples(res) == 0)
		rc = buf_printf(b, "<tr><td colspan=\"%d\">none</td></tr>\n", PQnfields(res));
	PQclear(res);
	if (!rc)
		rc = table_close(b, s->more);
	return rc ? err_set(e, rc, "the page does not fit") : 0;
}

/* The engines (docker_engines, engine_room): each one's name and URL, state, whether it
 * answers (this host's own is asked now; the others as the reaper last found them), who
 * root inside is on the own one, and its load against its maximum. */
static int engines(struct req *r, struct err *e)
{
	struct err dk = { .msg = "" }, bu_err = { .msg = "" };
	struct buf *b = &r->out;
	struct boxuser bu;
	int code = 0, own_up = box_ping(r->cfg->docker_host, &dk) == 0, rc;
	const char *mode = own_up && !boxuser_get(r->cfg, &bu, &bu_err) ? bu.mode : "unknown";
	PGresult *res = db_exec(r->db, e, &code,
				"SELECT name, url, state, healthy, coalesce(last_error, ''),"
				"       coalesce(rfc3339(down_since), ''), sandboxes, pooled,"
				"       max_sandboxes"
				"  FROM engine_room ORDER BY name <> $1, name LIMIT 100", 1,
				r->cfg->engine_name);

	if (!res)
		return code;
	rc = table_open(b, "engines", "Engines",
			"engine|URL|state|health|sandbox user|sandboxes|warm|max");
	for (int i = 0; !rc && i < PQntuples(res); i++) {
		int own = strcmp(db_val(res, i, 0), r->cfg->engine_name) == 0;
		const char *health = own ? (own_up ? "answering" : dk.msg)
				     : db_bool(res, i, 3) ? "answering"
				     : pool_printf(r->pool, "down since %s: %s", db_val(res, i, 5),
						   db_val(res, i, 4));
		rc = buf_puts(b, "<tr>");
		for (int col = 0; !rc && col < 3; col++)
			rc = cell(b, db_val(res, i, col));
		if (!rc)
			rc = cell(b, health);
		if (!rc)
			rc = cell(b, own ? mode : "");
		for (int col = 6; !rc && col < 9; col++)
			rc = cell(b, db_val(res, i, col));
		if (!rc)
			rc = buf_puts(b, "</tr>\n");
	}
	if (!rc)
		rc = table_close(b, "SELECT * FROM engine_room;");
	PQclear(res);
	return rc ? err_set(e, rc, "the page does not fit") : 0;
}

int api_admin_page(struct req *r, struct err *e)
{
	int rc = allowed(r, e);

	if (rc)
		return rc;
	buf_clear(&r->out);
	rc = buf_puts(&r->out,
		      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<title>sandboxd: operators</title><style>"
		      "body{font:14px system-ui,sans-serif;margin:1.5em}"
		      "table{border-collapse:collapse;margin-bottom:.4em}"
		      "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
		      "th{background:#eee}.more{color:#555;margin-top:0}"
		      "</style></head><body>\n<h1>sandboxd</h1>\n<p>Signed in as ");
	if (!rc)
		rc = html_text(&r->out, r->caller.login);
	if (!rc)
		rc = buf_puts(&r->out, ".</p>\n");
	if (rc)
		return err_set(e, rc, "the page does not fit");
	if ((rc = engines(r, e)))
		return rc;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if ((rc = section(r, &sections[i], e)))
			return rc;
	if ((rc = buf_puts(&r->out, "</body></html>\n")))
		return err_set(e, rc, "the page does not fit");
	/* The page holds accounts' names and the audit log's: no cache keeps it. */
	http_header(r, "Cache-Control", "no-store");
	http_body(r, 200, "text/html; charset=utf-8");
	return 0;
}
