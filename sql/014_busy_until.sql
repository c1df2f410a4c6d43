-- 014_busy_until: how long a sandbox's running execs hold it (SPEC §4: "A running exec,
-- attached or detached, counts as activity"). An exec sets it to its start plus its time
-- limit and grace; every call then moves idle_stop_at to the idle limit past the later of
-- now and busy_until, so that a call made while a long exec runs never shortens the hold,
-- and a shorter idle limit (PATCH) applies as soon as nothing holds the sandbox.

ALTER TABLE sandboxes ADD COLUMN busy_until timestamptz;
COMMENT ON COLUMN sandboxes.busy_until IS 'the end of the time limit (and grace) of its latest exec: calls move idle_stop_at past it';
GRANT SELECT (busy_until) ON sandboxes TO sandboxd_auditor;
