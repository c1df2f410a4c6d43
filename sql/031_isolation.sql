-- 031_isolation: a kernel boundary per sandbox (issue 32 C, decision 0083). An
-- engine may offer gVisor under one of its Docker runtimes (dockerd's daemon.json names it;
-- sandboxctl engine add --runtime, or engine runtime): a create that asks for isolation
-- gvisor goes only to such an engine and runs under that runtime, never under runc. Each
-- sandbox keeps what it asked for and the runtime its container was made with, for its GET,
-- the audit and the operator.

ALTER TABLE docker_engines ADD COLUMN gvisor_runtime text
    CHECK (gvisor_runtime ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$');
COMMENT ON COLUMN docker_engines.gvisor_runtime IS 'the engine''s Docker runtime that is gVisor (runsc), as its daemon.json names it; NULL: it offers no gVisor (isolation gvisor never goes there)';

ALTER TABLE sandboxes ADD COLUMN isolation text NOT NULL DEFAULT 'container'
    CHECK (isolation IN ('container', 'gvisor'));
COMMENT ON COLUMN sandboxes.isolation IS 'its kernel boundary as created: container (the engine''s default runtime, normally runc: namespaces on the host''s kernel) or gvisor (its engine''s gVisor runtime)';
ALTER TABLE sandboxes ADD COLUMN runtime text;
COMMENT ON COLUMN sandboxes.runtime IS 'the Docker runtime its container was made with (the engine''s DefaultRuntime for container, its gvisor_runtime for gvisor); NULL before 031 or when the engine did not say';
GRANT SELECT (isolation, runtime) ON sandboxes TO sandboxd_auditor;
