/* api_admin_page.c: GET /admin, the operators' page (SPEC §8): the engine, sandboxes by
 * state, the warm pool, recent denials and failures. Server-rendered HTML that needs no
 * script; every value from the database goes through html_text (html.h). Each section
 * names the view or query a DBA runs for more (sql/README.md). A browser signs in with
 * HTTP Basic; the dispatcher keeps its replayed credentials off every state-changing route
 * (check_forgeable in dispatch.c). */
#include <string.h>
#include "sandboxd/api.h"
#include "sandboxd/auth.h"
#include "sandboxd/boxuser.h"
#include "sandboxd/docker.h"
#include "sandboxd/html.h"
#include "sandboxd/banned.h"

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

static int section(struct req *r, const struct section *s, struct err *e)
{
	struct buf *b = &r->out;
	int code = 0, rc;
	PGresult *res = db_exec(r->db, e, &code, s->sql, 0);

	if (!res)
		return code;
	rc = buf_printf(b, "<h2 id=\"%s\">%s</h2>\n<table id=\"%s-table\"><tr>", s->id, s->title,
			s->id);
	if (!rc)
		rc = head_cells(b, s->columns);
	if (!rc)
		rc = buf_puts(b, "</tr>\n");
	for (int i = 0; !rc && i < PQntuples(res); i++) {
		rc = buf_puts(b, "<tr>");
		for (int j = 0; !rc && j < PQnfields(res); j++) {
			if (!(rc = buf_puts(b, "<td>")) && !(rc = html_text(b, db_val(res, i, j))))
				rc = buf_puts(b, "</td>");
		}
		if (!rc)
			rc = buf_puts(b, "</tr>\n");
	}
	if (!rc && PQntuples(res) == 0)
		rc = buf_printf(b, "<tr><td colspan=\"%d\">none</td></tr>\n", PQnfields(res));
	PQclear(res);
	if (!rc)
		rc = buf_puts(b, "</table>\n<p class=\"more\">More, in psql: <code>");
	if (!rc && !(rc = html_text(b, s->more)))
		rc = buf_puts(b, "</code></p>\n");
	return rc ? err_set(e, rc, "the page does not fit") : 0;
}

/* The engine: where it is, whether it answers, who root inside is, and its load. One
 * engine today; SPEC §8's docker_engines table makes this a row per engine. */
static int engine(struct req *r, struct err *e)
{
	struct err dk = { .msg = "" }, bu_err = { .msg = "" };
	struct buf *b = &r->out;
	struct boxuser bu;
	int code = 0, up = docker_ping(r->cfg->docker_host, &dk) == 0, rc;
	const char *mode = up && !boxuser_get(r->cfg, &bu, &bu_err) ? bu.mode : "unknown";
	PGresult *res = db_exec(r->db, e, &code,
				"SELECT (SELECT count(*) FROM sandboxes"
				"         WHERE state IN ('starting', 'ready')),"
				"       (SELECT count(*) FROM warm_containers"
				"         WHERE state IN ('starting', 'ready'))", 0);

	if (!res)
		return code;
	rc = buf_puts(b, "<h2 id=\"engines\">Engines</h2>\n<table id=\"engines-table\"><tr>"
		      "<th>engine</th><th>state</th><th>sandbox user</th><th>sandboxes</th>"
		      "<th>warm</th></tr>\n<tr><td>");
	if (!rc)
		rc = html_text(b, r->cfg->docker_host);
	if (!rc)
		rc = buf_puts(b, "</td><td>");
	if (!rc)
		rc = html_text(b, up ? "answering" : dk.msg);
	if (!rc)
		rc = buf_puts(b, "</td><td>");
	if (!rc)
		rc = html_text(b, mode);
	if (!rc)
		rc = buf_printf(b, "</td><td>%s</td><td>%s</td></tr>\n</table>\n", db_val(res, 0, 0),
				db_val(res, 0, 1));
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
	if ((rc = engine(r, e)))
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
