-- 006_tokens_access: one kid names one key of one holder, and the lookups that ending a
-- sandbox's token and revoking a job token make (issue 11).

-- An account that registered the service's own public key before this check existed holds
-- nothing it could sign with; its row made the service's tokens ambiguous: revoke it.
UPDATE account_keys SET revoked_at = coalesce(revoked_at, now())
 WHERE kid IN (SELECT kid FROM signing_keys);

-- A kid held by the service (signing_keys) and by an account (account_keys) would make
-- every token it signed ambiguous: the verifier finds two keys and refuses them all. The
-- primary keys keep each table unique; this keeps the two apart.
CREATE FUNCTION keys_one_holder() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_TABLE_NAME = 'account_keys' AND EXISTS (SELECT 1 FROM signing_keys WHERE kid = NEW.kid))
       OR (TG_TABLE_NAME = 'signing_keys' AND EXISTS (SELECT 1 FROM account_keys WHERE kid = NEW.kid)) THEN
        RAISE EXCEPTION 'key % is already registered', NEW.kid USING ERRCODE = 'unique_violation';
    END IF;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION keys_one_holder() IS 'refuses a kid that the other key table already holds: one kid, one key, one holder';
CREATE TRIGGER account_keys_one_holder BEFORE INSERT OR UPDATE OF kid ON account_keys
    FOR EACH ROW EXECUTE FUNCTION keys_one_holder();
CREATE TRIGGER signing_keys_one_holder BEFORE INSERT OR UPDATE OF kid ON signing_keys
    FOR EACH ROW EXECUTE FUNCTION keys_one_holder();

CREATE INDEX tokens_sandbox ON tokens (sandbox_id) WHERE sandbox_id IS NOT NULL;
CREATE INDEX tokens_job_repository ON tokens (repository_id) WHERE kind = 'job';

COMMENT ON COLUMN tokens.revoked_at IS 'set once, never cleared: a sandbox token revoked because its creator lost access (or its account was disabled) stays revoked when the access comes back';
COMMENT ON COLUMN sandboxes.end_reason IS 'closed, idle, container gone, start timed out, the creator lost access, …';
