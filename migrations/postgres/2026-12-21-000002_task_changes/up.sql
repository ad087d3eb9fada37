-- An operator's changes to a task after scheduling it: cancel, reschedule,
-- erase its payload.
--
-- `cancelled_at`/`cancelled_by`: who asked for the cancel, and when (kept,
-- as a record, when the attempt in flight delivered the task anyway).
-- `waiting_change`/`move_to`: a cancel or a move asked while an attempt
-- was in flight. It waits for the attempt to end; the claim passes the row
-- by until then, and the settle applies it (`Changes::settle_changes`).
-- `payload_erased_at`: the payload's sealed bytes are gone.
--
-- Every new column is NULL on existing rows and their constraints hold
-- there: NOT VALID spares a scan of the table under this migration's lock.
--
-- The lock is ACCESS EXCLUSIVE, held for an instant; but while it waits
-- for a long reader (a dump, a report) every claim and finish would queue
-- behind it. So it waits at most a second and the migration fails and is
-- tried again by `remit migrate`, which names what holds the lock.
SET LOCAL lock_timeout = '1s';
ALTER TABLE tasks
    ADD COLUMN cancelled_at TIMESTAMPTZ,
    ADD COLUMN cancelled_by TEXT,
    ADD COLUMN waiting_change TEXT,
    ADD COLUMN move_to TIMESTAMPTZ,
    ADD COLUMN payload_erased_at TIMESTAMPTZ,
    ADD CONSTRAINT tasks_waiting_change_check
        CHECK (waiting_change IN ('cancel', 'move')
               AND (waiting_change = 'cancel' OR move_to IS NOT NULL)) NOT VALID,
    ADD CONSTRAINT tasks_cancelled_check
        CHECK (state <> 'cancelled' OR (cancelled_at IS NOT NULL AND cancelled_by IS NOT NULL))
        NOT VALID,
    -- Terminal <=> finalized, with the new terminal state.
    DROP CONSTRAINT tasks_check4,
    ADD CONSTRAINT tasks_ended_check
        CHECK ((state IN ('delivered', 'failed', 'cancelled')) = (finalized_at IS NOT NULL))
        NOT VALID,
    -- An erased payload's row is deleted; the task keeps its reference as
    -- a record, so it no longer points at a row.
    DROP CONSTRAINT tasks_payload_ref_fkey;
