DROP INDEX tasks_tenant_turns;
