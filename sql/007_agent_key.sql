-- 007_agent_key: each sandbox's agent key (README "The agent"): 32 random bytes as 64 hex
-- digits, the HMAC key of the agent's mutual challenge-response. Any worker on any host
-- reads it to reach the agent; it is cleared when the sandbox ends (its container is gone).
-- NULL: a sandbox made before the agent (its execs go through Docker exec).
ALTER TABLE sandboxes ADD COLUMN agent_key text
    CHECK (agent_key IS NULL OR agent_key ~ '^[0-9a-f]{64}$');
COMMENT ON COLUMN sandboxes.agent_key IS 'the key of the sandbox''s agent (64 hex digits), NULL once ended or made before the agent; not readable by sandboxd_auditor';

-- The auditor reads sandboxes (004) but not the keys: its SELECT becomes one on every other
-- column (a later migration that adds a column grants it the same way).
REVOKE SELECT ON sandboxes FROM sandboxd_auditor;
DO $$
BEGIN
    EXECUTE (SELECT 'GRANT SELECT (' || string_agg(quote_ident(column_name), ', ') ||
                    ') ON sandboxes TO sandboxd_auditor'
               FROM information_schema.columns
              WHERE table_schema = current_schema() AND table_name = 'sandboxes'
                AND column_name <> 'agent_key');
END $$;
