-- PostgreSQL cannot drop a value from an ENUM; the down of the next
-- migration turns every cancelled row back into a failed one, so the value
-- stays unused.
SELECT 1;
