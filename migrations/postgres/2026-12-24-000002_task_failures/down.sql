SET LOCAL lock_timeout = '1s';
CREATE OR REPLACE FUNCTION failures_to_announce_recorded() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO failures_to_announce (task_id, failed_at, region, destination_id, tenant_id,
                                      reminder_id, failure_reason, attempt_count, not_before)
    VALUES (NEW.id, NEW.finalized_at, NEW.region, NEW.destination_id, NEW.tenant_id,
            NEW.reminder_id, NEW.failure_reason, NEW.attempt_count, NEW.not_before)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
DROP TABLE task_failures;
