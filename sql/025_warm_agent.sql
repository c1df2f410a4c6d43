-- 025_warm_agent: a warm container's agent runs before any claim, with a key of its own that
-- the pool put beside it (never in its environment); the claim moves the key to the sandbox
-- (sandboxes.agent_key) and sends the clone's parameters through the agent, instead of an
-- archive call and an inspect on the create's path. The address is the engine's, read at the
-- container's start, as sandboxes.agent_ip (024).

ALTER TABLE warm_containers
    ADD COLUMN agent_key text CHECK (agent_key ~ '^[0-9a-f]{64}$'),
    ADD COLUMN agent_ip inet;
COMMENT ON COLUMN warm_containers.agent_key IS 'the key its agent was started with (hex of 32 random bytes); moved to the sandbox''s row at the claim (NULL after it), NULL for a container started before 025';
COMMENT ON COLUMN warm_containers.agent_ip IS 'its address on its network as the engine reported it at the start (its agent listens there)';
