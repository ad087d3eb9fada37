-- The audit log: one row for every admin action (a token made or revoked,
-- a destination registered, disabled, enabled or given a new secret, a
-- replay, a cancel, an erasure, a bulk job, an import, a rekey), written
-- in the transaction of the action itself, so an action never commits
-- without its row and a rolled-back one leaves none.
--
-- Who: `actor_kind` is `token` (`actor_id` the token's id, `actor_name`
-- its name), `bootstrap` (the configured `api.token`), `cli` (`actor_id`
-- the operating-system user of the `remit` command line) or `system`.
-- `before` and `after` hold the target's settings, never a secret's value.
--
-- Append-only: a trigger refuses every UPDATE (and TRUNCATE); retention
-- (`remit prune`, the pruner) is the only DELETE, of rows older than
-- `retention.audit_keep_days`. The identity gives each row a number that
-- grows with every insert, the cursor of `GET /v1/audit`'s pages.
--
-- A new table, empty: nothing waits on this migration.
CREATE TABLE audit_log (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL,
    actor_kind  TEXT NOT NULL CHECK (actor_kind IN ('token', 'bootstrap', 'cli', 'system')),
    actor_id    TEXT CHECK (actor_id <> ''),
    actor_name  TEXT,
    action      TEXT NOT NULL CHECK (action ~ '^[a-z_]+(\.[a-z_]+)?$'),
    target_kind TEXT NOT NULL CHECK (target_kind ~ '^[a-z_]+$'),
    target_id   TEXT NOT NULL,
    region      TEXT CHECK (region ~ '^[a-z][a-z0-9-]{0,31}$'),
    before      JSONB,
    after       JSONB,
    CHECK ((actor_kind IN ('token', 'cli')) = (actor_id IS NOT NULL)),
    CHECK (actor_kind = 'token' OR actor_name IS NULL)
);
-- Retention's walk and the time filters.
CREATE INDEX audit_log_at ON audit_log (at);
-- The filters a person uses most, newest first.
CREATE INDEX audit_log_target ON audit_log (target_kind, target_id, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_actor ON audit_log (actor_id, id);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
