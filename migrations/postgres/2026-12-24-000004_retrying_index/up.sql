-- Each destination's tasks waiting for a retry, for the console's
-- destinations page and overview (refreshed every 5 seconds): without it
-- the count reads every live row of the region's queue, reminders months
-- ahead included. Only rows waiting for a retry are in it; a claim writes
-- nothing here, a retry (which moves the row's `available_at` and so
-- writes its index entries already) one entry more. Built without blocking
-- writes (see metadata.toml); one statement, as an index built
-- concurrently must be. A build that failed halfway leaves an invalid
-- index of this name: `remit migrate` drops it before it runs this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_queue_retrying
    ON task_queue (region, destination_id) WHERE retrying
