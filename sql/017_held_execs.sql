-- 017_held_execs: attached and streamed execs that a worker handed to the holder (README
-- "The holder"): the audit row to be, written by the worker before the hand-over, finished
-- and moved to audit_log by the holder when the command ends, or by the reaper when no
-- holder keeps it any more.

CREATE TABLE held_execs (
    id           bigserial PRIMARY KEY,
    created_at   timestamptz NOT NULL DEFAULT now(),
    seen_at      timestamptz NOT NULL DEFAULT now(),
    holder       text,
    sandbox_id   text NOT NULL,
    hold         text,
    action       text NOT NULL,
    account_id   bigint,
    login        text,
    token_id     bigint,
    token_kind   text,
    repository   text,
    request_id   text,
    remote_addr  text,
    via          text NOT NULL DEFAULT 'rest',
    details      jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX held_execs_seen_at ON held_execs (seen_at);
COMMENT ON TABLE held_execs IS 'running attached and streamed execs held by the holder process; each row becomes the exec''s audit_log row when the command ends';
COMMENT ON COLUMN held_execs.id IS 'the hand-over''s number';
COMMENT ON COLUMN held_execs.created_at IS 'when the worker handed the exec over';
COMMENT ON COLUMN held_execs.seen_at IS 'the last time a holder said it keeps the exec (every 5 s); older than 30 s: the reaper ends it';
COMMENT ON COLUMN held_execs.holder IS 'host:pid of the holder that took it; NULL until one did';
COMMENT ON COLUMN held_execs.sandbox_id IS 'the sandbox the command runs in';
COMMENT ON COLUMN held_execs.hold IS 'the sandboxes.busy_until the exec set (text), given back at its end; NULL when a longer exec held the sandbox already';
COMMENT ON COLUMN held_execs.action IS 'the audit row''s action (sandbox.exec)';
COMMENT ON COLUMN held_execs.account_id IS 'the audit row''s caller';
COMMENT ON COLUMN held_execs.login IS 'the caller''s login at the time';
COMMENT ON COLUMN held_execs.token_id IS 'the token the call came with';
COMMENT ON COLUMN held_execs.token_kind IS 'that token''s kind';
COMMENT ON COLUMN held_execs.repository IS 'owner/name at the time';
COMMENT ON COLUMN held_execs.request_id IS 'the request''s X-Request-Id';
COMMENT ON COLUMN held_execs.remote_addr IS 'the client''s address';
COMMENT ON COLUMN held_execs.via IS 'rest (MCP execs are not handed over)';
COMMENT ON COLUMN held_execs.details IS 'the audit details so far (masked): cmd, cwd, backend; the end adds exit_code, duration_ms, timed_out';
GRANT SELECT ON held_execs TO sandboxd_auditor;
