-- The audit log (see the PostgreSQL migration of the same name): one row
-- per admin action, written in the action's `BEGIN IMMEDIATE` transaction.
-- AUTOINCREMENT never hands out a number again, even after retention
-- deleted the newest rows, so the id only grows. A trigger refuses every
-- UPDATE; retention is the only DELETE.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          INTEGER NOT NULL,
    actor_kind  TEXT NOT NULL CHECK (actor_kind IN ('token', 'bootstrap', 'cli', 'system')),
    actor_id    TEXT CHECK (actor_id <> ''),
    actor_name  TEXT,
    action      TEXT NOT NULL CHECK (action <> ''),
    target_kind TEXT NOT NULL CHECK (target_kind <> ''),
    target_id   TEXT NOT NULL,
    region      TEXT,
    before      TEXT CHECK (before IS NULL OR json_valid(before)),
    after       TEXT CHECK (after IS NULL OR json_valid(after)),
    CHECK ((actor_kind IN ('token', 'cli')) = (actor_id IS NOT NULL)),
    CHECK (actor_kind = 'token' OR actor_name IS NULL)
) STRICT;
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_target ON audit_log (target_kind, target_id, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_actor ON audit_log (actor_id, id);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: UPDATE refused');
END;
