-- A resource's name as a caller hears it ("Marais, 12 rue des Rosiers"):
-- the voice tools speak it in place of the id. Optional; without it a line
-- says "the property" or "the agent".
ALTER TABLE resource ADD COLUMN display_name text CHECK (length(display_name) BETWEEN 1 AND 200);
