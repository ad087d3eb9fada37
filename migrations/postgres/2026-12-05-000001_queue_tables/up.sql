-- Queue-shaped tables: rows that are rewritten all day long, kept compact
-- for a service that runs for years.
--
-- A fillfactor leaves room on every page, so the new version of an updated
-- row can go on the page of the old one. When no indexed column changes,
-- that update is HOT: no index entry is written and the old version is
-- pruned from the page without a vacuum. Existing pages keep their packing
-- until rewritten; new and vacuumed pages get the room. SET changes only
-- the options it names: the autovacuum settings of the first migration
-- stay as they are.
--
-- Which updates of the delivery path can be HOT (PostgreSQL 15 counts a
-- column named in an index's key or in its WHERE clause as indexed):
--
-- destinations (indexes: id; id, region; region)
--   - the shared token bucket (rate_tokens, rate_refilled_at): HOT.
--   - a pause (paused_until, updated_at): HOT.
--   Every process of a region takes tokens from the same few rows many
--   times a second, so this table is where HOT pays most.
--
-- tasks (tasks_due keys available_at and filters on state;
--        tasks_expired_leases keys lease_expires_at and filters on state)
--   - the claim, every finish, a hand-back, a replay: never HOT, each
--     changes state.
--   - extend_lease: never HOT, it changes lease_expires_at.
--   The room still helps: the new version usually lands on the same page,
--   so an update dirties one heap page rather than two, and the page
--   prunes its dead versions on its own. Making these HOT would mean
--   indexes keyed differently from the claim's, which this migration does
--   not touch.
ALTER TABLE tasks SET (fillfactor = 70);
ALTER TABLE destinations SET (fillfactor = 50);

-- Retention finds terminal rows of a region oldest first. Partial, so a
-- row gets an entry once, when it ends (an update that ends a task is
-- never HOT anyway, see above), and live rows never appear in it.
CREATE INDEX tasks_finalized ON tasks (region, finalized_at)
    WHERE state IN ('delivered', 'failed');
