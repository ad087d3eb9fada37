ALTER TABLE tasks DROP COLUMN attempts_before_replay;
