-- A task an operator cancelled ends in a state of its own. A value added to
-- an ENUM cannot be used in the transaction that adds it, so the columns
-- and constraints that name it come in the next migration.
--
-- Rolling out: readers first. A build older than this one reads a
-- `cancelled` row as a column it does not know (an error naming the row,
-- not a crash), so every process runs this build before anyone cancels
-- (docs/operations.md).
ALTER TYPE task_state ADD VALUE IF NOT EXISTS 'cancelled';
