-- 013_idle_timeout: a sandbox's own idle limit (PATCH …/sandboxes/{id}
-- {idle_timeout_seconds}, SPEC §4 "Keep-alive and lifetime"); NULL: the service's
-- setting (SANDBOXD_IDLE_TIMEOUT) at each call.

ALTER TABLE sandboxes ADD COLUMN idle_timeout_seconds integer
    CHECK (idle_timeout_seconds BETWEEN 60 AND 86400);
COMMENT ON COLUMN sandboxes.idle_timeout_seconds IS 'seconds without a call before the reaper stops it, as its creator set them; NULL: the service''s setting';
GRANT SELECT (idle_timeout_seconds) ON sandboxes TO sandboxd_auditor;
