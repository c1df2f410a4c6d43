-- 021_docker_engines: the Docker engines sandboxes run on (SPEC §8 "Several hosts"), each
-- sandbox's engine, and the room each has. A create places its sandbox here, under one
-- transaction-level advisory lock (engine.h), so that creates on every worker and host
-- agree and no engine goes past its max_sandboxes.

CREATE TABLE docker_engines (
    name          text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
    url           text NOT NULL CHECK (url ~ '^(unix:///|tcp://|https://)' AND length(url) <= 512),
    ca_file       text,
    cert_file     text,
    key_file      text,
    max_sandboxes integer NOT NULL CHECK (max_sandboxes >= 0),
    state         text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'draining')),
    added_at      timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz,
    down_since    timestamptz,
    last_error    text,
    CHECK ((ca_file IS NULL) = (cert_file IS NULL) AND (cert_file IS NULL) = (key_file IS NULL)),
    CHECK (url !~ '^https://' OR ca_file IS NOT NULL)
);
COMMENT ON TABLE docker_engines IS 'the Docker engines sandboxes run on: the host''s own, registered at start (SANDBOXD_ENGINE_NAME, SANDBOXD_DOCKER_HOST), those of SANDBOXD_DOCKER_HOSTS, and those added with sandboxctl engine add';
COMMENT ON COLUMN docker_engines.name IS 'how sandboxes, the warm pool (warm_containers.instance) and metrics name it';
COMMENT ON COLUMN docker_engines.url IS 'its Engine API: unix:///path, tcp://host:port or https://host:port';
COMMENT ON COLUMN docker_engines.ca_file IS 'with cert_file and key_file: files that sandboxd reads for mutual TLS to the engine (paths, never the keys)';
COMMENT ON COLUMN docker_engines.cert_file IS 'the client certificate sandboxd shows the engine';
COMMENT ON COLUMN docker_engines.key_file IS 'the client certificate''s key file';
COMMENT ON COLUMN docker_engines.max_sandboxes IS 'how many containers (live sandboxes plus warm ones) it may run; 0 takes none';
COMMENT ON COLUMN docker_engines.state IS 'active: takes new sandboxes; draining: takes none, its sandboxes live on';
COMMENT ON COLUMN docker_engines.added_at IS 'when it was registered';
COMMENT ON COLUMN docker_engines.last_seen_at IS 'when the reaper last had an answer from it';
COMMENT ON COLUMN docker_engines.down_since IS 'since when it has not answered the reaper (NULL: it answers); past SANDBOXD_ENGINE_GRACE its sandboxes are failed';
COMMENT ON COLUMN docker_engines.last_error IS 'what the last call that failed said';

ALTER TABLE sandboxes ADD COLUMN engine text REFERENCES docker_engines (name) ON DELETE SET NULL;
COMMENT ON COLUMN sandboxes.engine IS 'the Docker engine its container runs on (docker_engines.name); NULL for a sandbox made before 021 (on the host''s own engine) or one that had ended when its engine was removed';
CREATE INDEX sandboxes_live_by_engine ON sandboxes (engine) WHERE state IN ('starting', 'ready');
-- For the engine's removal (ON DELETE SET NULL looks for every row that names it).
CREATE INDEX sandboxes_engine ON sandboxes (engine) WHERE engine IS NOT NULL;

-- Each engine's use: live sandboxes and live warm containers against its maximum.
CREATE VIEW engine_room AS
SELECT e.name, e.state, e.down_since IS NULL AS healthy, e.max_sandboxes,
       (SELECT count(*) FROM sandboxes s
         WHERE s.engine = e.name AND s.state IN ('starting', 'ready')) AS sandboxes,
       (SELECT count(*) FROM warm_containers w
         WHERE w.instance = e.name AND w.state IN ('starting', 'ready')) AS pooled,
       e.last_seen_at, e.down_since, e.last_error, e.url
  FROM docker_engines e;
COMMENT ON COLUMN engine_room.name IS 'the engine (docker_engines.name)';
COMMENT ON COLUMN engine_room.state IS 'active or draining';
COMMENT ON COLUMN engine_room.healthy IS 'it answered the reaper''s last ping (down_since is NULL)';
COMMENT ON COLUMN engine_room.max_sandboxes IS 'how many containers it may run';
COMMENT ON COLUMN engine_room.sandboxes IS 'its live sandboxes (starting or ready)';
COMMENT ON COLUMN engine_room.pooled IS 'its live warm containers (starting or ready)';
COMMENT ON COLUMN engine_room.last_seen_at IS 'when the reaper last had an answer from it';
COMMENT ON COLUMN engine_room.down_since IS 'since when it has not answered (NULL: it answers)';
COMMENT ON COLUMN engine_room.last_error IS 'what the last call that failed said';
COMMENT ON COLUMN engine_room.url IS 'its Engine API';
COMMENT ON VIEW engine_room IS 'each engine''s load: live sandboxes and warm containers against max_sandboxes (free room = max_sandboxes - sandboxes - pooled)';

GRANT SELECT ON docker_engines, engine_room TO sandboxd_auditor;
GRANT SELECT (engine) ON sandboxes TO sandboxd_auditor;
