-- 010_previews: a sandbox's HTTP server reachable from a browser (SPEC.md §4 "Previews").
-- nginx asks sandboxd about every request to <id>.<SANDBOXD_PREVIEW_DOMAIN> (auth_request)
-- and proxies it to addr:port; a preview lives until expires_at, its deletion (the row
-- goes) or the end of its sandbox (the check joins sandboxes and wants state ready).

CREATE TABLE previews (
    id          text PRIMARY KEY CHECK (id ~ '^[a-z2-7]{26}$'),
    sandbox_id  text NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
    account_id  bigint NOT NULL REFERENCES accounts (id),
    port        integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
    addr        inet NOT NULL CHECK (family(addr) = 4),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX previews_sandbox ON previews (sandbox_id, created_at);
COMMENT ON TABLE previews IS 'previews: URLs that nginx proxies to a port of a sandbox, authorised by sandboxd; the id is the capability (not readable by sandboxd_auditor)';
COMMENT ON COLUMN previews.id IS '26 random lower-case base32 characters: the first label of the preview''s host name';
COMMENT ON COLUMN previews.sandbox_id IS 'the sandbox whose port is proxied to';
COMMENT ON COLUMN previews.account_id IS 'who made it';
COMMENT ON COLUMN previews.port IS 'the port in the sandbox, 1..65535';
COMMENT ON COLUMN previews.addr IS 'the sandbox''s address on the sandbox network, as the engine reported it when the preview was made (never from a client)';
COMMENT ON COLUMN previews.created_at IS 'when it was made';
COMMENT ON COLUMN previews.expires_at IS 'when it stops answering (created_at + ttl)';
