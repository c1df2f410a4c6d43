-- 026_sandbox_home: the home of the user a sandbox's container runs as, decided when its
-- container was made (root inside when the engine keeps it from the host's, else the
-- fallback user: boxuser.h) and never changed: every exec's HOME. Kept with the row so that
-- an exec needs no question to the engine (GET /info, 10 to 20 ms, asked again by each
-- worker every 30 s) and stays right for the sandbox after the engine changed its mode.

ALTER TABLE sandboxes ADD COLUMN home text CHECK (home IN ('/root', '/home/sandbox'));
ALTER TABLE warm_containers ADD COLUMN home text CHECK (home IN ('/root', '/home/sandbox'));
COMMENT ON COLUMN sandboxes.home IS 'HOME of its container''s user, decided when the container was made (/root: root inside, kept from the host''s; /home/sandbox: the fallback user); NULL before 026';
COMMENT ON COLUMN warm_containers.home IS 'HOME of its container''s user, decided when it was made; the claim copies it to the sandbox''s row';
-- The auditor reads every column of sandboxes but the secrets (007): this one, and 024's
-- address, which 024 did not grant.
GRANT SELECT (home, agent_ip) ON sandboxes TO sandboxd_auditor;
