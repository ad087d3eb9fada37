-- Each destination's health over time: one row per destination and hour
-- (UTC, on the hour) in which a finish counted an attempt, kept by the
-- finish statement in the same transaction as the attempts it counts
-- (`store/postgres/finish_many`; the rule is `domain/destination_hour`).
--
-- The classes count the attempts that ended in an exchange: a 2xx
-- (`succeeded`), a transport error that is not a timeout (`transport`),
-- a timeout, a 4xx other than 429 (`client_error`), a 429
-- (`rate_limited`), a 5xx (`server_error`), any other status
-- (`other_status`); their sum is the hour's attempts. `latency` and
-- `lateness` are histograms of 54 fixed log-scale buckets (the counts of
-- durations under 1 ms, then 52 buckets of a factor √2 each from 1 ms,
-- then 18.6 hours or more): the send latency of every counted attempt,
-- and the lateness of each first attempt against its task's `not_before`.
-- Rows of an hour merge by adding counts, so percentiles are read off at
-- query time.
--
-- A new table: nothing live is locked or rewritten. Its rows are updated
-- many times an hour, never in an indexed column, so a page is left half
-- free for those updates to stay on it (HOT).
CREATE TABLE destination_stats (
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    hour           TIMESTAMPTZ NOT NULL,
    succeeded      INTEGER NOT NULL DEFAULT 0 CHECK (succeeded >= 0),
    transport      INTEGER NOT NULL DEFAULT 0 CHECK (transport >= 0),
    timeout        INTEGER NOT NULL DEFAULT 0 CHECK (timeout >= 0),
    client_error   INTEGER NOT NULL DEFAULT 0 CHECK (client_error >= 0),
    rate_limited   INTEGER NOT NULL DEFAULT 0 CHECK (rate_limited >= 0),
    server_error   INTEGER NOT NULL DEFAULT 0 CHECK (server_error >= 0),
    other_status   INTEGER NOT NULL DEFAULT 0 CHECK (other_status >= 0),
    latency        INTEGER[] NOT NULL CHECK (cardinality(latency) = 54),
    lateness       INTEGER[] NOT NULL CHECK (cardinality(lateness) = 54),
    PRIMARY KEY (destination_id, hour)
) WITH (fillfactor = 50);
