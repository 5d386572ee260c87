-- A resource's name in the languages the agency gives it (fr, zh), by
-- tag: the spoken lines and, later, the caller's messages say the
-- language's own name, and display_name in any other.
ALTER TABLE resource ADD COLUMN display_names jsonb CHECK (jsonb_typeof(display_names) = 'object');
