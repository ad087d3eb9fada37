-- Numbered tokens, so an announced quota counts the requests already on
-- their way. `rate_granted` counts the tokens the destination's bucket
-- has ever granted (each take adds what it grants, in the same UPDATE):
-- a token's number is the count just after it was granted.
-- `quota_token` is the number of the token whose request's answer
-- announced the stored quota: the tokens numbered above it went out after
-- that request, so the receiver had not counted them when it answered
-- (they are taken off what it announced), and an answer to an earlier
-- request is an older view of the receiver's window (it is ignored).
-- NULL for a quota learned before this migration.
-- `quota_window_ms` is the window the receiver's policy named: at the
-- reset the quota renews once, `quota_limit` over the window that holds
-- the take's now; the renewing take clears it.
ALTER TABLE destinations
    ADD COLUMN rate_granted BIGINT NOT NULL DEFAULT 0 CHECK (rate_granted >= 0),
    ADD COLUMN quota_token BIGINT CHECK (quota_token >= 0),
    ADD COLUMN quota_window_ms BIGINT CHECK (quota_window_ms > 0),
    ADD CONSTRAINT destinations_quota_token_with_quota CHECK (
        quota_token IS NULL OR quota_remaining IS NOT NULL),
    ADD CONSTRAINT destinations_quota_window_with_limit CHECK (
        quota_window_ms IS NULL OR (quota_limit IS NOT NULL AND quota_remaining IS NOT NULL));
