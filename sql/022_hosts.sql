-- 022_hosts: several sandboxd hosts on one database (SPEC §8 "Several hosts"). Each engine
-- may belong to one host: only that host calls it (its Docker, its bridge, its sandboxes'
-- git listener and agents are there), and a request on one of its sandboxes that reaches
-- another host is relayed by that host's nginx to the owner's relay listener. A host is
-- named by its relay URL (SANDBOXD_RELAY_URL); it is alive while its reaper renews the
-- lease 'reaper@<relay url>' (app/daemon/reaper.c).

ALTER TABLE docker_engines ADD COLUMN relay_url text
    CHECK (relay_url ~ '^https?://[^/?#[:space:]]+$' AND length(relay_url) <= 80);
COMMENT ON COLUMN docker_engines.relay_url IS 'the sandboxd host that owns it (that host''s SANDBOXD_RELAY_URL, where its nginx takes relayed requests): only that host calls the engine, others relay its sandboxes'' requests there; NULL: any host may call it (one host, or an engine every host reaches)';
COMMENT ON COLUMN leases.name IS 'what the lease is for: reaper (the work of the whole cluster, one reaper at a time), or reaper@<relay url> (one host''s work on its own engines; a host whose lease has lapsed is down)';

-- The same columns as 021's, in the same order, and the owner host's.
CREATE OR REPLACE VIEW engine_room AS
SELECT e.name, e.state, e.down_since IS NULL AS healthy, e.max_sandboxes,
       (SELECT count(*) FROM sandboxes s
         WHERE s.engine = e.name AND s.state IN ('starting', 'ready')) AS sandboxes,
       (SELECT count(*) FROM warm_containers w
         WHERE w.instance = e.name AND w.state IN ('starting', 'ready')) AS pooled,
       e.last_seen_at, e.down_since, e.last_error, e.url,
       e.relay_url,
       e.relay_url IS NULL OR EXISTS (SELECT 1 FROM leases l
                                       WHERE l.name = 'reaper@' || e.relay_url
                                         AND l.expires_at > now()) AS host_up
  FROM docker_engines e;
COMMENT ON COLUMN engine_room.relay_url IS 'the sandboxd host that owns it (docker_engines.relay_url); NULL: any host';
COMMENT ON COLUMN engine_room.host_up IS 'its owner host''s reaper holds its lease (reaper@<relay url>), or it has no owner: new sandboxes go only to engines whose host is up';
