-- Each destination's health over time, one row per destination and hour
-- (see the PostgreSQL migration of the same name). `hour` is microseconds
-- since the epoch, on the hour; `latency` and `lateness` are the 54
-- bucket counts of their histograms, each a 4-byte little-endian unsigned
-- integer.
CREATE TABLE destination_stats (
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    hour INTEGER NOT NULL,
    succeeded INTEGER NOT NULL DEFAULT 0,
    transport INTEGER NOT NULL DEFAULT 0,
    timeout INTEGER NOT NULL DEFAULT 0,
    client_error INTEGER NOT NULL DEFAULT 0,
    rate_limited INTEGER NOT NULL DEFAULT 0,
    server_error INTEGER NOT NULL DEFAULT 0,
    other_status INTEGER NOT NULL DEFAULT 0,
    latency BLOB NOT NULL CHECK (length(latency) = 216),
    lateness BLOB NOT NULL CHECK (length(lateness) = 216),
    PRIMARY KEY (destination_id, hour)
);
