-- Tokens for the HTTP API (see the PostgreSQL migration of the same name).
-- Times are microseconds since the epoch; `tenants` is a JSON array of
-- strings, or NULL for every tenant.
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY NOT NULL,
    secret_hash BLOB NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    name TEXT,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'schedule', 'admin')),
    tenants TEXT CHECK (tenants IS NULL OR json_array_length(tenants) > 0),
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER,
    CHECK (scope <> 'admin' OR tenants IS NULL)
);
