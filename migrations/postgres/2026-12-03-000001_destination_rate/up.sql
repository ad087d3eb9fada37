-- A token bucket per destination, shared by every process of the region,
-- so a destination's configured rate holds however many consumers run.
-- Expand-only: nullable columns that older code ignores.
ALTER TABLE destinations
    ADD COLUMN rate_tokens DOUBLE PRECISION,
    ADD COLUMN rate_refilled_at TIMESTAMPTZ;
