-- 0018: an agent id whose machine came back under a new agent id (its
-- work dir did not survive the power cycle, package power's newid.go) is
-- kept, as a record with replaced_by set to the new id, until nothing can
-- refer to it: a restarted or newly leading sparkpack then still tells a
-- job whose plan names the old id to place it again at once, instead of
-- waiting for the old id until the power-on timeout.
ALTER TABLE agent_power ADD COLUMN replaced_by text NOT NULL DEFAULT '';
