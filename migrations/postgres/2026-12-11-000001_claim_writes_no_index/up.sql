-- A claim rewrites no index entry.
--
-- The claim moves a row to `leased` and writes its lease (state,
-- lease_token, lease_owner, lease_expires_at, attempt_count, updated_at).
-- Until now `state` decided membership of the partial indexes the claim
-- reads, and `lease_expires_at` keyed one of them, so every claim wrote a
-- new entry into every index of `tasks` (PostgreSQL 15 counts a column
-- named in an index's key or WHERE clause as indexed). Here no index names
-- any of those columns:
--
-- * `tasks_live` holds every row that has not ended, keyed by region, then
--   destination (in byte order, the order the claim takes turns in), then
--   `available_at`. A leased row keeps its entry at the `available_at` it
--   had when it was claimed; the claim reads past the region's few rows in
--   flight and takes a lease only once it has expired. Membership follows
--   `finalized_at`, which only a row's end sets, so the claim's update is
--   HOT when the page has room (fillfactor 70 leaves it).
-- * The claim finds destinations with live work by stepping through
--   `tasks_live` one destination at a time (a skip scan), so destinations
--   without live tasks cost it nothing however many are registered.
-- * Retention's `tasks_finalized` filters on `finalized_at` too, instead
--   of on `state`.
--
-- A row's end (delivered, failed) and a retry still write index entries:
-- they change `available_at` or `finalized_at`, and an ended row must leave
-- `tasks_live` at once.
CREATE INDEX tasks_live ON tasks (region, destination_id COLLATE "C", available_at)
    WHERE finalized_at IS NULL;
DROP INDEX tasks_due;
DROP INDEX tasks_expired_leases;
DROP INDEX tasks_finalized;
CREATE INDEX tasks_finalized ON tasks (region, finalized_at)
    WHERE finalized_at IS NOT NULL;
