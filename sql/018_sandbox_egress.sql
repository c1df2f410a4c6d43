-- 018_sandbox_egress: the egress each sandbox was created with (SPEC §4 "Limits": none, web
-- or open, never wider than the deployment's) and the Docker network that gives it, which
-- everything that reaches the sandbox by its address (the agent, previews) asks the engine
-- about. The network is kept, not derived again: a deployment whose SANDBOXD_EGRESS changed
-- still reaches the sandboxes made before.

ALTER TABLE sandboxes ADD COLUMN egress text CHECK (egress IN ('none', 'web', 'open'));
COMMENT ON COLUMN sandboxes.egress IS 'its egress mode (none, web, open) as created; NULL for sandboxes made before 018';
ALTER TABLE sandboxes ADD COLUMN network text;
COMMENT ON COLUMN sandboxes.network IS 'the Docker network its container joined (SANDBOXD_SANDBOX_NETWORK, or <it>-web, <it>-none for a narrower egress); NULL before 018: SANDBOXD_SANDBOX_NETWORK';
GRANT SELECT (egress, network) ON sandboxes TO sandboxd_auditor;
