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
-- `lateness` are histograms over 54 fixed log-scale buckets (numbered
-- from 0: durations under 1 ms, then 52 buckets of a factor √2 each from
-- 1 ms, then 18.6 hours or more): the send latency of every counted
-- attempt, and the lateness of each first attempt against its task's
-- `not_before`. Each holds only its buckets that are not empty, in order,
-- each as `bucket << 32 | count`: an hour's attempts fall in a few
-- buckets, and each finish writes the row again, so a short row is less
-- to write. Rows of an hour merge by adding counts, so percentiles are
-- read off at query time.
--
-- An hour may have several rows, one per `slot`: a finish writes the slot
-- of its connection (its backend's pid modulo 16), so finishes committing
-- at the same time on other connections do not wait for each other on one
-- row. Readers add an hour's slots up; the Pruner folds the slots of an
-- hour that has ended into slot 0.
--
-- No foreign key to `destinations`: checking one would lock the
-- destination's row (FOR KEY SHARE, itself a write) at every hour's first
-- finish. The Pruner deletes the hours of a destination that no longer
-- exists.
--
-- A new table: nothing live is locked or rewritten. Its rows are updated
-- many times an hour, never in an indexed column, so a page is left half
-- free for those updates to stay on it (HOT).
CREATE TABLE destination_stats (
    destination_id TEXT NOT NULL,
    hour           TIMESTAMPTZ NOT NULL,
    slot           SMALLINT NOT NULL DEFAULT 0 CHECK (slot BETWEEN 0 AND 15),
    succeeded      INTEGER NOT NULL DEFAULT 0 CHECK (succeeded >= 0),
    transport      INTEGER NOT NULL DEFAULT 0 CHECK (transport >= 0),
    timeout        INTEGER NOT NULL DEFAULT 0 CHECK (timeout >= 0),
    client_error   INTEGER NOT NULL DEFAULT 0 CHECK (client_error >= 0),
    rate_limited   INTEGER NOT NULL DEFAULT 0 CHECK (rate_limited >= 0),
    server_error   INTEGER NOT NULL DEFAULT 0 CHECK (server_error >= 0),
    other_status   INTEGER NOT NULL DEFAULT 0 CHECK (other_status >= 0),
    latency        BIGINT[] NOT NULL DEFAULT '{}' CHECK (cardinality(latency) <= 54),
    lateness       BIGINT[] NOT NULL DEFAULT '{}' CHECK (cardinality(lateness) <= 54),
    PRIMARY KEY (destination_id, hour, slot)
) WITH (fillfactor = 50);

-- `counts` (a histogram as the table holds it; NULL is empty) with one
-- more in each of `buckets` (numbered from 0, as `width_bucket` numbers
-- them; a bucket may repeat). A loop over the few buckets of a batch.
CREATE FUNCTION destination_stats_add(counts BIGINT[], buckets INTEGER[])
RETURNS BIGINT[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    b INTEGER;
    i INTEGER;
    n INTEGER;
BEGIN
    counts := coalesce(counts, '{}');
    IF buckets IS NULL THEN
        RETURN counts;
    END IF;
    FOREACH b IN ARRAY buckets LOOP
        n := cardinality(counts);
        i := 1;
        WHILE i <= n AND (counts[i] >> 32) < b LOOP
            i := i + 1;
        END LOOP;
        IF i <= n AND (counts[i] >> 32) = b THEN
            counts[i] := counts[i] + 1;
        ELSE
            counts := counts[1:i - 1] || ((b::BIGINT << 32) + 1) || counts[i:n];
        END IF;
    END LOOP;
    RETURN counts;
END
$$;

-- Two histograms as the table holds them, added bucket by bucket; NULL is
-- empty.
CREATE FUNCTION destination_stats_merge(a BIGINT[], b BIGINT[])
RETURNS BIGINT[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    e BIGINT;
    i INTEGER;
    n INTEGER;
BEGIN
    a := coalesce(a, '{}');
    IF b IS NULL THEN
        RETURN a;
    END IF;
    FOREACH e IN ARRAY b LOOP
        n := cardinality(a);
        i := 1;
        WHILE i <= n AND (a[i] >> 32) < (e >> 32) LOOP
            i := i + 1;
        END LOOP;
        IF i <= n AND (a[i] >> 32) = (e >> 32) THEN
            a[i] := a[i] + (e & 4294967295);
        ELSE
            a := a[1:i - 1] || e || a[i:n];
        END IF;
    END LOOP;
    RETURN a;
END
$$;

-- The sum of many rows' histograms (the Pruner folding an hour's slots).
CREATE AGGREGATE destination_stats_sum(BIGINT[]) (
    SFUNC = destination_stats_merge,
    STYPE = BIGINT[]
);
