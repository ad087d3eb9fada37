ALTER TABLE destinations DROP COLUMN refused_at;
ALTER TABLE destinations DROP COLUMN refused;
