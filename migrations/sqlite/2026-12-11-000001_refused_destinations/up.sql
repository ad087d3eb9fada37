-- Why the address policy of a runtime refuses the destination, and since
-- when (see the PostgreSQL migration of the same name).
ALTER TABLE destinations ADD COLUMN refused TEXT;
ALTER TABLE destinations ADD COLUMN refused_at INTEGER;
