-- A narrow queue beside the durable task rows.
--
-- Until now the claim found work through partial indexes of `tasks` that
-- hold the rows not yet ended (`finalized_at IS NULL`), and retention and
-- the reports found ended rows through one keyed on `finalized_at`. So a
-- row's end changed an indexed column and could not be a HOT update: the
-- finish wrote a whole new version of the row into six indexes, more than
-- half of the WAL a delivery writes.
--
-- Here the keys the claim reads live in `task_queue`, one small row per
-- task that has not ended, and an end is recorded in `task_ends`, an
-- append-only log keyed by region and time. No index of `tasks` names a
-- column a claim or a finish writes, so both update the row in place (HOT,
-- when its page has room); the finish deletes the task's queue row (a
-- delete writes no index entry) and appends one small end row.
--
-- Triggers keep both tables true to `tasks`, whichever statement changes
-- it (schedule, claim, finish, hand-back, replay, import, retention, a hand
-- edit): one call per statement, over the rows it changed (transition
-- tables), so a claim or finish of 64 rows costs one call, not 64.

-- One row per task that has not ended, with the columns a claim orders and
-- filters by. `available_at` follows the task's (a retry or hand-back
-- moves it); a claim does not change it, so a leased task keeps the entry
-- it was claimed at and the claim reads past it until its lease expires.
-- `retrying` is whether the task waits for a retry (`retry_wait`); a
-- claim leaves it as it was, so the reports can count waiting tasks from
-- this table and read task rows only for those due or in flight.
-- No foreign key: checking one would lock the task row on every write,
-- and the triggers keep the two in step.
CREATE TABLE task_queue (
    task_id UUID PRIMARY KEY,
    region TEXT NOT NULL,
    destination_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    available_at TIMESTAMPTZ NOT NULL,
    not_before TIMESTAMPTZ NOT NULL,
    ordering_key TEXT,
    retrying BOOLEAN NOT NULL
);

-- The destination walk and each destination's due rows, oldest first.
CREATE INDEX task_queue_due ON task_queue (region, destination_id COLLATE "C", available_at);
-- Tenants take turns within a destination.
CREATE INDEX task_queue_tenant_turns
    ON task_queue (region, destination_id COLLATE "C", tenant_id COLLATE "C", available_at);
-- Ordering lines: the rows of a line that have not ended, in line order.
CREATE INDEX task_queue_lines ON task_queue (destination_id, ordering_key, not_before, task_id)
    WHERE ordering_key IS NOT NULL;

-- One row per end (delivered or failed), appended when a task ends. A
-- replayed task that ends again gets a second row; the first then no
-- longer matches its task's `finalized_at`, and every reader checks that
-- it does. Retention deletes a task's rows with the task, and stale rows
-- once they are older than its cutoff.
CREATE TABLE task_ends (
    task_id UUID NOT NULL,
    region TEXT NOT NULL,
    finalized_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX task_ends_by_time ON task_ends (region, finalized_at);

CREATE FUNCTION task_queue_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at,
                            not_before, ordering_key, retrying)
    SELECT n.id, n.region, n.destination_id, n.tenant_id, n.available_at, n.not_before,
           n.ordering_key,
           -- (A leased task imported: whether it was tried before this lease.)
           n.state = 'retry_wait'
               OR (n.state = 'leased' AND n.attempt_count - 1 > n.attempts_before_replay)
    FROM new_rows n WHERE n.finalized_at IS NULL;
    INSERT INTO task_ends (task_id, region, finalized_at)
    SELECT n.id, n.region, n.finalized_at FROM new_rows n WHERE n.finalized_at IS NOT NULL;
    RETURN NULL;
END
$$;

-- Most updates (a claim, an extension) change none of the queue's columns
-- and end nothing: each query below then reads the statement's rows and
-- writes nothing.
CREATE FUNCTION task_queue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Ended: out of the queue, into the log.
    DELETE FROM task_queue q USING new_rows n
    WHERE q.task_id = n.id AND n.finalized_at IS NOT NULL;
    INSERT INTO task_ends (task_id, region, finalized_at)
    SELECT n.id, n.region, n.finalized_at
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.finalized_at IS NOT NULL AND o.finalized_at IS DISTINCT FROM n.finalized_at;
    -- Live and moved (a retry, a hand-back), or waiting for a retry now
    -- and not before, or the other way round (a leased task keeps its
    -- mark: the claim changes nothing here).
    UPDATE task_queue q
    SET region = n.region, destination_id = n.destination_id, tenant_id = n.tenant_id,
        available_at = n.available_at, not_before = n.not_before,
        ordering_key = n.ordering_key,
        retrying = CASE WHEN n.state = 'leased' THEN q.retrying
                        ELSE n.state = 'retry_wait' END
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE q.task_id = n.id AND n.finalized_at IS NULL
      AND ((o.region, o.destination_id, o.tenant_id, o.available_at, o.not_before,
            o.ordering_key)
           IS DISTINCT FROM (n.region, n.destination_id, n.tenant_id, n.available_at,
                             n.not_before, n.ordering_key)
           OR (n.state <> 'leased' AND q.retrying <> (n.state = 'retry_wait')));
    -- Live again (a replay).
    INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at,
                            not_before, ordering_key, retrying)
    SELECT n.id, n.region, n.destination_id, n.tenant_id, n.available_at, n.not_before,
           n.ordering_key, n.state = 'retry_wait'
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.finalized_at IS NULL AND o.finalized_at IS NOT NULL
    ON CONFLICT (task_id) DO NOTHING;
    RETURN NULL;
END
$$;

-- A deleted task leaves the queue. Its end rows stay until retention's
-- cutoff passes them (retention deletes the ended tasks it prunes and their
-- end rows itself; a lookup by task here would need another index).
CREATE FUNCTION task_queue_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM task_queue q USING old_rows o WHERE q.task_id = o.id;
    RETURN NULL;
END
$$;

CREATE FUNCTION task_queue_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE task_queue, task_ends;
    RETURN NULL;
END
$$;

CREATE TRIGGER task_queue_inserted AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION task_queue_inserted();
CREATE TRIGGER task_queue_updated AFTER UPDATE ON tasks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION task_queue_updated();
CREATE TRIGGER task_queue_deleted AFTER DELETE ON tasks
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION task_queue_deleted();
CREATE TRIGGER task_queue_truncated AFTER TRUNCATE ON tasks
    FOR EACH STATEMENT EXECUTE FUNCTION task_queue_truncated();

-- The rows there are now.
INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at, not_before,
                        ordering_key, retrying)
SELECT id, region, destination_id, tenant_id, available_at, not_before, ordering_key,
       state = 'retry_wait' OR (state = 'leased' AND attempt_count - 1 > attempts_before_replay)
FROM tasks WHERE finalized_at IS NULL;
INSERT INTO task_ends (task_id, region, finalized_at)
SELECT id, region, finalized_at FROM tasks WHERE finalized_at IS NOT NULL;
ANALYZE task_queue;
ANALYZE task_ends;

-- Nothing indexes what a claim or a finish writes any more.
DROP INDEX tasks_live;
DROP INDEX tasks_tenant_turns;
DROP INDEX tasks_ordered_live;
DROP INDEX tasks_finalized;

-- A delivery now writes two versions of its task row in place (the claim's
-- and the finish's), and a page's rows are claimed and finished about
-- together: half of each page is kept free for them (new pages only).
ALTER TABLE tasks SET (fillfactor = 50);
