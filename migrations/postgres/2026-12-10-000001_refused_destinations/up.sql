-- Set by a runtime whose address policy refuses the destination's URL (a
-- restart without the allowlist entry it needs, say): its tasks are held,
-- not failed one by one, and `remit status` shows why. Written again at
-- every hold, so `refused_at` is the last refusal and status lists only
-- recent ones. Not indexed: status reads it rarely, and a destination row
-- is updated often.
ALTER TABLE destinations ADD COLUMN refused TEXT, ADD COLUMN refused_at TIMESTAMPTZ;
