-- The jobs of another action than `replay` go: a build without this
-- column would take them for replays.
DELETE FROM replay_jobs WHERE action <> 'replay';
ALTER TABLE replay_jobs
    DROP CONSTRAINT replay_jobs_cancel_reason_check,
    DROP CONSTRAINT replay_jobs_action_check,
    DROP COLUMN action;
