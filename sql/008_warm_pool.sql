-- 008_warm_pool: containers started ahead of any create (issue 13), with no repository
-- and no credential in them. A row exists before its container (the container carries
-- the label sandboxd.sandbox=pool:<id>, which cannot change later); a create claims one
-- atomically and it never comes back.

CREATE TABLE warm_containers (
    id            text PRIMARY KEY CHECK (id ~ '^wc_[0-9a-f]{24}$'),
    instance      text NOT NULL,
    image         text NOT NULL,
    state         text NOT NULL DEFAULT 'starting'
                  CHECK (state IN ('starting', 'ready', 'claimed', 'failed')),
    container_id  text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    claimed_by    text REFERENCES sandboxes (id),
    claimed_at    timestamptz,
    ended_at      timestamptz,
    end_reason    text
);
CREATE INDEX warm_containers_ready ON warm_containers (instance, image, created_at) WHERE state = 'ready';
CREATE INDEX warm_containers_live ON warm_containers (state) WHERE state IN ('starting', 'ready');
COMMENT ON TABLE warm_containers IS 'the warm pool: containers started ahead, claimed by creates';
COMMENT ON COLUMN warm_containers.id IS 'wc_ and 24 hex digits; the container label sandboxd.sandbox=pool:<id>';
COMMENT ON COLUMN warm_containers.instance IS 'the engine it runs on (SANDBOXD_INSTANCE, its containers'' sandboxd.instance label): a create takes one of its own engine only';
COMMENT ON COLUMN warm_containers.image IS 'the image it runs: a create takes one of its own image only';
COMMENT ON COLUMN warm_containers.state IS 'starting, ready (may be claimed), claimed (a sandbox''s now), failed';
COMMENT ON COLUMN warm_containers.container_id IS 'Docker container id, once created';
COMMENT ON COLUMN warm_containers.claimed_by IS 'the sandbox that took it';
COMMENT ON COLUMN warm_containers.end_reason IS 'why it failed: start timed out, container gone, …';
COMMENT ON COLUMN warm_containers.created_at IS 'when the row (and then its container) was made';
COMMENT ON COLUMN warm_containers.claimed_at IS 'when a create took it';
COMMENT ON COLUMN warm_containers.ended_at IS 'when it failed';
