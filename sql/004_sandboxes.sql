-- 004_sandboxes: sandboxes, their git tokens, the reaper's lease, and the DBA's view of
-- what still runs.

CREATE TABLE sandboxes (
    id             text PRIMARY KEY CHECK (id ~ '^sb_[0-9a-f]{24}$'),
    repository_id  bigint NOT NULL REFERENCES repositories (id),
    account_id     bigint NOT NULL REFERENCES accounts (id),
    ref            text NOT NULL,
    commit_sha     text NOT NULL CHECK (commit_sha ~ '^[0-9a-f]{40}$'),
    state          text NOT NULL DEFAULT 'starting'
                   CHECK (state IN ('starting', 'ready', 'closed', 'stopped', 'failed')),
    clone_state    text NOT NULL DEFAULT 'pending' CHECK (clone_state IN ('pending', 'done', 'failed')),
    clone_error    text,
    container_id   text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_used_at   timestamptz NOT NULL DEFAULT now(),
    idle_stop_at   timestamptz NOT NULL,
    ended_at       timestamptz,
    end_reason     text
);
CREATE INDEX sandboxes_live_idle ON sandboxes (idle_stop_at) WHERE state IN ('starting', 'ready');
CREATE INDEX sandboxes_account_live ON sandboxes (account_id) WHERE state IN ('starting', 'ready');
CREATE INDEX sandboxes_repository ON sandboxes (repository_id, created_at);
COMMENT ON TABLE sandboxes IS 'short-lived containers with a repository cloned in them; the row exists before its container';
COMMENT ON COLUMN sandboxes.id IS 'sb_ and 24 hex digits; also the container label sandboxd.sandbox';
COMMENT ON COLUMN sandboxes.repository_id IS 'the repository cloned at /workspace/repo';
COMMENT ON COLUMN sandboxes.account_id IS 'the creator: the sandbox acts as this account';
COMMENT ON COLUMN sandboxes.ref IS 'the branch, tag or commit asked for (the default branch when none was)';
COMMENT ON COLUMN sandboxes.commit_sha IS 'the commit ref resolved to when the sandbox was created';
COMMENT ON COLUMN sandboxes.state IS 'starting, ready, then closed (by a caller), stopped (idle) or failed';
COMMENT ON COLUMN sandboxes.clone_state IS 'pending, done or failed: the clone inside the container';
COMMENT ON COLUMN sandboxes.clone_error IS 'why the clone failed, when it did';
COMMENT ON COLUMN sandboxes.container_id IS 'Docker container id, once created';
COMMENT ON COLUMN sandboxes.created_at IS 'when the sandbox was asked for';
COMMENT ON COLUMN sandboxes.last_used_at IS 'the last call on the sandbox';
COMMENT ON COLUMN sandboxes.idle_stop_at IS 'when the reaper stops it unless it is used again';
COMMENT ON COLUMN sandboxes.ended_at IS 'when it was closed, stopped or failed';
COMMENT ON COLUMN sandboxes.end_reason IS 'closed, idle, container gone, start timed out, …';

ALTER TABLE tokens ADD COLUMN sandbox_id text REFERENCES sandboxes (id);
ALTER TABLE tokens ADD CONSTRAINT tokens_sandbox_has_sandbox
    CHECK (kind <> 'sandbox' OR sandbox_id IS NOT NULL);
COMMENT ON COLUMN tokens.sandbox_id IS 'sandbox tokens: the sandbox whose git credential this is';

CREATE TABLE leases (
    name        text PRIMARY KEY,
    holder      text NOT NULL,
    expires_at  timestamptz NOT NULL
);
COMMENT ON TABLE leases IS 'who may act alone for a while (the idle reaper): a lease that is not renewed lapses';
COMMENT ON COLUMN leases.name IS 'what the lease is for, e.g. reaper';
COMMENT ON COLUMN leases.holder IS 'host:pid of the worker holding it';
COMMENT ON COLUMN leases.expires_at IS 'after this, anyone may take it';

CREATE VIEW audit_running_sandboxes AS
SELECT s.id, o.login || '/' || r.name AS repository, a.login AS creator, s.ref, s.commit_sha,
       s.state, s.clone_state, s.created_at, s.last_used_at, s.idle_stop_at, s.container_id
FROM sandboxes s
JOIN repositories r ON r.id = s.repository_id
JOIN accounts o ON o.id = r.owner_id
JOIN accounts a ON a.id = s.account_id
WHERE s.state IN ('starting', 'ready');
COMMENT ON VIEW audit_running_sandboxes IS 'sandboxes still running and when they stop if left idle';
COMMENT ON COLUMN audit_running_sandboxes.id IS 'the sandbox id';
COMMENT ON COLUMN audit_running_sandboxes.repository IS 'owner/name';
COMMENT ON COLUMN audit_running_sandboxes.creator IS 'login of the account it acts as';
COMMENT ON COLUMN audit_running_sandboxes.ref IS 'the ref asked for';
COMMENT ON COLUMN audit_running_sandboxes.commit_sha IS 'the commit checked out';
COMMENT ON COLUMN audit_running_sandboxes.state IS 'starting or ready';
COMMENT ON COLUMN audit_running_sandboxes.clone_state IS 'pending, done or failed';
COMMENT ON COLUMN audit_running_sandboxes.created_at IS 'when it was asked for';
COMMENT ON COLUMN audit_running_sandboxes.last_used_at IS 'the last call on it';
COMMENT ON COLUMN audit_running_sandboxes.idle_stop_at IS 'when the reaper stops it unless used';
COMMENT ON COLUMN audit_running_sandboxes.container_id IS 'Docker container id';
GRANT SELECT ON audit_running_sandboxes, sandboxes, leases TO sandboxd_auditor;
