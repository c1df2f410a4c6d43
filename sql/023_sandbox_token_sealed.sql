-- 023_sandbox_token_sealed: the sandbox's own token, sealed with the secrets key, so that any
-- worker (on any host) knows what to mask in the sandbox's output without asking the sandbox
-- for it. Tokens stay hashed in `tokens`; this copy is AES-256-GCM under SANDBOXD_SECRETS_KEY_FILE
-- (as sandbox secrets are), bound to the sandbox's id, and cleared when the sandbox ends.

ALTER TABLE sandboxes ADD COLUMN token_sealed text CHECK (length(token_sealed) <= 400);
COMMENT ON COLUMN sandboxes.token_sealed IS 'the sandbox''s dst_ token sealed with the secrets key (hex of AES-256-GCM, bound to the sandbox''s id), for masking its output; NULL without a secrets key, for a sandbox made before 023, and once it ended';
