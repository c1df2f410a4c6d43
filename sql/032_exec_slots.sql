-- 032_exec_slots: concurrent execs counted in the database (issue 32 A.2, decision 0085).
-- One row per exec that runs or may still run: attached, streamed (a worker's or, once
-- handed over, the holder's) and detached (the agent's). A row is taken in the same
-- transaction that checks the caps (SANDBOXD_EXECS_PER_SANDBOX, SANDBOXD_EXECS_PER_ACCOUNT),
-- under an advisory lock per account and per sandbox, so that every worker of every host
-- counts the same rows. It goes at the exec's end: its worker's, the holder's (by the
-- held row, audit_held_finish, the reaper's too) or, for a detached exec, when a read
-- finds it ended. A row whose owner died is never leaked for good: it stops counting at
-- expires_at (the exec's own limit, its grace and a margin), and the reaper deletes it then,
-- or at once when its sandbox is no longer live.
--
-- Calls parked with the holder while their sandbox clones (park.h) have rows of their own
-- kind, against SANDBOXD_PARKED_PER_SANDBOX and SANDBOXD_PARKED_PER_ACCOUNT (decision
-- 0087); the holder deletes one when the call leaves it.

CREATE TABLE exec_slots (
    id          bigserial PRIMARY KEY,
    kind        text NOT NULL DEFAULT 'exec' CHECK (kind IN ('exec', 'parked')),
    sandbox_id  text NOT NULL,
    account_id  bigint NOT NULL,
    request_id  text NOT NULL,
    exec_id     text,
    held_id     bigint,
    taken_at    timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX exec_slots_sandbox ON exec_slots (sandbox_id, kind, expires_at);
CREATE INDEX exec_slots_account ON exec_slots (account_id, kind, expires_at);
CREATE INDEX exec_slots_request ON exec_slots (request_id) WHERE kind = 'parked';
CREATE INDEX exec_slots_held ON exec_slots (held_id) WHERE held_id IS NOT NULL;
CREATE INDEX exec_slots_detached ON exec_slots (sandbox_id, exec_id) WHERE exec_id IS NOT NULL;
COMMENT ON TABLE exec_slots IS 'execs running or that may still run, one row each, counted against the per-sandbox and per-account caps (issue 32 A.2)';
COMMENT ON COLUMN exec_slots.id IS 'the slot''s id: its worker, the holder or the reaper deletes the row by it';
COMMENT ON COLUMN exec_slots.kind IS 'exec: a running exec (attached, streamed, detached); parked: a call the holder keeps while its sandbox clones';
COMMENT ON COLUMN exec_slots.sandbox_id IS 'the sandbox it runs in';
COMMENT ON COLUMN exec_slots.account_id IS 'the account that asked for it (the caller), whose cap it counts against';
COMMENT ON COLUMN exec_slots.request_id IS 'the request that started it (the audit row''s request_id)';
COMMENT ON COLUMN exec_slots.exec_id IS 'a detached exec''s id (ex_...), released when a read finds it ended; NULL for an attached or streamed exec';
COMMENT ON COLUMN exec_slots.held_id IS 'the held_execs row of an exec handed to the holder: its slot goes with that row (audit_held_finish)';
COMMENT ON COLUMN exec_slots.taken_at IS 'when the slot was taken (the exec about to start)';
COMMENT ON COLUMN exec_slots.expires_at IS 'past it the row no longer counts (its owner died or never said): the exec''s limit, its grace and a margin';
GRANT SELECT ON exec_slots TO sandboxd_auditor;
