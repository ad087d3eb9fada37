-- Tenants take turns within a destination: a claim steps through this
-- index one tenant at a time and reads each tenant's oldest rows from it,
-- so a tenant with nothing live at the destination costs it nothing.
CREATE INDEX tasks_tenant_turns
    ON tasks (region, destination_id, tenant_id, available_at, seq)
    WHERE finalized_at IS NULL;
