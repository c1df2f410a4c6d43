-- 003_audit: the audit log as a DBA wants it (SPEC.md §7; sql/README.md explains it all).
--   * audit_log partitioned by month on `at` (UTC months), a default partition as a safety
--     net, audit_ensure_partitions() to create months ahead, audit_prune() to drop old ones;
--   * append-only: the service may only INSERT (grants), and a trigger refuses UPDATE,
--     DELETE and TRUNCATE from anyone, the owner included; pruning drops whole partitions;
--   * group roles: sandboxd_service (what the service may do; grant it to the service's
--     login role) and sandboxd_auditor (read-only, for DBAs and BI tools);
--   * views for the usual questions, and a COMMENT on every table, column and view.
-- Runs as the schema owner in one transaction (sandboxctl migrate).

-- --- roles ------------------------------------------------------------------------------
-- Roles belong to the cluster, not the database: create them only when missing. Creating
-- them needs CREATEROLE (or a superuser); without it, a DBA creates them first (sql/README.md).
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['sandboxd_service', 'sandboxd_auditor'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user
                           AND (rolsuper OR rolcreaterole)) THEN
                RAISE EXCEPTION 'role % is missing and % may not create roles', r, current_user
                    USING HINT = format('as a superuser: CREATE ROLE %I NOLOGIN; GRANT %I TO %I WITH ADMIN OPTION;',
                                        r, r, current_user);
            END IF;
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
        END IF;
    END LOOP;
    -- COMMENT ON ROLE needs CREATEROLE in PostgreSQL 15: best effort.
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolcreaterole)) THEN
        COMMENT ON ROLE sandboxd_service IS 'sandboxd: what the service may do (grant it to the service''s login role); audit_log: INSERT and SELECT only';
        COMMENT ON ROLE sandboxd_auditor IS 'sandboxd: read-only access to the audit log, its views and the tables they name (GRANT sandboxd_auditor TO alice)';
    END IF;
END
$$;

-- --- audit_log, partitioned -------------------------------------------------------------
-- The old table's rows move into the new one (ids kept, the sequence carried over).
ALTER TABLE audit_log RENAME TO audit_log_unpartitioned;
DROP INDEX audit_log_at, audit_log_account_at, audit_log_repository_at, audit_log_request_id;
ALTER TABLE audit_log_unpartitioned RENAME CONSTRAINT audit_log_pkey TO audit_log_unpartitioned_pkey;

CREATE TABLE audit_log (
    id           bigint NOT NULL DEFAULT nextval('audit_log_id_seq'),
    at           timestamptz NOT NULL DEFAULT now(),
    action       text NOT NULL,
    status       integer NOT NULL,
    account_id   bigint,
    login        text,
    token_id     bigint,
    token_kind   text,
    repository   text,
    sandbox_id   text,
    request_id   text,
    remote_addr  text,
    via          text NOT NULL DEFAULT 'rest',
    duration_ms  integer,
    details      jsonb NOT NULL DEFAULT '{}',
    outcome      text NOT NULL GENERATED ALWAYS AS (
                     CASE WHEN status < 400 THEN 'success'
                          WHEN status IN (401, 403) THEN 'denied'
                          WHEN status < 500 THEN 'failed'
                          ELSE 'error' END) STORED,
    PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
ALTER SEQUENCE audit_log_id_seq OWNED BY audit_log.id;

CREATE TABLE audit_log_default PARTITION OF audit_log DEFAULT;

-- Indexes for the questions in sql/README.md (each one names the index it uses).
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_action_at ON audit_log (action, at);
CREATE INDEX audit_log_account_at ON audit_log (account_id, at);
CREATE INDEX audit_log_login_at ON audit_log (lower(login), at);
CREATE INDEX audit_log_repository_at ON audit_log (repository, at);
CREATE INDEX audit_log_sandbox_at ON audit_log (sandbox_id, at) WHERE sandbox_id IS NOT NULL;
CREATE INDEX audit_log_request_id ON audit_log (request_id);
CREATE INDEX audit_log_denied_at ON audit_log (at, token_id, remote_addr) WHERE status IN (401, 403);

COMMENT ON TABLE audit_log IS 'one row per REST or MCP request, git ref update, sandbox event and denial; append-only; partitioned by UTC month on at (audit_log_YYYY_MM, audit_log_default)';
COMMENT ON TABLE audit_log_default IS 'safety net for rows with no monthly partition; audit_ensure_partitions() moves them into months';
COMMENT ON COLUMN audit_log.id IS 'increasing number; unique together with at (the partition key)';
COMMENT ON COLUMN audit_log.at IS 'when the action ended (the row was written)';
COMMENT ON COLUMN audit_log.action IS 'dotted verb: repo.create, token.revoke, auth.denied, auth.required, git.push, git.push.ref, sandbox.exec, …';
COMMENT ON COLUMN audit_log.status IS 'HTTP status of the request; git.push.ref: 200 accepted, 403 refused';
COMMENT ON COLUMN audit_log.account_id IS 'the actor (accounts.id); NULL when anonymous or the credential was unknown';
COMMENT ON COLUMN audit_log.login IS 'the actor''s login at the time';
COMMENT ON COLUMN audit_log.token_id IS 'the credential used (tokens.id); NULL for anonymous calls and git-URL JWTs (see details.jti)';
COMMENT ON COLUMN audit_log.token_kind IS 'personal, job, sandbox or jwt';
COMMENT ON COLUMN audit_log.repository IS 'owner/name at the time';
COMMENT ON COLUMN audit_log.sandbox_id IS 'the sandbox acted on, if any';
COMMENT ON COLUMN audit_log.request_id IS 'X-Request-Id of the response; a push''s git.push.ref rows share their request''s id';
COMMENT ON COLUMN audit_log.remote_addr IS 'client address as nginx saw it';
COMMENT ON COLUMN audit_log.via IS 'rest, mcp, git or reaper';
COMMENT ON COLUMN audit_log.duration_ms IS 'time the request took, milliseconds (NULL for per-ref rows)';
COMMENT ON COLUMN audit_log.details IS 'method, path and what the action changed (git.push.ref: ref, old, new, result, reason; sandbox.exec: cmd, masked); never a secret';
COMMENT ON COLUMN audit_log.outcome IS 'derived from status: success (< 400), denied (401, 403), failed (other 4xx), error (5xx)';

-- --- append-only ------------------------------------------------------------------------
-- Grants keep the service out; this trigger keeps everyone out, the owner included, so a
-- slip in a psql session cannot rewrite history. Pruning detaches and drops whole
-- partitions, which fires no row or TRUNCATE trigger.
CREATE FUNCTION audit_log_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'old rows go by whole partitions: sandboxctl audit prune';
END
$$;
COMMENT ON FUNCTION audit_log_refuse_change() IS 'refuses UPDATE, DELETE and TRUNCATE on audit_log and its partitions';
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_change();
-- Statement triggers are not cloned to partitions: each partition gets its own.
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log_default
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change();

-- --- partitions -------------------------------------------------------------------------
-- Every partition of audit_log with its bounds (NULL for the default partition).
CREATE VIEW audit_partitions AS
SELECT c.relname::text AS partition,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::timestamptz AS range_start,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz AS range_end,
       pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT' AS is_default,
       greatest(c.reltuples, 0)::bigint AS estimated_rows,
       pg_total_relation_size(c.oid) AS bytes
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'audit_log'::regclass;
COMMENT ON VIEW audit_partitions IS 'the partitions of audit_log with their ranges (order by range_start); the default one has none';
COMMENT ON COLUMN audit_partitions.partition IS 'table name: audit_log_YYYY_MM or audit_log_default';
COMMENT ON COLUMN audit_partitions.range_start IS 'first instant the partition holds (inclusive, a UTC month start)';
COMMENT ON COLUMN audit_partitions.range_end IS 'end of its range (exclusive)';
COMMENT ON COLUMN audit_partitions.is_default IS 'true for audit_log_default, which takes rows no month holds';
COMMENT ON COLUMN audit_partitions.estimated_rows IS 'row count as of the last ANALYZE (estimate)';
COMMENT ON COLUMN audit_partitions.bytes IS 'size on disk with its indexes';

-- Creates the monthly partition holding instant t if it is missing; returns its name or
-- NULL. The caller has made sure the default partition holds no row of that month.
CREATE FUNCTION audit_create_month(t timestamptz) RETURNS text
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
    lo timestamptz := date_trunc('month', t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    hi timestamptz := (date_trunc('month', t AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
    name text := 'audit_log_' || to_char(lo AT TIME ZONE 'UTC', 'YYYY_MM');
BEGIN
    IF EXISTS (SELECT 1 FROM audit_partitions p WHERE p.range_start = lo OR p.partition = name) THEN
        RETURN NULL;
    END IF;
    EXECUTE format('CREATE TABLE %I PARTITION OF audit_log FOR VALUES FROM (%L) TO (%L)',
                   name, lo, hi);
    EXECUTE format('CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON %I'
                   ' FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change()', name);
    -- Nobody gets rights on a partition itself: everyone goes through audit_log.
    EXECUTE format('REVOKE ALL ON %I FROM PUBLIC, sandboxd_service, sandboxd_auditor', name);
    EXECUTE format('COMMENT ON TABLE %I IS %L', name,
                   format('audit_log rows from %s to %s (UTC)', to_char(lo AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
                          to_char(hi AT TIME ZONE 'UTC', 'YYYY-MM-DD')));
    RETURN name;
END
$$;
COMMENT ON FUNCTION audit_create_month(timestamptz) IS 'creates the audit_log partition of the UTC month holding t (internal: use audit_ensure_partitions)';

-- Makes sure the current month and `ahead` more exist, and moves rows that fell into the
-- default partition into their months (detach it, create the months, re-insert its rows,
-- drop it: no UPDATE or DELETE, so the append-only trigger is never in the way).
-- Returns the partitions it created. Safe to run at any time, as often as wanted.
-- Creating, detaching and dropping partitions need a short exclusive lock on audit_log;
-- behind a long reader that lock would hold up every INSERT of the service, so both
-- functions give up after 5 s (lock_timeout) and are simply run again later.
CREATE FUNCTION audit_ensure_partitions(ahead integer DEFAULT 2) RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '5s' AS $$
DECLARE
    m timestamptz;
    made text;
BEGIN
    IF ahead IS NULL OR ahead < 0 OR ahead > 120 THEN
        RAISE EXCEPTION 'ahead must be 0 to 120 months, not %', ahead;
    END IF;
    -- One at a time; SHARE ROW EXCLUSIVE lets readers on but holds writers back only while
    -- partitions are made.
    LOCK TABLE audit_log IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (SELECT 1 FROM audit_log_default) THEN
        ALTER TABLE audit_log DETACH PARTITION audit_log_default;
        ALTER TABLE audit_log_default RENAME TO audit_log_default_moving;
        FOR m IN SELECT DISTINCT date_trunc('month', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                 FROM audit_log_default_moving LOOP
            made := audit_create_month(m);
            IF made IS NOT NULL THEN
                RETURN NEXT made;
            END IF;
        END LOOP;
        CREATE TABLE audit_log_default PARTITION OF audit_log DEFAULT;
        CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log_default
            FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change();
        REVOKE ALL ON audit_log_default FROM PUBLIC, sandboxd_service, sandboxd_auditor;
        COMMENT ON TABLE audit_log_default IS 'safety net for rows with no monthly partition; audit_ensure_partitions() moves them into months';
        INSERT INTO audit_log (id, at, action, status, account_id, login, token_id, token_kind,
                               repository, sandbox_id, request_id, remote_addr, via, duration_ms, details)
        SELECT id, at, action, status, account_id, login, token_id, token_kind,
               repository, sandbox_id, request_id, remote_addr, via, duration_ms, details
        FROM audit_log_default_moving;
        DROP TABLE audit_log_default_moving;
    END IF;
    FOR i IN 0 .. ahead LOOP
        made := audit_create_month(now() + make_interval(months => i));
        IF made IS NOT NULL THEN
            RETURN NEXT made;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION audit_ensure_partitions(integer) IS 'creates the audit_log partitions of this UTC month and `ahead` more, and empties the default partition into months; returns what it created (sandboxctl audit partitions)';

-- Detaches and drops every monthly partition that ends at or before now() - older_than,
-- after a last check that it holds no newer row. Returns what it dropped (or, with
-- dry_run, would drop). The default partition is never dropped (run
-- audit_ensure_partitions first to empty it into months).
CREATE FUNCTION audit_prune(older_than interval, dry_run boolean DEFAULT false)
RETURNS TABLE (partition text, range_start timestamptz, range_end timestamptz, row_count bigint)
LANGUAGE plpgsql SET search_path = public, pg_temp SET lock_timeout = '5s' AS $$
DECLARE
    limit_at timestamptz := now() - older_than;
    p record;
    newer boolean;
BEGIN
    IF older_than IS NULL OR older_than < interval '1 hour' THEN
        RAISE EXCEPTION 'older_than must be at least 1 hour, not %', older_than;
    END IF;
    LOCK TABLE audit_log IN SHARE ROW EXCLUSIVE MODE;
    FOR p IN SELECT a.partition, a.range_start, a.range_end FROM audit_partitions a
             WHERE NOT a.is_default AND a.range_end <= limit_at ORDER BY a.range_start LOOP
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE at >= $1)', p.partition)
            INTO newer USING limit_at;
        CONTINUE WHEN newer;
        partition := p.partition;
        range_start := p.range_start;
        range_end := p.range_end;
        EXECUTE format('SELECT count(*) FROM %I', p.partition) INTO row_count;
        IF NOT dry_run THEN
            EXECUTE format('ALTER TABLE audit_log DETACH PARTITION %I', p.partition);
            EXECUTE format('DROP TABLE %I', p.partition);
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION audit_prune(interval, boolean) IS 'drops the audit_log partitions wholly older than now() - older_than; returns them (sandboxctl audit prune)';

-- The old rows, into their months.
SELECT audit_create_month(m)
FROM (SELECT DISTINCT date_trunc('month', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m
      FROM audit_log_unpartitioned) months;
SELECT audit_ensure_partitions(1);
INSERT INTO audit_log (id, at, action, status, account_id, login, token_id, token_kind,
                       repository, sandbox_id, request_id, remote_addr, via, duration_ms, details)
SELECT id, at, action, status, account_id, login, token_id, token_kind,
       repository, sandbox_id, request_id, remote_addr, via, duration_ms, details
FROM audit_log_unpartitioned;
DROP TABLE audit_log_unpartitioned;

-- --- views ------------------------------------------------------------------------------
-- Views run with their owner's rights: sandboxd_auditor needs SELECT on the views only.
-- A later migration (sandboxes) adds audit_running_sandboxes the same way: CREATE VIEW,
-- COMMENT ON VIEW and each column, GRANT SELECT … TO sandboxd_auditor.

CREATE VIEW audit_repository_activity AS
SELECT a.repository, a.at, a.action, a.outcome, a.status, a.login, a.token_kind, a.via,
       a.details->>'ref' AS ref, a.sandbox_id, a.remote_addr, a.request_id, a.details, a.id
FROM audit_log a
WHERE a.repository IS NOT NULL AND a.at > now() - interval '30 days';
COMMENT ON VIEW audit_repository_activity IS 'the last 30 days of rows naming a repository; filter on repository, order by at desc';
COMMENT ON COLUMN audit_repository_activity.repository IS 'owner/name at the time';
COMMENT ON COLUMN audit_repository_activity.at IS 'when';
COMMENT ON COLUMN audit_repository_activity.action IS 'dotted verb (audit_log.action)';
COMMENT ON COLUMN audit_repository_activity.outcome IS 'success, denied, failed or error';
COMMENT ON COLUMN audit_repository_activity.status IS 'HTTP status';
COMMENT ON COLUMN audit_repository_activity.login IS 'the actor''s login at the time';
COMMENT ON COLUMN audit_repository_activity.token_kind IS 'personal, job, sandbox or jwt';
COMMENT ON COLUMN audit_repository_activity.via IS 'rest, mcp, git or reaper';
COMMENT ON COLUMN audit_repository_activity.ref IS 'the ref, for git.push.ref rows';
COMMENT ON COLUMN audit_repository_activity.sandbox_id IS 'the sandbox, for sandbox actions';
COMMENT ON COLUMN audit_repository_activity.remote_addr IS 'client address';
COMMENT ON COLUMN audit_repository_activity.request_id IS 'X-Request-Id';
COMMENT ON COLUMN audit_repository_activity.details IS 'audit_log.details';
COMMENT ON COLUMN audit_repository_activity.id IS 'audit_log.id (ties broken by it)';

CREATE VIEW audit_sandbox_commands AS
SELECT a.sandbox_id,
       row_number() OVER (PARTITION BY a.sandbox_id ORDER BY a.at, a.id) AS seq,
       a.at, a.login, a.account_id, a.token_id, a.token_kind, a.via, a.repository,
       a.details->>'cmd' AS cmd,
       CASE WHEN a.details->>'exit_code' ~ '^-?[0-9]{1,9}$' THEN (a.details->>'exit_code')::integer END AS exit_code,
       a.status, a.outcome, a.duration_ms, a.request_id, a.id
FROM audit_log a
WHERE a.action = 'sandbox.exec' AND a.sandbox_id IS NOT NULL;
COMMENT ON VIEW audit_sandbox_commands IS 'every command run in a sandbox (sandbox.exec rows), numbered in order per sandbox';
COMMENT ON COLUMN audit_sandbox_commands.sandbox_id IS 'the sandbox';
COMMENT ON COLUMN audit_sandbox_commands.seq IS '1, 2, 3, … in the order the commands ended in that sandbox';
COMMENT ON COLUMN audit_sandbox_commands.at IS 'when the command ended';
COMMENT ON COLUMN audit_sandbox_commands.login IS 'who ran it (login at the time)';
COMMENT ON COLUMN audit_sandbox_commands.account_id IS 'who ran it (accounts.id)';
COMMENT ON COLUMN audit_sandbox_commands.token_id IS 'credential used (tokens.id)';
COMMENT ON COLUMN audit_sandbox_commands.token_kind IS 'personal, job, sandbox or jwt';
COMMENT ON COLUMN audit_sandbox_commands.via IS 'rest or mcp';
COMMENT ON COLUMN audit_sandbox_commands.repository IS 'the sandbox''s repository';
COMMENT ON COLUMN audit_sandbox_commands.cmd IS 'the command line, credentials masked (details.cmd)';
COMMENT ON COLUMN audit_sandbox_commands.exit_code IS 'its exit code (details.exit_code), NULL if it never ended';
COMMENT ON COLUMN audit_sandbox_commands.status IS 'HTTP status of the exec request';
COMMENT ON COLUMN audit_sandbox_commands.outcome IS 'success, denied, failed or error';
COMMENT ON COLUMN audit_sandbox_commands.duration_ms IS 'how long the request took';
COMMENT ON COLUMN audit_sandbox_commands.request_id IS 'X-Request-Id';
COMMENT ON COLUMN audit_sandbox_commands.id IS 'audit_log.id';

CREATE VIEW audit_denied AS
SELECT a.at, a.action, a.status, a.details->>'reason' AS reason, a.token_id, a.token_kind,
       a.login, a.remote_addr, a.repository, a.via, a.details->>'method' AS method,
       a.details->>'path' AS path, a.request_id, a.id
FROM audit_log a
WHERE a.status IN (401, 403);
COMMENT ON VIEW audit_denied IS 'every denied request (401, 403) and refused ref update: who tried, from where, why';
COMMENT ON COLUMN audit_denied.at IS 'when';
COMMENT ON COLUMN audit_denied.action IS 'auth.denied (bad credential), auth.required (none given), or the action refused';
COMMENT ON COLUMN audit_denied.status IS '401 or 403';
COMMENT ON COLUMN audit_denied.reason IS 'why a credential failed or a push was refused (details.reason)';
COMMENT ON COLUMN audit_denied.token_id IS 'the token presented when it is known (revoked, expired, …), else NULL';
COMMENT ON COLUMN audit_denied.token_kind IS 'its kind';
COMMENT ON COLUMN audit_denied.login IS 'its account''s login, when known';
COMMENT ON COLUMN audit_denied.remote_addr IS 'client address';
COMMENT ON COLUMN audit_denied.repository IS 'owner/name asked for, if any';
COMMENT ON COLUMN audit_denied.via IS 'rest, mcp or git';
COMMENT ON COLUMN audit_denied.method IS 'HTTP method';
COMMENT ON COLUMN audit_denied.path IS 'request path';
COMMENT ON COLUMN audit_denied.request_id IS 'X-Request-Id';
COMMENT ON COLUMN audit_denied.id IS 'audit_log.id';

CREATE VIEW audit_denied_by_token_and_address AS
SELECT d.token_id, d.token_kind, d.login, d.remote_addr, count(*) AS denials,
       min(d.at) AS first_at, max(d.at) AS last_at,
       array_agg(DISTINCT coalesce(d.reason, d.action) ORDER BY coalesce(d.reason, d.action)) AS reasons
FROM audit_denied d
WHERE d.at > now() - interval '7 days'
GROUP BY d.token_id, d.token_kind, d.login, d.remote_addr;
COMMENT ON VIEW audit_denied_by_token_and_address IS 'denials of the last 7 days counted per token (NULL: none or unknown) and client address';
COMMENT ON COLUMN audit_denied_by_token_and_address.token_id IS 'the token presented, NULL when none or unknown';
COMMENT ON COLUMN audit_denied_by_token_and_address.token_kind IS 'its kind';
COMMENT ON COLUMN audit_denied_by_token_and_address.login IS 'its account''s login';
COMMENT ON COLUMN audit_denied_by_token_and_address.remote_addr IS 'client address';
COMMENT ON COLUMN audit_denied_by_token_and_address.denials IS 'how many 401 and 403 answers';
COMMENT ON COLUMN audit_denied_by_token_and_address.first_at IS 'first denial in the window';
COMMENT ON COLUMN audit_denied_by_token_and_address.last_at IS 'last denial';
COMMENT ON COLUMN audit_denied_by_token_and_address.reasons IS 'distinct reasons (or actions when no reason was recorded)';

CREATE VIEW audit_pushes AS
SELECT a.repository, a.details->>'ref' AS ref, a.at,
       CASE WHEN a.details->>'old' ~ '^0+$' THEN 'create'
            WHEN a.details->>'new' ~ '^0+$' THEN 'delete'
            ELSE 'update' END AS change,
       a.details->>'old' AS old, a.details->>'new' AS new,
       a.details->>'result' AS result, a.details->>'reason' AS reason,
       a.details->>'kind' AS kind, a.login, a.account_id, a.token_id, a.token_kind,
       a.request_id, a.id
FROM audit_log a
WHERE a.action = 'git.push.ref';
COMMENT ON VIEW audit_pushes IS 'every ref update pushed over git, accepted or refused (git.push.ref rows); order by repository, ref, at';
COMMENT ON COLUMN audit_pushes.repository IS 'owner/name';
COMMENT ON COLUMN audit_pushes.ref IS 'full ref name as stored (refs/heads/main, refs/namespaces/ephemeral/…)';
COMMENT ON COLUMN audit_pushes.at IS 'when the hook judged it';
COMMENT ON COLUMN audit_pushes.change IS 'create, update or delete';
COMMENT ON COLUMN audit_pushes.old IS 'object id before (zeros: created)';
COMMENT ON COLUMN audit_pushes.new IS 'object id after (zeros: deleted)';
COMMENT ON COLUMN audit_pushes.result IS 'accepted or refused';
COMMENT ON COLUMN audit_pushes.reason IS 'why it was refused';
COMMENT ON COLUMN audit_pushes.kind IS 'normal, or ephemeral for git URLs of kind ephemeral';
COMMENT ON COLUMN audit_pushes.login IS 'the pusher''s login at the time';
COMMENT ON COLUMN audit_pushes.account_id IS 'the pusher (accounts.id)';
COMMENT ON COLUMN audit_pushes.token_id IS 'credential used (tokens.id), NULL for git-URL JWTs';
COMMENT ON COLUMN audit_pushes.token_kind IS 'personal, job, sandbox or jwt';
COMMENT ON COLUMN audit_pushes.request_id IS 'the push request''s X-Request-Id (shared by its refs)';
COMMENT ON COLUMN audit_pushes.id IS 'audit_log.id';

-- --- comments where 001 and 002 left none ------------------------------------------------
COMMENT ON TABLE schema_migrations IS 'migrations applied by sandboxctl migrate (sql/NNN_name.sql)';
COMMENT ON COLUMN schema_migrations.version IS 'NNN of the file';
COMMENT ON COLUMN schema_migrations.name IS 'file name without .sql';
COMMENT ON COLUMN schema_migrations.applied_at IS 'when it was applied';
COMMENT ON COLUMN accounts.id IS 'account number, never reused';
COMMENT ON COLUMN accounts.name IS 'display name (optional)';
COMMENT ON COLUMN accounts.email IS 'contact address (optional)';
COMMENT ON COLUMN accounts.created_at IS 'when the account was made';
COMMENT ON COLUMN repositories.id IS 'repository number, never reused';
COMMENT ON COLUMN repositories.owner_id IS 'the owning account (accounts.id), admin on it';
COMMENT ON COLUMN repositories.name IS 'name, unique per owner case-insensitively; the path is <owner login>/<name>';
COMMENT ON COLUMN repositories.default_branch IS 'branch name HEAD points at; protected: no force-push, no deletion, no agent updates';
COMMENT ON COLUMN repositories.created_at IS 'when it was made';
COMMENT ON COLUMN collaborators.repository_id IS 'the repository (repositories.id)';
COMMENT ON COLUMN collaborators.account_id IS 'the collaborator (accounts.id)';
COMMENT ON COLUMN collaborators.role IS 'read, write or admin';
COMMENT ON COLUMN collaborators.created_at IS 'when the role was first given';
COMMENT ON COLUMN tokens.id IS 'token number, shown to users and in audit_log.token_id';
COMMENT ON COLUMN tokens.note IS 'what the token is for, from its maker';
COMMENT ON COLUMN tokens.created_at IS 'when it was minted';
COMMENT ON COLUMN tokens.expires_at IS 'it fails from this instant on';
COMMENT ON COLUMN tokens.revoked_at IS 'when it was revoked; it fails from then on';
COMMENT ON COLUMN signing_keys.created_at IS 'when the key was made';
COMMENT ON COLUMN account_keys.account_id IS 'the owner whose repositories the key signs for';
COMMENT ON COLUMN account_keys.public_pem IS 'SubjectPublicKeyInfo PEM';
COMMENT ON COLUMN account_keys.created_at IS 'when it was registered';
COMMENT ON COLUMN account_keys.revoked_at IS 'when it stopped being accepted';

-- --- privileges -------------------------------------------------------------------------
-- The service: everything it needs on its own tables, only INSERT (and SELECT) on the
-- audit log; the deployment grants sandboxd_service to the service's login role.
-- Tables that later migrations make get the same rights by default.
GRANT USAGE ON SCHEMA public TO sandboxd_service, sandboxd_auditor;
REVOKE ALL ON audit_log, audit_log_default FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON accounts, repositories, collaborators, tokens,
    signing_keys, account_keys TO sandboxd_service;
GRANT SELECT ON schema_migrations TO sandboxd_service;
GRANT SELECT, INSERT ON audit_log TO sandboxd_service;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO sandboxd_service;
GRANT EXECUTE ON FUNCTION audit_ensure_partitions(integer) TO sandboxd_service;
REVOKE EXECUTE ON FUNCTION audit_ensure_partitions(integer), audit_prune(interval, boolean),
    audit_create_month(timestamptz) FROM PUBLIC;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO sandboxd_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO sandboxd_service;

-- The auditor: read the audit log, its views and what a DBA joins them with; never the
-- signing keys or token hashes.
GRANT SELECT ON audit_log, audit_partitions, audit_repository_activity, audit_sandbox_commands,
    audit_denied, audit_denied_by_token_and_address, audit_pushes TO sandboxd_auditor;
GRANT SELECT ON accounts, repositories, collaborators, account_keys, schema_migrations
    TO sandboxd_auditor;
GRANT SELECT (id, account_id, kind, scope, repository_id, note, created_at, expires_at,
              revoked_at, last_used_at) ON tokens TO sandboxd_auditor;
