-- 020_disk_limit: each sandbox's disk limit (SPEC §4 "Limits": its writable layer, which
-- holds /workspace), whether its engine enforces it (StorageOpt size on overlay2 over XFS
-- with pquota) or the reaper measures it, and when the reaper last did.

ALTER TABLE sandboxes ADD COLUMN disk_bytes bigint CHECK (disk_bytes > 0);
COMMENT ON COLUMN sandboxes.disk_bytes IS 'its disk limit in bytes as created; NULL for sandboxes made before 020';
ALTER TABLE sandboxes ADD COLUMN disk_enforced boolean;
COMMENT ON COLUMN sandboxes.disk_enforced IS 'true: the engine enforces disk_bytes (writes past it fail); false: the reaper measures the container and stops it past the limit; NULL before its container exists';
ALTER TABLE sandboxes ADD COLUMN disk_checked_at timestamptz;
COMMENT ON COLUMN sandboxes.disk_checked_at IS 'when the reaper last measured its disk (disk_enforced false only)';
ALTER TABLE sandboxes ADD COLUMN disk_used_bytes bigint;
COMMENT ON COLUMN sandboxes.disk_used_bytes IS 'what the reaper measured then (the writable layer''s size), NULL when never measured';
CREATE INDEX sandboxes_disk_unchecked ON sandboxes (disk_checked_at NULLS FIRST)
    WHERE state = 'ready' AND disk_enforced = false;
ALTER TABLE warm_containers ADD COLUMN disk_enforced boolean;
COMMENT ON COLUMN warm_containers.disk_enforced IS 'whether its engine took the default disk limit (StorageOpt size); the sandbox that claims it inherits this';
GRANT SELECT (disk_bytes, disk_enforced, disk_checked_at, disk_used_bytes) ON sandboxes TO sandboxd_auditor;
