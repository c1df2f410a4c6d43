-- 009_forge: the everyday routes of a forge (issue 17). A renamed repository keeps its
-- old names, which answer 301 for REST and git; a deleted repository's sandboxes keep
-- their rows (closed, their tokens revoked) without it.

CREATE TABLE repo_redirects (
    owner_id       bigint NOT NULL REFERENCES accounts (id),
    name           text NOT NULL,
    repository_id  bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX repo_redirects_owner_name ON repo_redirects (owner_id, lower(name));
CREATE INDEX repo_redirects_repository ON repo_redirects (repository_id);
COMMENT ON TABLE repo_redirects IS 'old names of renamed repositories: requests for owner/name answer 301 to the repository''s current name';
COMMENT ON COLUMN repo_redirects.owner_id IS 'the owner whose name space the old name is in (a rename never changes the owner)';
COMMENT ON COLUMN repo_redirects.name IS 'the old name, unique per owner case-insensitively; a new repository or a rename to it takes the name back';
COMMENT ON COLUMN repo_redirects.repository_id IS 'where the name leads now; deleting the repository deletes its old names';
COMMENT ON COLUMN repo_redirects.created_at IS 'when the repository left this name';
GRANT SELECT ON repo_redirects TO sandboxd_auditor;

ALTER TABLE sandboxes ALTER COLUMN repository_id DROP NOT NULL;
ALTER TABLE sandboxes DROP CONSTRAINT sandboxes_repository_id_fkey;
ALTER TABLE sandboxes ADD CONSTRAINT sandboxes_repository_id_fkey
    FOREIGN KEY (repository_id) REFERENCES repositories (id) ON DELETE SET NULL;
COMMENT ON COLUMN sandboxes.repository_id IS 'the repository cloned at /workspace/repo; NULL once the repository was deleted (the sandbox was closed then)';
