-- When a destination's last error happened. The error is now cleared by
-- the first success after it (the destination has recovered), so what the
-- console and the API show as a destination's last error is one that still
-- stands, with its time. Rows from before this migration keep their error
-- without a time until their next attempt writes one or clears it.
--
-- A nullable column without a default is written to the catalog only: the
-- ACCESS EXCLUSIVE lock is held for an instant, but every claim, token
-- take and finish locks these rows, so wait at most a second for it, then
-- fail, to be tried again by `remit migrate`.
SET LOCAL lock_timeout = '1s';
ALTER TABLE destinations ADD COLUMN last_error_at TIMESTAMPTZ;
