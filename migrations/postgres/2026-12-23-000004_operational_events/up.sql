-- Operational events that reach a person: besides a destination disabled
-- or enabled, the region's alert check (`store::Alerts`) writes to the
-- outbox a destination failing (its streak at a level of its disable
-- threshold) and recovered, and, coalesced per destination, tasks that
-- ended failed, reminders late against their deadline, and reminders
-- whose retry horizon is about to run out.
--
-- Every lock here is held for an instant, but while it waits for a long
-- reader every write to the table would queue behind it: it waits at most
-- a second and the migration fails, to be tried again by `remit migrate`.
--
-- Rolling out: a process of an older build reads an event of a new kind as
-- a corrupt row and its relay logs that and turns nothing; the new
-- processes of the region turn those events. Upgrade every process of a
-- region together.
SET LOCAL lock_timeout = '1s';

-- The outbox: the new kinds, and `data`, the body's `data` object as the
-- check wrote it (JSON text); NULL for a disable or an enable, whose body
-- the relay makes from the other columns. The outbox is small (its rows
-- are deleted once scheduled), so the new CHECK is checked at once.
ALTER TABLE destination_events
    ADD COLUMN data TEXT,
    DROP CONSTRAINT destination_events_kind_check,
    ADD CONSTRAINT destination_events_kind_check CHECK (kind IN (
        'destination.disabled', 'destination.enabled', 'destination.failing',
        'destination.recovered', 'task.failed', 'reminder.late',
        'reminder.horizon_ending'));

-- Each move of a task into `failed`, recorded in the transaction that
-- made it (the trigger below, whichever statement it was: a finish, a
-- hand-back past the horizon, a disabled destination's task settled), with
-- what its event says of it, and deleted by the check that announced it
-- (or, without an events receiver, dropped). No foreign key: checking one
-- would lock the task's row in every failing finish, and a task pruned
-- before the check still gets its event.
CREATE TABLE failures_to_announce (
    task_id UUID NOT NULL,
    failed_at TIMESTAMPTZ NOT NULL,
    region TEXT NOT NULL,
    destination_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    reminder_id TEXT NOT NULL,
    failure_reason TEXT NOT NULL,
    attempt_count INTEGER NOT NULL,
    not_before TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (task_id, failed_at)
);
CREATE INDEX failures_to_announce_by_region
    ON failures_to_announce (region, failed_at, task_id);

CREATE FUNCTION failures_to_announce_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO failures_to_announce (task_id, failed_at, region, destination_id, tenant_id,
                                      reminder_id, failure_reason, attempt_count, not_before)
    VALUES (NEW.id, NEW.finalized_at, NEW.region, NEW.destination_id, NEW.tenant_id,
            NEW.reminder_id, NEW.failure_reason, NEW.attempt_count, NEW.not_before)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

-- A row trigger whose WHEN PostgreSQL tests without calling the function:
-- a claim or a delivery costs only that test; a failure, one small insert.
CREATE TRIGGER failures_to_announce_recorded AFTER UPDATE ON tasks
    FOR EACH ROW
    WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM 'failed')
    EXECUTE FUNCTION failures_to_announce_recorded();

-- What the check keeps of each destination: the last (`not_before`, task)
-- its late check looked at, and the failure streak it announced as
-- failing (when its first failure ended) with the highest level announced.
CREATE TABLE destination_alerts (
    destination_id TEXT PRIMARY KEY REFERENCES destinations (id) ON DELETE CASCADE,
    region TEXT NOT NULL,
    late_checked_not_before TIMESTAMPTZ,
    late_checked_task UUID,
    failing_since TIMESTAMPTZ,
    failing_percent SMALLINT CHECK (failing_percent BETWEEN 1 AND 100),
    CHECK ((late_checked_not_before IS NULL) = (late_checked_task IS NULL)),
    CHECK ((failing_since IS NULL) = (failing_percent IS NULL))
);

-- One coalesced kind of one destination: when its last event went out,
-- and what waits for the window to pass (JSON text: a count, when the
-- first was found, a sample, failures by reason).
CREATE TABLE alert_windows (
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('task.failed', 'reminder.late', 'reminder.horizon_ending')),
    region TEXT NOT NULL,
    last_sent_at TIMESTAMPTZ,
    held TEXT,
    PRIMARY KEY (destination_id, kind)
);

-- The last (`retry_horizon_at`, task) the region's horizon check looked at.
CREATE TABLE region_alerts (
    region TEXT PRIMARY KEY,
    horizon_checked_at TIMESTAMPTZ NOT NULL,
    horizon_checked_task UUID NOT NULL
);
