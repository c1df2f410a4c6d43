-- 019_sandbox_resources: the CPUs and memory each sandbox was created with (SPEC §4
-- "Limits": a create's own, or the deployment's defaults then), as the engine was told, so
-- that GET …/sandboxes/{id} can answer its resources, whatever the settings are by now.

ALTER TABLE sandboxes ADD COLUMN nano_cpus bigint CHECK (nano_cpus > 0);
COMMENT ON COLUMN sandboxes.nano_cpus IS 'its CPUs in billionths (the engine''s NanoCpus) as created; NULL for sandboxes made before 019';
ALTER TABLE sandboxes ADD COLUMN memory_bytes bigint CHECK (memory_bytes > 0);
COMMENT ON COLUMN sandboxes.memory_bytes IS 'its memory limit in bytes as created; NULL for sandboxes made before 019';
GRANT SELECT (nano_cpus, memory_bytes) ON sandboxes TO sandboxd_auditor;
