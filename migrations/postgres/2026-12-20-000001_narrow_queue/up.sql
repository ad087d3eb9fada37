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
-- edit). Inserts and deletes call theirs once per statement, over the rows
-- it wrote (transition tables); updates, per row that changes something
-- here.

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
) WITH (
    -- Every delivery deletes a row here: vacuum after a fixed number of
    -- dead rows, however many are live, as for `tasks`.
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 20000,
    autovacuum_vacuum_cost_delay = 0
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

-- A row trigger, so that the updates that change nothing here (a claim,
-- an extension: the bulk of them) cost only its WHEN test, which
-- PostgreSQL evaluates without calling the function; the rest (an end, a
-- retry, a hand-back, a replay, a hand edit) run it once per row.
CREATE FUNCTION task_queue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.finalized_at IS NOT NULL THEN
        -- Ended: out of the queue, into the log.
        DELETE FROM task_queue WHERE task_id = NEW.id;
        IF OLD.finalized_at IS DISTINCT FROM NEW.finalized_at THEN
            INSERT INTO task_ends (task_id, region, finalized_at)
            VALUES (NEW.id, NEW.region, NEW.finalized_at);
        END IF;
    ELSIF OLD.finalized_at IS NOT NULL THEN
        -- Live again (a replay).
        INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at,
                                not_before, ordering_key, retrying)
        VALUES (NEW.id, NEW.region, NEW.destination_id, NEW.tenant_id, NEW.available_at,
                NEW.not_before, NEW.ordering_key, NEW.state = 'retry_wait')
        ON CONFLICT (task_id) DO NOTHING;
    ELSE
        -- Moved, or waiting for a retry now and not before (or the other
        -- way round); a leased task keeps its mark.
        UPDATE task_queue q
        SET region = NEW.region, destination_id = NEW.destination_id,
            tenant_id = NEW.tenant_id, available_at = NEW.available_at,
            not_before = NEW.not_before, ordering_key = NEW.ordering_key,
            retrying = CASE WHEN NEW.state = 'leased' THEN q.retrying
                            ELSE NEW.state = 'retry_wait' END
        WHERE q.task_id = NEW.id;
    END IF;
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
    FOR EACH ROW
    WHEN (OLD.finalized_at IS DISTINCT FROM NEW.finalized_at
          OR (OLD.region, OLD.destination_id, OLD.tenant_id, OLD.available_at,
              OLD.not_before, OLD.ordering_key)
             IS DISTINCT FROM (NEW.region, NEW.destination_id, NEW.tenant_id,
                               NEW.available_at, NEW.not_before, NEW.ordering_key)
          OR (NEW.state <> 'leased' AND OLD.state IS DISTINCT FROM NEW.state))
    EXECUTE FUNCTION task_queue_updated();
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
