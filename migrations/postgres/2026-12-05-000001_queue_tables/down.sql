DROP INDEX tasks_finalized;
ALTER TABLE destinations RESET (fillfactor);
ALTER TABLE tasks RESET (fillfactor);
