-- 002_git: keys for git URL tokens (JWT, ES256).

CREATE TABLE signing_keys (
    kid          text PRIMARY KEY,
    private_pem  text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    retired_at   timestamptz
);
COMMENT ON TABLE signing_keys IS 'the service''s own P-256 keys that sign git URLs it mints; the newest unretired one signs';
COMMENT ON COLUMN signing_keys.kid IS 'RFC 7638 thumbprint of the public key, the JWT header''s kid';
COMMENT ON COLUMN signing_keys.private_pem IS 'PKCS#8 PEM; secret: only the service reads it';
COMMENT ON COLUMN signing_keys.retired_at IS 'no longer signs; still verifies until its tokens have expired';

CREATE TABLE account_keys (
    kid         text PRIMARY KEY,
    account_id  bigint NOT NULL REFERENCES accounts (id),
    public_pem  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX account_keys_account ON account_keys (account_id);
COMMENT ON TABLE account_keys IS 'public P-256 keys registered by owners: JWTs they sign act as them on their repositories';
COMMENT ON COLUMN account_keys.kid IS 'RFC 7638 thumbprint of the key';
