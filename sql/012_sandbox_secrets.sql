-- 012_sandbox_secrets: per-repository secrets that sandboxes ask for by name (issue 16,
-- SPEC §4 "Secrets"). Values are sealed by the service (AES-256-GCM with the key of
-- SANDBOXD_SECRETS_KEY_FILE, bound to their repository and name) before they reach the
-- database: the table holds ciphertext only, and the auditor role cannot read even that.

CREATE TABLE sandbox_secrets (
    repository_id  bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name           text NOT NULL CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]*$' AND length(name) <= 128),
    value_enc      bytea NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repository_id, name)
);
COMMENT ON TABLE sandbox_secrets IS 'secrets of a repository''s sandboxes, sealed: values never in clear here';
COMMENT ON COLUMN sandbox_secrets.repository_id IS 'the repository whose sandboxes may ask for it';
COMMENT ON COLUMN sandbox_secrets.name IS 'the environment variable it becomes in the execs of sandboxes that ask for it';
COMMENT ON COLUMN sandbox_secrets.value_enc IS 'version 1 | 12-byte nonce | 16-byte GCM tag | ciphertext; associated data: the repository id and the name';
COMMENT ON COLUMN sandbox_secrets.created_at IS 'when it was first set';
COMMENT ON COLUMN sandbox_secrets.updated_at IS 'when its value last changed';
GRANT SELECT (repository_id, name, created_at, updated_at) ON sandbox_secrets TO sandboxd_auditor;

ALTER TABLE sandboxes ADD COLUMN secrets text[] NOT NULL DEFAULT '{}';
COMMENT ON COLUMN sandboxes.secrets IS 'the names of the repository''s secrets its execs get (asked for at create)';
GRANT SELECT (secrets) ON sandboxes TO sandboxd_auditor;
