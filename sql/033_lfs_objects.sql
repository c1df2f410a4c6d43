-- 033_lfs_objects: the LFS objects each repository stores (issue 32 A.4, decision 0089),
-- so that quotas sum their sizes without walking the disk and the reaper finds the ones no
-- ref points at. A row is written when an upload lands (its file renamed into place) and
-- goes with the file: when the reaper collects it, or with its repository.

CREATE TABLE lfs_objects (
    repository_id  bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    oid            text NOT NULL CHECK (oid ~ '^[0-9a-f]{64}$'),
    size           bigint NOT NULL CHECK (size >= 0),
    uploaded_at    timestamptz NOT NULL DEFAULT now(),
    referenced_at  timestamptz,
    PRIMARY KEY (repository_id, oid)
);
CREATE INDEX lfs_objects_uploaded ON lfs_objects (uploaded_at);
COMMENT ON TABLE lfs_objects IS 'LFS objects stored in a repository''s folder (lfs/objects/<oid>): the sizes the quotas sum (SANDBOXD_LFS_REPO_QUOTA_MB, SANDBOXD_LFS_ACCOUNT_QUOTA_MB on the owner''s repositories) and what the reaper collects';
COMMENT ON COLUMN lfs_objects.repository_id IS 'the repository that stores it (its row goes with the repository)';
COMMENT ON COLUMN lfs_objects.oid IS 'its SHA-256, 64 lower-case hex digits';
COMMENT ON COLUMN lfs_objects.size IS 'its bytes';
COMMENT ON COLUMN lfs_objects.uploaded_at IS 'when its upload landed (again, for a second upload of the same object)';
COMMENT ON COLUMN lfs_objects.referenced_at IS 'when the reaper last found a pointer to it in a blob some ref of the repository reaches (either namespace); NULL: not yet. Collected once neither this nor uploaded_at is within SANDBOXD_LFS_GRACE';
GRANT SELECT ON lfs_objects TO sandboxd_auditor;
