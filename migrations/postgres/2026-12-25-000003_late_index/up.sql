-- The late check's reads: each destination's live tasks not yet announced
-- late, by (`not_before`, task), from (destination, false); and the
-- console's oldest live task of a destination, one probe on each side of
-- the mark. A claim writes nothing here; a task leaves it when it ends (its
-- queue row is deleted), and moves within it when announced (the check's
-- one write). It takes the place of `task_queue_late_check` (dropped
-- next). Built without blocking writes (see metadata.toml); one
-- statement, as an index built concurrently must be. A build that failed
-- halfway leaves an invalid index of this name: `remit migrate` drops it
-- before it runs this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_queue_late
    ON task_queue (destination_id, late_seen, not_before, task_id)
