-- Tokens for the HTTP API, each limited to a scope and, optionally, to
-- tenants. One table for the database, not per region: a token works on
-- every region's process that shares the database. Only the SHA-256 of a
-- token is kept (`secret_hash`); every request looks its token up by it.
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    secret_hash BYTEA NOT NULL UNIQUE CHECK (octet_length(secret_hash) = 32),
    name TEXT,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'schedule', 'admin')),
    -- NULL: every tenant. Never empty, and never on an admin token.
    tenants TEXT[] CHECK (tenants IS NULL OR cardinality(tenants) > 0),
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ,
    CHECK (scope <> 'admin' OR tenants IS NULL)
);
