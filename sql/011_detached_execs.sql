-- 011_detached_execs: the detached execs of each sandbox (issue 16, SPEC §4 "Processes"),
-- so that any worker can list them and send a kill to the backend that holds each. Their
-- state and output stay in the container (the agent's files or detach.sh's); a row says
-- what was started, when, by which backend, and whether a kill was asked for.

CREATE TABLE detached_execs (
    sandbox_id   text NOT NULL REFERENCES sandboxes (id),
    id           text NOT NULL CHECK (id ~ '^ex_[0-9a-f]{24}$'),
    cmd          text NOT NULL,
    backend      text NOT NULL CHECK (backend IN ('agent', 'docker')),
    started_at   timestamptz NOT NULL DEFAULT now(),
    kill_signal  text CHECK (kill_signal IN ('TERM', 'KILL', 'INT', 'HUP')),
    killed_at    timestamptz,
    PRIMARY KEY (sandbox_id, id)
);
CREATE INDEX detached_execs_newest ON detached_execs (sandbox_id, started_at DESC);
COMMENT ON TABLE detached_execs IS 'detached execs started in sandboxes; their state and output live in the container';
COMMENT ON COLUMN detached_execs.sandbox_id IS 'the sandbox it runs in';
COMMENT ON COLUMN detached_execs.id IS 'the execId: ex_ and 24 hex digits';
COMMENT ON COLUMN detached_execs.cmd IS 'the command as started, credentials masked (as in the audit row)';
COMMENT ON COLUMN detached_execs.backend IS 'what holds it: agent (the sandbox''s agent) or docker (detach.sh through Docker exec)';
COMMENT ON COLUMN detached_execs.started_at IS 'when it was started';
COMMENT ON COLUMN detached_execs.kill_signal IS 'the signal of the first kill asked for, if any';
COMMENT ON COLUMN detached_execs.killed_at IS 'when that kill was asked for';
GRANT SELECT ON detached_execs TO sandboxd_auditor;
