-- A job's action: `replay` (every job made before this migration) sends
-- the matching failed tasks round again; `cancel` cancels the matching
-- tasks that have not ended, each as `POST /v1/tasks/{id}/cancel` would
-- (a task in flight after its attempt). Both walk the tasks in id order a
-- batch at a time, the cursor and the count (`replayed`: the tasks the
-- job acted on) moved in the batch's transaction under the job's lock.
-- A cancel job takes no failure reason.
--
-- A column with a constant default is added without rewriting the table,
-- and NOT VALID spares a scan of the rows already there (every one of
-- them `replay`, with the reason it had), so this migration holds its lock
-- only for a moment.
--
-- Rolling out: every process runs this build before anyone asks for a
-- bulk cancel. A build older than this one reads every job as a replay,
-- so one would replay the failed tasks a cancel job names.
ALTER TABLE replay_jobs
    ADD COLUMN action TEXT NOT NULL DEFAULT 'replay',
    ADD CONSTRAINT replay_jobs_action_check
        CHECK (action IN ('replay', 'cancel')) NOT VALID,
    ADD CONSTRAINT replay_jobs_cancel_reason_check
        CHECK (action <> 'cancel' OR failure_reason IS NULL) NOT VALID;
