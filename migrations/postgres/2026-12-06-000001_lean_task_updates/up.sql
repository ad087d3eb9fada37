-- Every claim and every finish writes a new version of the task's row, and
-- no such update can be HOT: `state` decides membership of the partial
-- indexes the claim reads. Each new version is entered into every index of
-- the table, and each attempt row was checked against `tasks` by a trigger.
-- These three guarded nothing the code does not already guarantee, and cost
-- about a third of what the database spends per delivery:
--
-- * `idempotency_key` is derived from the task's id (the primary key), so it
--   is unique because the id is.
-- * `payload_ref` is a fresh random UUID written only with its own task, in
--   the same transaction; the foreign key to `payloads` stays, so it still
--   names a real payload.
-- * An attempt row is written only in the statement that moves its task (or,
--   for a refused finish, right after reading that the task exists), and
--   retention deletes a task's attempts before the task. (A refused finish
--   logged in the very moment retention removes its task would leave that
--   one attempt row behind; retention only takes tasks ended days ago.)
ALTER TABLE tasks DROP CONSTRAINT tasks_idempotency_key_key;
ALTER TABLE tasks DROP CONSTRAINT tasks_payload_ref_key;
ALTER TABLE attempts DROP CONSTRAINT attempts_task_id_fkey;
