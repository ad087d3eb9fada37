-- Every move of a task into `failed`, kept as a record for the reports:
-- the console's failure chart and failures by reason, each destination's
-- failures of the last hour, and `remit status`'s failures of the last day
-- by reason and by destination. A replay takes a task out of `failed`, and
-- its row no longer says it failed; this log still does, so a failure an
-- operator has replayed stays in the hour it happened.
--
-- Written by the trigger that records failures to announce (one more small
-- insert per failure; a claim or a delivery pays nothing more) and pruned
-- with the destinations' hours (retention.stats_keep_days). It holds no
-- tenant, reminder or payload, only what the reports count by.
SET LOCAL lock_timeout = '1s';

CREATE TABLE task_failures (
    task_id UUID NOT NULL,
    failed_at TIMESTAMPTZ NOT NULL,
    region TEXT NOT NULL,
    destination_id TEXT NOT NULL,
    failure_reason TEXT NOT NULL
);
CREATE INDEX task_failures_by_time ON task_failures (region, failed_at);

-- The failures from before this migration are copied by the next one,
-- once this one has committed and the trigger below records every new
-- failure: copied here, in this transaction's snapshot, a failure committed
-- by another session while the copy ran would be in neither.

-- Replacing the function takes no lock on `tasks`; its trigger (and the
-- trigger's WHEN) stay as they are.
CREATE OR REPLACE FUNCTION failures_to_announce_recorded() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO failures_to_announce (task_id, failed_at, region, destination_id, tenant_id,
                                      reminder_id, failure_reason, attempt_count, not_before)
    VALUES (NEW.id, NEW.finalized_at, NEW.region, NEW.destination_id, NEW.tenant_id,
            NEW.reminder_id, NEW.failure_reason, NEW.attempt_count, NEW.not_before)
    ON CONFLICT DO NOTHING;
    INSERT INTO task_failures (task_id, failed_at, region, destination_id, failure_reason)
    VALUES (NEW.id, NEW.finalized_at, NEW.region, NEW.destination_id,
            coalesce(NEW.failure_reason, 'unknown'));
    RETURN NULL;
END
$$;
