-- The jobs of another action than `replay` go: a build without this
-- column would take them for replays.
DELETE FROM replay_jobs WHERE action <> 'replay';
ALTER TABLE replay_jobs DROP COLUMN action;
