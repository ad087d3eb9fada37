-- Tenants take turns within a destination.
--
-- A claim splits each destination's share between the tenants with due
-- work there. It finds them by stepping through this index one tenant at a
-- time (a skip scan, as it steps through `tasks_live` one destination at a
-- time), and reads each tenant's oldest rows from it, so a tenant with
-- nothing live at the destination costs the claim nothing.
--
-- The claim's update stays HOT: it writes none of these columns, and
-- membership follows `finalized_at`, which only a row's end sets. Inserts,
-- retries and ends write one more index entry each.
CREATE INDEX tasks_tenant_turns
    ON tasks (region, destination_id COLLATE "C", tenant_id COLLATE "C", available_at)
    WHERE finalized_at IS NULL;
