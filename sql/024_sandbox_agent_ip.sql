-- 024_sandbox_agent_ip: where a sandbox's agent listens, written once when its container
-- runs (Docker's inspect at the start, never what the container says): a worker that meets
-- the sandbox for the first time connects at once instead of asking the engine (a Docker
-- inspect on every first call). A container keeps its address while it lives; an address
-- reused by a later container answers with another key, which the agent's handshake refuses.

ALTER TABLE sandboxes ADD COLUMN agent_ip inet;
COMMENT ON COLUMN sandboxes.agent_ip IS 'its container''s IPv4 address on its network as the engine reported it at the start (the agent listens there); NULL for a sandbox made before 024 or whose address was not known at the start';
