-- Each destination's health over time: rows per destination and hour
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
-- An hour may have several rows, one per `slot`: a finish writes the slot
-- of its connection (its backend's pid modulo 16), so finishes committing
-- at the same time on other connections do not wait for each other on one
-- row. Readers add an hour's slots up; the Pruner folds the slots of an
-- hour that has ended into slot 0.
--
-- A new table: nothing live is locked or rewritten. Its rows are updated
-- many times an hour, never in an indexed column, so a page is left half
-- free for those updates to stay on it (HOT).
CREATE TABLE destination_stats (
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    hour           TIMESTAMPTZ NOT NULL,
    slot           SMALLINT NOT NULL DEFAULT 0 CHECK (slot BETWEEN 0 AND 15),
    succeeded      INTEGER NOT NULL DEFAULT 0 CHECK (succeeded >= 0),
    transport      INTEGER NOT NULL DEFAULT 0 CHECK (transport >= 0),
    timeout        INTEGER NOT NULL DEFAULT 0 CHECK (timeout >= 0),
    client_error   INTEGER NOT NULL DEFAULT 0 CHECK (client_error >= 0),
    rate_limited   INTEGER NOT NULL DEFAULT 0 CHECK (rate_limited >= 0),
    server_error   INTEGER NOT NULL DEFAULT 0 CHECK (server_error >= 0),
    other_status   INTEGER NOT NULL DEFAULT 0 CHECK (other_status >= 0),
    latency        INTEGER[] NOT NULL CHECK (cardinality(latency) = 54),
    lateness       INTEGER[] NOT NULL CHECK (cardinality(lateness) = 54),
    PRIMARY KEY (destination_id, hour, slot)
) WITH (fillfactor = 50);

-- A histogram's counts with one more in each of `buckets` (numbered from
-- 0, as `width_bucket` numbers them; a bucket may repeat); no counts yet
-- is all zeros. A loop over the few buckets of a batch costs far less
-- than building the whole array again in SQL.
CREATE FUNCTION destination_stats_add(counts INTEGER[], buckets INTEGER[])
RETURNS INTEGER[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    b INTEGER;
BEGIN
    counts := coalesce(counts, array_fill(0, ARRAY[54]));
    IF buckets IS NOT NULL THEN
        FOREACH b IN ARRAY buckets LOOP
            counts[b + 1] := counts[b + 1] + 1;
        END LOOP;
    END IF;
    RETURN counts;
END
$$;

-- Two histograms' counts added bucket by bucket; NULL is none.
CREATE FUNCTION destination_stats_merge(a INTEGER[], b INTEGER[])
RETURNS INTEGER[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF a IS NULL THEN
        RETURN b;
    END IF;
    IF b IS NULL THEN
        RETURN a;
    END IF;
    FOR i IN 1 .. cardinality(a) LOOP
        a[i] := a[i] + b[i];
    END LOOP;
    RETURN a;
END
$$;

-- The sum of many rows' histograms (the Pruner folding an hour's slots).
CREATE AGGREGATE destination_stats_sum(INTEGER[]) (
    SFUNC = destination_stats_merge,
    STYPE = INTEGER[]
);
