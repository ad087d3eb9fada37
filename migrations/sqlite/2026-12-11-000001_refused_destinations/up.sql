-- Why the address policy of a runtime refused the destination, and when
-- last (see the PostgreSQL migration of the same name).
ALTER TABLE destinations ADD COLUMN refused TEXT;
ALTER TABLE destinations ADD COLUMN refused_at INTEGER;
