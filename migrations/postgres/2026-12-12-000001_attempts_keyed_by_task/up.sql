-- Every read of the attempt log goes through its task: a task's attempts in
-- order, the check whether a finish was already logged, retention's delete,
-- export. The id alone is never looked up; it orders a task's attempts and
-- comes from a sequence. So one index keyed (task_id, id) is the primary
-- key, instead of a key on id plus an index on (task_id, id): every attempt
-- written costs one index entry fewer.
--
-- Built in the migration's transaction, which holds finishes' attempt
-- inserts until it is built: on a large attempts table, migrate at a quiet
-- moment (docs/operations.md).
ALTER TABLE attempts DROP CONSTRAINT attempts_pkey;
DROP INDEX attempts_by_task;
ALTER TABLE attempts ADD CONSTRAINT attempts_pkey PRIMARY KEY (task_id, id);
