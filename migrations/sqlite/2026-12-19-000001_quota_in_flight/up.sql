-- Numbered tokens, so an announced quota counts the requests already on
-- their way, and the window a quota renews to at its reset (see the
-- PostgreSQL migration of the same name).
ALTER TABLE destinations ADD COLUMN rate_granted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN quota_token INTEGER;
ALTER TABLE destinations ADD COLUMN quota_window_ms INTEGER;
