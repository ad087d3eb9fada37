-- A replay keeps attempt_count (so the attempt log's numbers keep rising)
-- and records here how many attempts came before it; the retry budget
-- counts only the attempts since. Expand-only: older code never names the
-- column, and the default keeps its rows valid.
ALTER TABLE tasks
    ADD COLUMN attempts_before_replay INTEGER NOT NULL DEFAULT 0,
    ADD CONSTRAINT tasks_attempts_before_replay_check
        CHECK (attempts_before_replay >= 0 AND attempts_before_replay <= attempt_count);
