-- 001_init: accounts, tokens, repositories, collaborators and the audit log.
-- Names are text with CHECK constraints (not enums) so that a DBA reads them as they are.

CREATE FUNCTION rfc3339(t timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE STRICT
AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') $$;
COMMENT ON FUNCTION rfc3339(timestamptz) IS 'RFC 3339 text in UTC, as the API shows times';

CREATE TABLE accounts (
    id          bigserial PRIMARY KEY,
    login       text NOT NULL CHECK (login ~ '^[A-Za-z0-9](-?[A-Za-z0-9])*$' AND length(login) <= 39),
    kind        text NOT NULL DEFAULT 'user' CHECK (kind IN ('user', 'agent')),
    site_admin  boolean NOT NULL DEFAULT false,
    disabled    boolean NOT NULL DEFAULT false,
    name        text CHECK (length(name) <= 255),
    email       text CHECK (length(email) <= 255),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_login ON accounts (lower(login));
COMMENT ON TABLE accounts IS 'people (user) and bots (agent) that call the service';
COMMENT ON COLUMN accounts.login IS 'unique name, case-insensitively; also the owner part of repository paths';
COMMENT ON COLUMN accounts.kind IS 'user or agent; agents may never update a default branch';
COMMENT ON COLUMN accounts.site_admin IS 'admin on every repository and on /admin routes';
COMMENT ON COLUMN accounts.disabled IS 'a disabled account''s tokens fail at once';

CREATE TABLE repositories (
    id              bigserial PRIMARY KEY,
    owner_id        bigint NOT NULL REFERENCES accounts (id),
    name            text NOT NULL CHECK (name ~ '^[A-Za-z0-9_][A-Za-z0-9._-]*$' AND length(name) <= 100
                                         AND name !~* '\.git$'),
    visibility      text NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private')),
    default_branch  text NOT NULL DEFAULT 'main',
    archived        boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX repositories_owner_name ON repositories (owner_id, lower(name));
COMMENT ON TABLE repositories IS 'hosted bare repositories, on disk at SANDBOXD_REPOS_DIR/<owner login>/<name>.git';
COMMENT ON COLUMN repositories.visibility IS 'public: anyone may read; private: only collaborators';
COMMENT ON COLUMN repositories.archived IS 'read-only for everyone: no writes, no pushes, no sandboxes';

CREATE TABLE collaborators (
    repository_id  bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    account_id     bigint NOT NULL REFERENCES accounts (id),
    role           text NOT NULL CHECK (role IN ('read', 'write', 'admin')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repository_id, account_id)
);
CREATE INDEX collaborators_account ON collaborators (account_id);
COMMENT ON TABLE collaborators IS 'roles on a repository besides its owner (always admin) and site admins';

CREATE TABLE tokens (
    id             bigserial PRIMARY KEY,
    account_id     bigint NOT NULL REFERENCES accounts (id),
    kind           text NOT NULL CHECK (kind IN ('personal', 'job', 'sandbox')),
    scope          text NOT NULL CHECK (scope IN ('read', 'write')),
    repository_id  bigint REFERENCES repositories (id) ON DELETE CASCADE,
    hash           text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
    note           text CHECK (length(note) <= 200),
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz,
    revoked_at     timestamptz,
    last_used_at   timestamptz,
    CHECK (kind <> 'job' OR repository_id IS NOT NULL)
);
CREATE INDEX tokens_account ON tokens (account_id);
COMMENT ON TABLE tokens IS 'opaque credentials; only the SHA-256 of each token is kept';
COMMENT ON COLUMN tokens.account_id IS 'the account the token acts as (for job tokens: the admin who made it)';
COMMENT ON COLUMN tokens.kind IS 'personal (dfy_), job (djt_, one repository) or sandbox (dst_, one sandbox)';
COMMENT ON COLUMN tokens.scope IS 'read or write; write includes read';
COMMENT ON COLUMN tokens.repository_id IS 'job tokens: the only repository they may touch';
COMMENT ON COLUMN tokens.hash IS 'hex SHA-256 of the whole token';
COMMENT ON COLUMN tokens.last_used_at IS 'updated at most once a minute';

CREATE TABLE audit_log (
    id           bigserial PRIMARY KEY,
    at           timestamptz NOT NULL DEFAULT now(),
    action       text NOT NULL,
    status       integer NOT NULL,
    account_id   bigint,
    login        text,
    token_id     bigint,
    token_kind   text,
    repository   text,
    sandbox_id   text,
    request_id   text,
    remote_addr  text,
    via          text NOT NULL DEFAULT 'rest',
    duration_ms  integer,
    details      jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_account_at ON audit_log (account_id, at);
CREATE INDEX audit_log_repository_at ON audit_log (repository, at);
CREATE INDEX audit_log_request_id ON audit_log (request_id);
COMMENT ON TABLE audit_log IS 'one row per request, git ref update, sandbox event and denial; append-only';
COMMENT ON COLUMN audit_log.action IS 'dotted verb, e.g. repo.create, auth.denied';
COMMENT ON COLUMN audit_log.status IS 'HTTP status of the request';
COMMENT ON COLUMN audit_log.login IS 'the actor''s login at the time';
COMMENT ON COLUMN audit_log.repository IS 'owner/name at the time';
COMMENT ON COLUMN audit_log.via IS 'rest, mcp, git or reaper';
COMMENT ON COLUMN audit_log.details IS 'method, path and what the action changed; never a secret';
