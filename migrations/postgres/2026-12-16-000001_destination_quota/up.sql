-- What the destination's receiver last announced of its quota (its
-- RateLimit or X-RateLimit-* fields): `quota_remaining` requests, less
-- the tokens granted since, until `quota_resets_at`; `quota_limit` when it
-- named one, and when it was learned. Token takes pace the destination by
-- it until it resets. Written only when a response announced a quota, so
-- a receiver that announces nothing costs nothing; all or none are set.
ALTER TABLE destinations
    ADD COLUMN quota_remaining DOUBLE PRECISION CHECK (quota_remaining >= 0),
    ADD COLUMN quota_resets_at TIMESTAMPTZ,
    ADD COLUMN quota_limit BIGINT CHECK (quota_limit >= 0),
    ADD COLUMN quota_learned_at TIMESTAMPTZ,
    ADD CONSTRAINT destinations_quota_whole CHECK (
        (quota_remaining IS NULL) = (quota_resets_at IS NULL)
        AND (quota_remaining IS NULL) = (quota_learned_at IS NULL));
