ALTER TABLE destinations DROP COLUMN refused, DROP COLUMN refused_at;
