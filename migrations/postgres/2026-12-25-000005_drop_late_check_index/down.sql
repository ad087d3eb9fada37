-- The alert check's late reminders: each destination's tasks that have
-- not ended, by (`not_before`, task), which the check walks from the last
-- one it looked at to `late_after` ago. Only live tasks are here, so every
-- row it reads is one it reports. A claim writes nothing here; a retry or
-- a hand-back, which move the row's `available_at` and so write its index
-- entries already, writes one more. Built without blocking writes (see
-- metadata.toml); one statement, as an index built concurrently must be. A
-- build that failed halfway leaves an invalid index of this name: `remit
-- migrate` drops it before it runs this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_queue_late_check
    ON task_queue (destination_id, not_before, task_id);
